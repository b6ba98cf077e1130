/**
 * Built-in families of the global registry: process and Node.js runtime, `rest_client_requests_total` fed by every
 * KubeClient (real HTTP on 127.0.0.1), and the certwatcher counters fed by a real CertWatcher reading files.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { CertWatcher } from '../../packages/ctrlmetrics/src/certwatcher/certwatcher.js';
import { generateSelfSignedCertificate } from '../../packages/ctrlmetrics/src/certwatcher/selfsigned.js';
import { parseExposition, value } from '../controller/helpers/exposition.js';

const cleanups: Array<() => Promise<void> | void> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function scrape() {
  return parseExposition(await (await registry.collect()).text('text'));
}

test('process and Node.js runtime families are present with plausible values', async () => {
  const fams = await scrape();
  for (const name of [
    'process_cpu_seconds_total',
    'process_start_time_seconds',
    'process_resident_memory_bytes',
    'process_virtual_memory_bytes',
    'process_open_fds',
    'process_max_fds',
  ]) {
    assert.ok(fams.has(name), `${name} missing`);
  }
  assert.equal(fams.get('process_cpu_seconds_total')!.type, 'counter');
  const start = value(fams, 'process_start_time_seconds', {})!;
  assert.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 5, `start time ${start}`);
  assert.ok(value(fams, 'process_resident_memory_bytes', {})! > 1e6);
  assert.ok(value(fams, 'process_open_fds', {})! >= 3);
  assert.ok(fams.has('nodejs_eventloop_lag_seconds'));
  assert.ok(fams.has('nodejs_heap_size_used_bytes'));
  assert.ok(
    [...fams.keys()].every((n) => !/^nodejs_active_\w+_total$/.test(n)),
    'gauges named *_total are left out',
  );
  assert.equal(value(fams, 'nodejs_version_info', { version: process.version }), 1);
});

test('nodejs_active_resources counts active resources by type; a type no longer active stays, at 0', async () => {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const listening = value(await scrape(), 'nodejs_active_resources', { type: 'TCPServerWrap' });
  assert.ok(listening !== undefined && listening >= 1, `TCPServerWrap while listening: ${listening}`);
  server.close();
  await once(server, 'close');
  const active = process.getActiveResourcesInfo().filter((t) => t === 'TCPServerWrap').length;
  assert.equal(
    value(await scrape(), 'nodejs_active_resources', { type: 'TCPServerWrap' }),
    active,
    'the series stays with the count now',
  );
});

test('garbage collections are observed in nodejs_gc_duration_seconds by kind', async () => {
  let fams = await scrape();
  for (let round = 0; round < 50 && !fams.has('nodejs_gc_duration_seconds'); round++) {
    // young-generation garbage: a minor GC follows within a few rounds
    let junk: unknown[] = [];
    for (let i = 0; i < 200_000; i++) junk.push({ i });
    // eslint-disable-next-line no-useless-assignment -- dropped so the collector can free it before the next measurement
    junk = [];
    await new Promise((resolve) => setTimeout(resolve, 10));
    fams = await scrape();
  }
  const gc = fams.get('nodejs_gc_duration_seconds');
  assert.ok(gc, 'no GC observed after 50 rounds of garbage');
  assert.equal(gc.type, 'histogram');
  const kinds = new Set(gc.samples.map((s) => s.labels['kind']));
  assert.ok(
    [...kinds].every((k) => ['major', 'minor', 'incremental', 'weakcb'].includes(k)),
    [...kinds].join(),
  );
});

test('rest_client_requests_total counts each API response by code, host and method, and transport errors as <error>', async () => {
  const server = http.createServer((req, res) => {
    const status = req.url === '/missing' ? 404 : 200;
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', code: status }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new KubeClient({ server: `http://${host}` });
  cleanups.push(() => client.close());

  await client.raw('GET', '/api');
  await client.raw('GET', '/api');
  await client.raw('POST', '/missing', { body: {} });
  let fams = await scrape();
  assert.equal(value(fams, 'rest_client_requests_total', { code: '200', host, method: 'GET' }), 2);
  assert.equal(value(fams, 'rest_client_requests_total', { code: '404', host, method: 'POST' }), 1);
  assert.equal(fams.get('rest_client_requests_total')!.type, 'counter');

  // a port nothing listens on (just closed)
  const closed = http.createServer();
  closed.listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const deadHost = `127.0.0.1:${(closed.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const dead = new KubeClient({ server: `http://${deadHost}` });
  cleanups.push(() => dead.close());
  await assert.rejects(dead.raw('GET', '/api', { timeoutMs: 2000 }));
  fams = await scrape();
  assert.equal(value(fams, 'rest_client_requests_total', { code: '<error>', host: deadHost, method: 'GET' }), 1);
});

test('certwatcher_read_certificate_total and _errors_total count the reads of a real CertWatcher', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-certwatch-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const cert = await generateSelfSignedCertificate();
  await writeFile(join(dir, 'tls.crt'), cert.certPem);
  await writeFile(join(dir, 'tls.key'), cert.keyPem);
  const before = await scrape();
  const reads0 = value(before, 'certwatcher_read_certificate_total', {})!;
  const errors0 = value(before, 'certwatcher_read_certificate_errors_total', {})!;

  const watcher = new CertWatcher({
    certPath: join(dir, 'tls.crt'),
    keyPath: join(dir, 'tls.key'),
    pollIntervalMs: 60_000,
  });
  await watcher.readCertificate();
  await writeFile(join(dir, 'tls.key'), 'not a key');
  await assert.rejects(watcher.readCertificate());
  const fams = await scrape();
  assert.equal(value(fams, 'certwatcher_read_certificate_total', {}), reads0 + 2);
  assert.equal(value(fams, 'certwatcher_read_certificate_errors_total', {}), errors0 + 1);
});

/**
 * Prometheus itself (Debian's `prometheus`, a loopback port, temporary storage) scrapes the global registry served
 * with our content negotiation over plain HTTP on 127.0.0.1: it asks for OpenMetrics, gets it, ingests every sample,
 * and its query API returns awkward label values exactly as recorded. (The HTTPS endpoint with authentication is
 * covered by the server and e2e tests; this one isolates the exposition.)
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import * as promClient from 'prom-client';
import { Counter, Histogram, negotiateFormat, registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { ProcessGroup, eventually, freePort } from '../helpers/process.js';

const procs = new ProcessGroup();
let tmp = '';
let server: http.Server | undefined;
let promUrl = '';
const accepts: string[] = [];
const AWKWARD = ['say "hi"', 'C:\\dir', 'two\nlines', 'a,b=c', ''];

before(async () => {
  const odd = new Counter({ name: 'ingest_odd_total', help: 'odd "help" \\ here', labelNames: ['v'] });
  AWKWARD.forEach((v, i) => odd.labels(v).inc(i + 1));
  new Counter({ name: 'ingest_plain', help: 'a counter without the _total suffix' }).inc(3);
  const h = new Histogram({ name: 'ingest_seconds', help: 'h', buckets: [0.5, 1] });
  h.observe(0.7);
  new promClient.Gauge({ name: 'ingest_prom_client_gauge', help: 'from prom-client' }).set(42);

  server = http.createServer((req, res) => {
    void (async () => {
      accepts.push(String(req.headers.accept));
      const { format, contentType } = negotiateFormat(req.headers.accept);
      try {
        const snap = await registry.collect();
        res.writeHead(200, { 'Content-Type': contentType });
        for await (const chunk of snap.chunks(format)) res.write(chunk);
        res.end();
      } catch (err) {
        res.writeHead(500).end(String(err));
      }
    })();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;

  tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-ingest-'));
  await writeFile(
    join(tmp, 'prometheus.yml'),
    `global: { scrape_interval: 1s, scrape_timeout: 1s }\nscrape_configs:\n  - job_name: ingest\n    static_configs: [ { targets: ['${target}'] } ]\n`,
  );
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  const prom = procs.start('prometheus', 'prometheus', [
    `--config.file=${join(tmp, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(tmp, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ]);
  await prom.waitForOutput(/Server is ready to receive web requests/, 30_000);
});

after(async () => {
  await procs.stopAll();
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function promQuery(q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`, {
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as {
    data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
  };
  return body.data.result;
}

test('Prometheus asks for OpenMetrics, gets it, and ingests every sample with its label values intact', async () => {
  const up = await eventually(
    async () => {
      const r = await promQuery('up{job="ingest"}');
      return r.length === 1 && r[0].value[1] === '1' ? r : undefined;
    },
    'target up',
    30_000,
    250,
  );
  assert.equal(up.length, 1);
  assert.ok(
    accepts.some((a) => a.startsWith('application/openmetrics-text')),
    `Accept headers seen: ${accepts.join(' | ')}`,
  );

  const odd = await eventually(
    async () => {
      const r = await promQuery('ingest_odd_total');
      return r.length === AWKWARD.length ? r : undefined;
    },
    'ingest_odd_total series',
    15_000,
    250,
  );
  const got = new Map(odd.map((s) => [s.metric['v'] ?? '', Number(s.value[1])]));
  assert.deepEqual(got, new Map(AWKWARD.map((v, i) => [v, i + 1])));

  // a counter without `_total` is typed unknown in OpenMetrics (as client_golang writes it): the series keeps the
  // registered name, the same as when Prometheus negotiates text 0.0.4
  assert.equal((await promQuery('ingest_plain'))[0]?.value[1], '3');
  assert.deepEqual(await promQuery('ingest_plain_total'), []);
  assert.equal((await promQuery('ingest_prom_client_gauge'))[0]?.value[1], '42');
  const buckets = await promQuery('ingest_seconds_bucket');
  assert.deepEqual(buckets.map((b) => [b.metric['le'], b.value[1]]).sort(), [
    ['+Inf', '1'],
    ['0.5', '0'],
    ['1.0', '1'],
  ]);
});

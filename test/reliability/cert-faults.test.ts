/**
 * Certificate faults on a running endpoint: the serving pair lives in a Secret-volume-like directory
 * (`..data` symlink swap). Files deleted, truncated, replaced by a mismatched key: the last good pair keeps
 * serving and the error is counted in `certwatcher_read_certificate_errors_total`. 100 rotations under load:
 * every scrape answered, no keep-alive connection dropped, the last pair served at the end.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SecretVolume,
  fingerprintOf,
  generateCA,
  issueServingCert,
  presentedCertificate,
  type CertKeyPair,
} from '../helpers/certs.js';
import { startSecureEndpoint, scrape, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';
import { eventually, sleep } from '../helpers/process.js';

const logs = new LogCapture();
let tmp = '';
let ca: CertKeyPair;
let volume: SecretVolume;
let ep: SecureEndpoint;
let current: CertKeyPair;

async function pair(): Promise<CertKeyPair> {
  const p = await issueServingCert(ca, ['127.0.0.1', 'localhost']);
  logs.secret(p.keyPem.split('\n')[1]);
  return p;
}

async function counter(name: string): Promise<number> {
  const r = await scrape(ep.port);
  assert.equal(r.status, 200, r.body);
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(r.body);
  assert.ok(m, `${name} is not on /metrics`);
  return Number(m[1]);
}

async function served(): Promise<string> {
  return presentedCertificate('127.0.0.1', ep.port);
}

/** After a bad write: the error is counted, and the last good pair still serves new and old connections. */
async function expectKeptAfterError(errorsBefore: number, what: string): Promise<void> {
  await eventually(
    async () => (await counter('certwatcher_read_certificate_errors_total')) > errorsBefore,
    `${what}: read error counted`,
    15_000,
    200,
  );
  assert.equal(
    await served(),
    fingerprintOf(current.certPem),
    `${what}: the last good certificate is no longer served`,
  );
  assert.equal((await scrape(ep.port)).status, 200);
}

describe('certificate faults: the last good pair keeps serving', { timeout: 120_000 }, () => {
  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-certfaults-'));
    ca = await generateCA('cert-faults-ca');
    volume = new SecretVolume(join(tmp, 'certs'));
    current = await pair();
    await volume.write({ 'tls.crt': current.certPem, 'tls.key': current.keyPem });
    // no filter: these tests are about TLS; no API server is involved
    ep = await startSecureEndpoint(
      { server: 'https://127.0.0.1:1' },
      { metrics: { certDir: volume.dir, filterProvider: undefined } },
    );
    assert.equal(await served(), fingerprintOf(current.certPem));
  });

  after(async () => {
    await ep?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
    logs.restore();
    assert.deepEqual(logs.leaks(), [], 'a key reached a log line');
  });

  test('files deleted: kept, error counted; files back: the new pair serves', async () => {
    const errors = await counter('certwatcher_read_certificate_errors_total');
    await rm(join(volume.dir, 'tls.crt'));
    await rm(join(volume.dir, 'tls.key'));
    await expectKeptAfterError(errors, 'deleted');
    current = await pair();
    await volume.write({ 'tls.crt': current.certPem, 'tls.key': current.keyPem });
    await eventually(
      async () => (await served()) === fingerprintOf(current.certPem),
      'restored pair served',
      15_000,
      200,
    );
  });

  test('truncated certificate and truncated key: kept, error counted', async () => {
    for (const which of ['tls.crt', 'tls.key'] as const) {
      const errors = await counter('certwatcher_read_certificate_errors_total');
      const next = await pair();
      const files = { 'tls.crt': next.certPem, 'tls.key': next.keyPem };
      files[which] = files[which].slice(0, Math.floor(files[which].length / 2));
      await volume.write(files);
      await expectKeptAfterError(errors, `truncated ${which}`);
    }
  });

  test('a key that does not match the certificate: kept, error counted', async () => {
    const errors = await counter('certwatcher_read_certificate_errors_total');
    const [a, b] = [await pair(), await pair()];
    await volume.write({ 'tls.crt': a.certPem, 'tls.key': b.keyPem });
    await expectKeptAfterError(errors, 'mismatched key');
    // a good pair after the bad ones is picked up
    current = await pair();
    await volume.write({ 'tls.crt': current.certPem, 'tls.key': current.keyPem });
    await eventually(
      async () => (await served()) === fingerprintOf(current.certPem),
      'good pair after bad ones',
      15_000,
      200,
    );
  });

  test('100 rotations under load: every scrape answered, no keep-alive connection dropped', async (t) => {
    const pairs: CertKeyPair[] = [];
    for (let i = 0; i < 100; i++) pairs.push(await pair());
    const readsBefore = await counter('certwatcher_read_certificate_total');
    const agent = new https.Agent({ keepAlive: true, maxSockets: 4, rejectUnauthorized: false });
    let stop = false;
    let ok = 0;
    let fresh = 0;
    let newSockets = 0;
    const failures: string[] = [];
    const loop = async (keepAlive: boolean) => {
      while (!stop) {
        try {
          const r = await new Promise<number>((resolve, reject) => {
            const req = https.get(
              {
                host: '127.0.0.1',
                port: ep.port,
                path: '/metrics',
                agent: keepAlive ? agent : false,
                rejectUnauthorized: false,
                timeout: 10_000,
              },
              (res) => {
                res.resume();
                res.on('end', () => resolve(res.statusCode ?? 0));
                res.on('error', reject);
              },
            );
            req.on('socket', () => {
              if (keepAlive && !req.reusedSocket) newSockets++;
            });
            req.on('timeout', () => req.destroy(new Error('timeout')));
            req.on('error', reject);
          });
          if (r === 200 && keepAlive) ok++;
          else if (r === 200) fresh++;
          else failures.push(`status ${r}`);
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    };
    const loops = [...Array.from({ length: 4 }, () => loop(true)), ...Array.from({ length: 1 }, () => loop(false))];
    const t0 = Date.now();
    for (const p of pairs) {
      await volume.write({ 'tls.crt': p.certPem, 'tls.key': p.keyPem });
      // a pause longer than the watcher's debounce (100 ms) now and then, so many of the swaps become reloads
      if (pairs.indexOf(p) % 10 === 9) await sleep(150);
    }
    current = pairs[pairs.length - 1]!;
    await eventually(
      async () => (await served()) === fingerprintOf(current.certPem),
      'the last pair served',
      15_000,
      200,
    );
    stop = true;
    await Promise.all(loops);
    agent.destroy();
    const reads = (await counter('certwatcher_read_certificate_total')) - readsBefore;
    t.diagnostic(
      `100 rotations in ${Date.now() - t0} ms: ${ok} keep-alive + ${fresh} new-connection scrapes, ${newSockets} keep-alive sockets opened, ${reads} certificate reads, ${failures.length} failures`,
    );
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} scrapes failed`);
    assert.ok(ok > 100 && fresh > 10, `too few scrapes during the rotations: ${ok}/${fresh}`);
    assert.ok(newSockets <= 4, `keep-alive connections were dropped and re-opened: ${newSockets} sockets for 4 loops`);
    assert.ok(reads >= 5, `only ${reads} certificate reads for 100 rotations`);
  });
});

/**
 * The metrics server's listener over real sockets on 127.0.0.1: bind addresses, TLS versions, ALPN / HTTP/2,
 * certificates (self-signed, certDir with hot reload through a Secret-volume symlink swap, tlsOpts), routing,
 * header limits, plain HTTP and graceful stop. No filter here (see filter.test.ts for authentication).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { connect as tlsConnect } from 'node:tls';
import os from 'node:os';
import { join } from 'node:path';
import { generateCA, issueServingCert, type CertKeyPair } from '../../packages/envtest/src/pki.js';
import { Counter, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import {
  createMetricsServer,
  type MetricsOptions,
  type MetricsServer,
  type MetricsServerDeps,
} from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/util/log.js';
import { handshake, request, SecretDir, waitFor } from './helpers.js';
import { h2Get } from '../helpers/secure-endpoint.js';

const logs: string[] = [];
setLogSink((line) => logs.push(line));

const servers: MetricsServer[] = [];
const tmpDirs: string[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(tmpDirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function serve(opts: MetricsOptions = {}, deps: MetricsServerDeps = {}): Promise<MetricsServer> {
  const s = createMetricsServer({ bindAddress: '127.0.0.1:0', shutdownTimeoutMs: 2_000, ...opts }, deps);
  servers.push(s);
  await s.start();
  return s;
}

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(os.tmpdir(), 'ctrlmetrics-server-test-'));
  tmpDirs.push(d);
  return d;
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/** The value of a label-less sample in a text exposition (NaN when absent). */
function sample(exposition: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(exposition);
  return m ? Number(m[1]) : NaN;
}

let ca: CertKeyPair;
let pairA: CertKeyPair;
let pairB: CertKeyPair;
let pairC: CertKeyPair;
before(async () => {
  ca = await generateCA('metrics-test-ca');
  [pairA, pairB, pairC] = await Promise.all([
    issueServingCert(ca, ['localhost', '127.0.0.1']),
    issueServingCert(ca, ['localhost', '127.0.0.1']),
    issueServingCert(ca, ['localhost', '127.0.0.1']),
  ]);
});

describe('bind address', () => {
  test('"0" disables the server: nothing listens, start and stop succeed', async () => {
    const s = createMetricsServer({ bindAddress: '0' });
    await s.start();
    assert.equal(s.url, '');
    assert.equal(s.port, 0);
    s.addExtraHandler('/debug', () => undefined); // ignored with a warning, not an error
    await s.stop();
  });

  test('127.0.0.1:0 binds an ephemeral port and reports it', async () => {
    const s = await serve();
    assert.ok(s.port > 0);
    assert.equal(s.url, `https://127.0.0.1:${s.port}`);
    const r = await request(`${s.url}/metrics`);
    assert.equal(r.status, 200);
  });

  test('an invalid address is refused with a clear error', async () => {
    const s = createMetricsServer({ bindAddress: 'localhost' });
    await assert.rejects(s.start(), /invalid bind address "localhost": use host:port, :port or \[ipv6\]:port/);
  });

  test('a port in use is refused with a clear error', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const s = createMetricsServer({ bindAddress: `127.0.0.1:${port}` });
      await assert.rejects(s.start(), /cannot listen on 127\.0\.0\.1:\d+: the address is already in use/);
    } finally {
      blocker.close();
    }
  });
});

describe('self-signed certificate (no certDir)', () => {
  test('covers localhost, 127.0.0.1, ::1, the host name and the extra names, and verifies against caPem', async () => {
    const s = await serve({
      extraDNSNames: ['metrics.ops.svc', 'metrics.ops.svc.cluster.local'],
      extraIPs: ['10.96.0.10'],
    });
    assert.ok(s.caPem?.includes('BEGIN CERTIFICATE'));
    const h = await handshake(s.port, { ca: s.caPem, rejectUnauthorized: true, servername: 'metrics.ops.svc' });
    assert.equal(h.ok, true, `handshake failed: ${h.code}`);
    const san = h.subjectAltName ?? '';
    for (const want of [
      'DNS:localhost',
      `DNS:${os.hostname().toLowerCase()}`,
      'DNS:metrics.ops.svc',
      'DNS:metrics.ops.svc.cluster.local',
      'IP Address:127.0.0.1',
      'IP Address:0:0:0:0:0:0:0:1',
      'IP Address:10.96.0.10',
    ]) {
      assert.ok(san.includes(want), `SANs ${san} lack ${want}`);
    }
    // verified by IP as well (the "missing IP SAN" complaint)
    const r = await request(`${s.url}/metrics`, { ca: s.caPem });
    assert.equal(r.status, 200);
  });

  test('an invalid extra IP is refused at start', async () => {
    const s = createMetricsServer({ bindAddress: '127.0.0.1:0', extraIPs: ['not-an-ip'] });
    await assert.rejects(s.start(), /"not-an-ip" in extraIPs is not an IP address/);
  });
});

describe('TLS versions and ALPN', () => {
  let s: MetricsServer;
  before(async () => {
    s = await serve();
  });

  test('TLS 1.2 and 1.3 are accepted', async () => {
    assert.equal((await handshake(s.port, { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })).protocol, 'TLSv1.2');
    assert.equal((await handshake(s.port, { minVersion: 'TLSv1.3' })).protocol, 'TLSv1.3');
  });

  test('TLS 1.1 and 1.0 are refused by the server (protocol_version alert)', async () => {
    const old = await handshake(s.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });
    assert.equal(old.ok, false);
    assert.equal(old.code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  test('HTTP/2 is off by default: ALPN h2 alone is refused, h2+http/1.1 negotiates http/1.1', async () => {
    const h2only = await handshake(s.port, { ALPNProtocols: ['h2'] });
    assert.equal(h2only.ok, false);
    assert.equal(h2only.code, 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
    assert.equal((await handshake(s.port, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn, 'http/1.1');
    const session = http2.connect(s.url, { rejectUnauthorized: false });
    const outcome = await new Promise<string>((resolve) => {
      session.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
      session.on('connect', () => resolve('connected'));
    });
    session.destroy();
    assert.equal(outcome, 'ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL');
  });

  test('enableHTTP2 serves /metrics over h2 and still over HTTP/1.1', async () => {
    const s2 = await serve({ enableHTTP2: true });
    assert.equal((await handshake(s2.port, { ALPNProtocols: ['h2', 'http/1.1'] })).alpn, 'h2');
    const session = http2.connect(s2.url, { rejectUnauthorized: false });
    try {
      session.on('error', () => undefined); // a session error fails the request below
      const { status, body } = await h2Get(session, '/metrics');
      assert.equal(status, 200);
      assert.match(body, /^# (HELP|TYPE) /m);
    } finally {
      session.close();
    }
    const r = await request(`${s2.url}/metrics`);
    assert.equal(r.status, 200);
  });
});

describe('tlsOpts', () => {
  test('are applied in order: each sees what the previous one set, the last one wins', async () => {
    const seen: Array<string | undefined> = [];
    const s = await serve({
      tlsOpts: [
        (o) => {
          seen.push(o.minVersion);
          o.minVersion = 'TLSv1.3';
        },
        (o) => {
          seen.push(o.minVersion);
          o.minVersion = 'TLSv1.2';
        },
      ],
    });
    assert.deepEqual(seen, ['TLSv1.2', 'TLSv1.3']);
    assert.equal((await handshake(s.port, { maxVersion: 'TLSv1.2' })).ok, true);
  });

  test('minVersion TLSv1.3 from tlsOpts refuses TLS 1.2 clients', async () => {
    const s = await serve({ tlsOpts: [(o) => (o.minVersion = 'TLSv1.3')] });
    assert.equal((await handshake(s.port, { maxVersion: 'TLSv1.2' })).ok, false);
    assert.equal((await handshake(s.port)).protocol, 'TLSv1.3');
  });

  test('a minVersion below 1.2 is raised to 1.2', async () => {
    const s = await serve({ tlsOpts: [(o) => (o.minVersion = 'TLSv1')] });
    const old = await handshake(s.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' });
    assert.equal(old.code, 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
  });

  test('a certificate set by tlsOpts is served as given', async () => {
    const s = await serve({ tlsOpts: [(o) => Object.assign(o, { cert: pairC.certPem, key: pairC.keyPem })] });
    assert.equal((await handshake(s.port)).fingerprint, fingerprint(pairC.certPem));
    assert.equal(s.caPem, undefined);
  });

  test('h2 added by tlsOpts without enableHTTP2 is dropped (HTTP/2 stays off)', async () => {
    const s = await serve({ tlsOpts: [(o) => (o.ALPNProtocols = ['h2', 'http/1.1'])] });
    assert.equal((await handshake(s.port, { ALPNProtocols: ['h2'] })).ok, false);
  });
});

describe('certDir', () => {
  test('serves the files, hot-reloads a Secret-volume swap, keeps open connections, keeps the last good pair on bad files', async () => {
    const dir = await tempDir();
    const vol = new SecretDir(dir);
    await vol.write({ 'tls.crt': pairA.certPem, 'tls.key': pairA.keyPem });
    const s = await serve({ certDir: dir });
    assert.equal(
      (await handshake(s.port, { ca: ca.certPem, rejectUnauthorized: true, servername: 'localhost' })).fingerprint,
      fingerprint(pairA.certPem),
    );

    // a keep-alive connection opened on pair A
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    try {
      const peerOf = (r: { socket: unknown }) =>
        (r.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256;
      let firstSocketFp = '';
      await new Promise<void>((resolve, reject) => {
        https
          .get(`${s.url}/metrics`, { agent }, (res) => {
            firstSocketFp = peerOf(res);
            res.resume();
            res.on('end', resolve);
          })
          .on('error', reject);
      });
      assert.equal(firstSocketFp, fingerprint(pairA.certPem));

      // rotate to pair B the kubelet's way: new cert served without a restart
      await vol.write({ 'tls.crt': pairB.certPem, 'tls.key': pairB.keyPem });
      await waitFor(
        'the rotated certificate',
        async () => (await handshake(s.port)).fingerprint === fingerprint(pairB.certPem),
        15_000,
        100,
      );

      // the connection opened before the rotation still works (and still speaks with pair A)
      await new Promise<void>((resolve, reject) => {
        https
          .get(`${s.url}/metrics`, { agent }, (res) => {
            assert.equal(res.statusCode, 200);
            assert.equal(peerOf(res), fingerprint(pairA.certPem));
            res.resume();
            res.on('end', resolve);
          })
          .on('error', reject);
      });
    } finally {
      agent.destroy();
    }

    // a corrupt certificate, then a mismatched pair: pair B keeps being served, and the errors are counted
    const errorsBefore = sample((await request(`${s.url}/metrics`)).text, 'certwatcher_read_certificate_errors_total');
    assert.ok(errorsBefore >= 0, 'certwatcher_read_certificate_errors_total is exposed');
    const before = logs.length;
    await vol.write({
      'tls.crt': '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n',
      'tls.key': pairB.keyPem,
    });
    await waitFor(
      'the watcher to report the corrupt certificate',
      () => logs.slice(before).some((l) => l.includes('keeping the previous certificate')),
      15_000,
      50,
    );
    assert.equal((await handshake(s.port)).fingerprint, fingerprint(pairB.certPem));
    const before2 = logs.length;
    await vol.write({ 'tls.crt': pairC.certPem, 'tls.key': pairA.keyPem });
    await waitFor(
      'the watcher to report the mismatched key',
      () => logs.slice(before2).some((l) => l.includes('does not match the certificate')),
      15_000,
      50,
    );
    assert.equal((await handshake(s.port)).fingerprint, fingerprint(pairB.certPem));
    const after = (await request(`${s.url}/metrics`)).text;
    assert.ok(
      sample(after, 'certwatcher_read_certificate_errors_total') >= errorsBefore + 2,
      'both failed reads are counted',
    );
    assert.ok(sample(after, 'certwatcher_read_certificate_total') >= 4, 'every read is counted');

    // and a good pair after the bad ones is picked up again
    await vol.write({ 'tls.crt': pairC.certPem, 'tls.key': pairC.keyPem });
    await waitFor(
      'recovery to pair C',
      async () => (await handshake(s.port)).fingerprint === fingerprint(pairC.certPem),
      15_000,
      100,
    );
  });

  test('custom certName/keyName are used', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'serving.pem'), pairB.certPem);
    await writeFile(join(dir, 'serving-key.pem'), pairB.keyPem);
    const s = await serve({ certDir: dir, certName: 'serving.pem', keyName: 'serving-key.pem' });
    assert.equal((await handshake(s.port)).fingerprint, fingerprint(pairB.certPem));
  });

  test('a missing file refuses to start (no silent self-signed fallback), naming the file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'tls.crt'), pairA.certPem);
    const s = createMetricsServer({ bindAddress: '127.0.0.1:0', certDir: dir });
    await assert.rejects(s.start(), (err: Error) => {
      assert.match(err.message, /cannot read key file .*tls\.key: it does not exist/);
      assert.match(err.message, /omit certDir to serve a self-signed certificate/);
      return true;
    });
  });

  test('an empty certDir refuses to start', async () => {
    const dir = join(await tempDir(), 'nothing-here');
    await mkdir(dir);
    const s = createMetricsServer({ bindAddress: '127.0.0.1:0', certDir: dir });
    await assert.rejects(s.start(), /cannot read certificate file .*tls\.crt: it does not exist/);
  });
});

describe('routing and limits', () => {
  let s: MetricsServer;
  before(async () => {
    s = await serve({
      extraHandlers: {
        '/debug/': (req, res) => {
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.end(`debug ${req.url}\n`);
        },
      },
    });
  });

  test('unknown paths and /metrics/ answer 404', async () => {
    for (const path of ['/', '/metricsx', '/metrics/', '/healthz']) {
      const r = await request(`${s.url}${path}`);
      assert.equal(r.status, 404, path);
      assert.equal(r.text, '404 page not found\n');
    }
  });

  test('a key ending in / serves its subtree', async () => {
    const r = await request(`${s.url}/debug/pprof/heap?x=1`);
    assert.equal(r.status, 200);
    assert.equal(r.text, 'debug /debug/pprof/heap?x=1\n');
  });

  test('/metrics cannot be overridden, and a path cannot be registered twice', () => {
    assert.throws(
      () => createMetricsServer({ bindAddress: '127.0.0.1:0', extraHandlers: { '/metrics': () => undefined } }),
      /overriding the built-in \/metrics endpoint is not allowed/,
    );
    assert.throws(
      () => s.addExtraHandler('/metrics', () => undefined),
      /overriding the built-in \/metrics endpoint is not allowed/,
    );
    assert.throws(() => s.addExtraHandler('/debug/', () => undefined), /already registered/);
    assert.throws(() => s.addExtraHandler('debug', () => undefined), /must start with "\/"/);
  });

  test('a handler added after start is served', async () => {
    s.addExtraHandler('/late', (_req, res) => res.end('late'));
    assert.equal((await request(`${s.url}/late`)).text, 'late');
  });

  test('a request head over 16 KiB gets 431', async () => {
    const r = await request(`${s.url}/metrics`, { headers: { 'X-Padding': 'a'.repeat(20 * 1024) } });
    assert.equal(r.status, 431);
  });

  test('at maxConnections a new connection closes the oldest idle one; only when all are busy is it refused', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding = false;
    const hold = async (_req: unknown, res: { end(s: string): void }) => {
      holding = true;
      await held;
      res.end('done');
    };
    const small = await serve({ maxConnections: 1, extraHandlers: { '/hold': hold } });
    const idle = await new Promise<import('node:tls').TLSSocket>((resolve, reject) => {
      const c = tlsConnect({ host: '127.0.0.1', port: small.port, rejectUnauthorized: false }, () => resolve(c));
      c.on('error', reject);
    });
    const idleClosed = new Promise<void>((resolve) => idle.once('close', () => resolve()));
    try {
      const second = await handshake(small.port);
      assert.equal(second.ok, true, 'the new connection is accepted');
      await idleClosed; // the idle connection made room
      // a connection busy with a request is never closed for a newcomer
      const busy = request(`${small.url}/hold`);
      await waitFor('the held request to start', () => holding, 5_000);
      assert.equal((await handshake(small.port)).ok, false, 'refused: the only connection is busy');
      release();
      assert.equal((await busy).status, 200);
    } finally {
      release();
      idle.destroy();
    }
  });

  test('HEAD /metrics answers like GET without a body', async () => {
    const r = await request(`${s.url}/metrics`, { method: 'HEAD' });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(r.body.length, 0);
  });
});

describe('scrapes', () => {
  test('concurrent scrapes share collects: the first starts one, those arriving while it runs share the next', async () => {
    const reg = new Registry();
    const scrapes = new Counter({
      name: 'shared_render_collects_total',
      help: 'Collects seen by the test collector.',
      registers: [],
    });
    let collects = 0;
    reg.register(scrapes);
    reg.register({
      familyNames: () => [],
      collect: async () => {
        collects++;
        await new Promise((r) => setTimeout(r, 100));
        return [];
      },
    });
    scrapes.inc(7);
    const s = await serve({ secureServing: false }, { registry: reg });
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        request(`${s.url}/metrics`, { headers: i % 2 ? { 'Accept-Encoding': 'gzip' } : {} }),
      ),
    );
    assert.deepEqual(
      replies.map((r) => r.status),
      Array(10).fill(200),
    );
    assert.ok(replies.every((r) => /^shared_render_collects_total 7$/m.test(r.text)));
    assert.ok(collects <= 2, `at most two collects for ten concurrent scrapes (${collects})`);
  });
});

describe('slow clients', () => {
  test('a request head not finished within the headers timeout gets 408 and the connection is closed (slowloris)', async () => {
    const s = await serve();
    const t0 = Date.now();
    const outcome = await new Promise<{ first: string; ms: number }>((resolve, reject) => {
      let first = '';
      const c = tlsConnect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false }, () =>
        c.write('GET /metrics HTTP/1.1\r\nHost: x\r\n'),
      );
      c.on('data', (d: Buffer) => (first ||= d.toString('latin1').split('\r\n')[0]));
      c.on('close', () => resolve({ first, ms: Date.now() - t0 }));
      c.on('error', reject);
      setTimeout(() => {
        c.destroy();
        reject(new Error('the server kept a half-sent request open for 25 s'));
      }, 25_000).unref();
    });
    assert.equal(outcome.first, 'HTTP/1.1 408 Request Timeout');
    assert.ok(outcome.ms >= 9_000, `closed too early (${outcome.ms} ms)`);
  });
});

describe('holding connections without a request, HTTP/2 on', () => {
  test("an idle TLS connection, a slow HTTP/1.1 head on the HTTP/2 server's fallback, and an HTTP/2 session without a stream are all closed within 10–14 s", async () => {
    const s = await serve({ enableHTTP2: true });
    const t0 = Date.now();
    const closedAfter = (open: (done: () => void) => void) =>
      new Promise<number>((resolve) => {
        const timer = setTimeout(() => resolve(Infinity), 30_000);
        open(() => {
          clearTimeout(timer);
          resolve(Date.now() - t0);
        });
      });
    const idle = closedAfter((done) => {
      const c = tlsConnect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
      c.on('error', () => undefined);
      c.on('close', done);
    });
    const slowHead = closedAfter((done) => {
      const c = tlsConnect(
        { host: '127.0.0.1', port: s.port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] },
        () => c.write('GET /metrics HTTP/1.1\r\n'),
      );
      const tick = setInterval(() => c.write('X'), 1_000);
      c.on('error', () => undefined);
      c.on('close', () => (clearInterval(tick), done()));
    });
    const noStream = closedAfter((done) => {
      const session = http2.connect(s.url, { rejectUnauthorized: false });
      session.on('error', () => undefined);
      session.on('close', done);
    });
    const ms = await Promise.all([idle, slowHead, noStream]);
    for (const [what, t] of [
      ['idle TLS', ms[0]],
      ['slow HTTP/1.1 head', ms[1]],
      ['HTTP/2 session without a stream', ms[2]],
    ] as const) {
      assert.ok(t >= 9_000 && t <= 14_000, `${what} closed after ${t} ms`);
    }
    const r = await request(`${s.url}/metrics`);
    assert.equal(r.status, 200, 'and the server serves');
  });
});

describe('a plain-HTTP request on the HTTPS port', () => {
  const GO_ANSWER = 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n';

  /** Writes `bytes` on a raw TCP connection and returns everything read until the server closes it. */
  function raw(port: number, bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(bytes));
      let got = '';
      socket.setEncoding('latin1').on('data', (d: string) => (got += d));
      socket.setTimeout(10_000, () => socket.destroy(new Error('no close within 10 s')));
      socket.on('error', reject);
      socket.on('close', () => resolve(got));
    });
  }

  for (const enableHTTP2 of [false, true]) {
    test(`gets Go's 400 answer, byte for byte, and the connection closed${enableHTTP2 ? ' (HTTP/2 enabled)' : ''}`, async () => {
      const s = await serve({ enableHTTP2 });
      assert.equal(await raw(s.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), GO_ANSWER);
      // and the port still serves TLS
      assert.equal((await request(`${s.url}/metrics`, { ca: s.caPem })).status, 200);
    });
  }

  test('curl http:// on the HTTPS port shows the status and the reason', async () => {
    const s = await serve();
    // async: the server runs in this process
    const { stdout: out } = await promisify(execFile)(
      'curl',
      ['-s', '-w', '\n%{http_code}', `http://127.0.0.1:${s.port}/metrics`],
      { encoding: 'utf8', timeout: 20_000 },
    );
    assert.equal(out, 'Client sent an HTTP request to an HTTPS server.\n\n400');
  });

  test('other garbage still just closes the connection, with no answer', async () => {
    const s = await serve();
    assert.equal(await raw(s.port, '\x00\x01\x02 not tls, not http\r\n\r\n'), '');
  });
});

describe('plain HTTP (secureServing: false)', () => {
  test('serves /metrics over http://', async () => {
    const s = await serve({ secureServing: false });
    assert.equal(s.url, `http://127.0.0.1:${s.port}`);
    const r = await request(`${s.url}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.text, /^# (HELP|TYPE) /m);
  });
});

describe('graceful stop', () => {
  test('an in-flight request finishes, new connections are refused', async () => {
    let release!: () => void;
    const started = new Promise<void>((r) => (release = r));
    const s = await serve({
      extraHandlers: {
        '/slow': async (_req, res) => {
          release();
          await new Promise((r) => setTimeout(r, 300));
          res.end('done');
        },
      },
    });
    const inflight = request(`${s.url}/slow`);
    await started;
    const stopped = s.stop();
    const r = await inflight;
    assert.equal(r.status, 200);
    assert.equal(r.text, 'done');
    await stopped;
    await assert.rejects(request(`${s.url}/metrics`, { timeoutMs: 2_000 }), /ECONNREFUSED/);
  });

  test('aborting the start signal stops the server', async () => {
    const ac = new AbortController();
    const s = createMetricsServer({ bindAddress: '127.0.0.1:0', secureServing: false });
    servers.push(s);
    await s.start(ac.signal);
    assert.equal((await request(`${s.url}/metrics`)).status, 200);
    ac.abort();
    await waitFor(
      'the listener to close',
      async () =>
        request(`${s.url}/metrics`, { timeoutMs: 1_000 }).then(
          () => false,
          (e: Error) => /ECONNREFUSED/.test(e.message),
        ),
      5_000,
    );
  });

  test('a request that hangs past shutdownTimeoutMs is cut and stop() returns', async () => {
    const s = await serve({
      shutdownTimeoutMs: 300,
      extraHandlers: { '/hang': () => new Promise<void>(() => undefined) },
    });
    const hung = request(`${s.url}/hang`).then(
      () => 'answered',
      (e: Error) => e.message,
    );
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await s.stop();
    assert.ok(Date.now() - t0 < 3_000, 'stop took too long');
    assert.match(await hung, /socket hang up|ECONNRESET/);
  });
});

/**
 * The server core (src/httpserver/server.ts) over loopback with short limits — head size, head and idle timeouts,
 * connections that send nothing, address errors, graceful close, a plain-HTTP request on the TLS port — and the
 * same bounds on each of the manager's servers: metrics, webhooks and health probes.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpServer, ListenError } from '../../packages/ctrlmetrics/src/httpserver/index.js';
import { HealthProbeServer } from '../../packages/ctrlmetrics/src/manager/health.js';
import { WebhookServer } from '../../packages/ctrlmetrics/src/webhook/server.js';
import { createMetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { generateCA, issueServingCert } from '../helpers/certs.js';

const dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-httpserver-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** What a raw connection saw: the bytes answered and when (ms after connecting) the server closed it. */
interface Seen {
  answer: string;
  closedAfterMs: number;
}

/** Connects, writes `send` (once connected), and waits (at most `waitMs`) for the server to close. */
function raw(port: number, send: string | undefined, waitMs = 8_000): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const sock = net.connect(port, '127.0.0.1');
    let answer = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(
        new Error(
          `the server kept the connection open for ${waitMs} ms; it answered ${JSON.stringify(answer.slice(0, 200))}`,
        ),
      );
    }, waitMs);
    sock.setEncoding('latin1');
    sock.on('connect', () => send !== undefined && sock.write(send));
    sock.on('data', (d: string) => (answer += d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closedAfterMs: performance.now() - t0 });
    });
  });
}

const ok = (_req: unknown, res: { writeHead: (s: number) => { end: (b: string) => void } }) =>
  res.writeHead(200).end('ok\n');

async function core(
  limits: ConstructorParameters<typeof HttpServer>[0]['limits'],
  handler = ok as ConstructorParameters<typeof HttpServer>[1],
): Promise<HttpServer> {
  const s = new HttpServer({ bindAddress: '127.0.0.1:0', limits }, handler);
  await s.listen();
  return s;
}

test('a head over maxHeaderBytes gets 431; a complete request is answered', async () => {
  const s = await core({ maxHeaderBytes: 1024 });
  try {
    const big = await raw(s.port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(2048)}\r\n\r\n`);
    assert.match(big.answer, /^HTTP\/1\.1 431 /);
    const fine = await raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(fine.answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n(3\r\n)?ok\n/);
  } finally {
    await s.close(1_000);
  }
});

test('a head trickled past headersTimeoutMs gets 408; a connection that sends nothing is closed', async () => {
  const s = await core({ headersTimeoutMs: 300 });
  try {
    const slow = await raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n');
    assert.match(slow.answer, /^HTTP\/1\.1 408 /);
    assert.ok(slow.closedAfterMs < 3_000, `closed after ${Math.round(slow.closedAfterMs)} ms`);
    // no byte at all: Node's head timeout answers 408 too (the connection guard would close it at head timeout + 2 s)
    const silent = await raw(s.port, undefined);
    assert.match(silent.answer, /^(HTTP\/1\.1 408 [\s\S]*)?$/);
    assert.ok(silent.closedAfterMs < 4_500, `closed after ${Math.round(silent.closedAfterMs)} ms`);
  } finally {
    await s.close(1_000);
  }
});

test('an idle keep-alive connection is closed after keepAliveTimeoutMs', async () => {
  const s = await core({ keepAliveTimeoutMs: 400 });
  try {
    const seen = await raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(seen.answer, /^HTTP\/1\.1 200 OK/);
    assert.match(seen.answer, /Keep-Alive: timeout=0/i);
    assert.ok(
      seen.closedAfterMs >= 350 && seen.closedAfterMs < 3_000,
      `closed after ${Math.round(seen.closedAfterMs)} ms`,
    );
  } finally {
    await s.close(1_000);
  }
});

test('listening on a taken address is a ListenError naming the address', async () => {
  const s = await core({});
  try {
    const again = new HttpServer({ bindAddress: `127.0.0.1:${s.port}` }, ok);
    await assert.rejects(again.listen(), (err: Error) => {
      assert.ok(err instanceof ListenError);
      assert.equal(err.systemCode, 'EADDRINUSE');
      assert.equal(err.code, 'ERR_LISTEN');
      assert.equal(err.message, `cannot listen on 127.0.0.1:${s.port}: the address is already in use`);
      return true;
    });
  } finally {
    await s.close(1_000);
  }
});

test('close lets a request in flight finish; past its timeout it cuts the connection', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const s = await core({}, (_req, res) => {
    void held.then(() =>
      (res as { writeHead: (n: number) => { end: (b: string) => void } }).writeHead(200).end('late\n'),
    );
  });
  const inFlight = raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((r) => setTimeout(r, 100));
  const closing = s.close(5_000);
  setTimeout(release, 200);
  assert.equal(await closing, false, 'nothing had to be cut');
  assert.match((await inFlight).answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*late\n/, 'answered, then the connection closed');

  const stuck = await core({}, () => undefined);
  const hanging = raw(stuck.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(await stuck.close(300), true, 'the hung request was cut');
  assert.equal((await hanging).answer, '');
});

test("on a TLS server, a plain-HTTP request gets Go's 400", async () => {
  const ca = await generateCA('httpserver-test-ca');
  const pair = await issueServingCert(ca, ['127.0.0.1']);
  const s = new HttpServer(
    { bindAddress: '127.0.0.1:0', tls: { options: { cert: pair.certPem, key: pair.keyPem, minVersion: 'TLSv1.2' } } },
    ok,
  );
  await s.listen();
  try {
    assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const seen = await raw(s.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(seen.answer, 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
  } finally {
    await s.close(1_000);
  }
});

test("the manager's three servers are bounded by the core: oversize heads get 431 on metrics, webhooks and probes", async () => {
  const ca = await generateCA('httpserver-servers-ca');
  const pair = await issueServingCert(ca, ['127.0.0.1']);
  writeFileSync(join(dir, 'tls.crt'), pair.certPem);
  writeFileSync(join(dir, 'tls.key'), pair.keyPem);
  const metrics = createMetricsServer({ bindAddress: '127.0.0.1:0', secureServing: false });
  const webhooks = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir });
  webhooks.register('/validate', async () => ({ allowed: true }));
  const probes = new HealthProbeServer('127.0.0.1:0');
  await metrics.start();
  await webhooks.start();
  await probes.start();
  try {
    // plain HTTP for metrics and probes; the webhook server speaks TLS only, so its head goes through a TLS socket
    const metricsSeen = await raw(
      metrics.port,
      `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    );
    assert.match(metricsSeen.answer, /^HTTP\/1\.1 431 /, 'metrics: 16 KiB heads');
    const probeSeen = await raw(
      probes.port,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    );
    assert.match(probeSeen.answer, /^HTTP\/1\.1 431 /, 'probes: 16 KiB heads');
    const tls = await import('node:tls');
    // just over the limit, so that the server has read (nearly) all of it when it answers and closes: bytes it
    // never read make its close a reset, which can overtake the answer — then the attempt is repeated
    const oversize = () =>
      new Promise<string>((resolve) => {
        const sock = tls.connect(
          { host: '127.0.0.1', port: webhooks.port, ca: ca.certPem, servername: '127.0.0.1' },
          () => {
            sock.write(`POST /validate HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(1024 * 1024 + 1024)}\r\n\r\n`);
          },
        );
        let got = '';
        sock.setEncoding('latin1');
        sock.on('data', (d: string) => (got += d));
        sock.on('close', () => resolve(got));
        sock.on('error', () => undefined);
      });
    let webhookAnswer = '';
    for (let attempt = 0; attempt < 5 && webhookAnswer === ''; attempt++) webhookAnswer = await oversize();
    assert.match(webhookAnswer, /^HTTP\/1\.1 431 /, "webhooks: controller-runtime's 1 MiB heads");
  } finally {
    await Promise.all([metrics.stop(), webhooks.stop(), probes.stop()]);
  }
});

test('the probe server, which had only a keep-alive timeout, now answers a slow head 408 and closes silent connections', async () => {
  const probes = new HealthProbeServer('127.0.0.1:0', { headersTimeoutMs: 300 });
  probes.healthz.add('ping', () => undefined);
  await probes.start();
  try {
    const slow = await raw(probes.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    assert.match(slow.answer, /^HTTP\/1\.1 408 /);
    const silent = await raw(probes.port, undefined);
    assert.ok(silent.closedAfterMs < 4_500, `closed after ${Math.round(silent.closedAfterMs)} ms`);
    const fine = await raw(probes.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.match(fine.answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n(3\r\n)?ok\n/);
  } finally {
    await probes.stop();
  }
});

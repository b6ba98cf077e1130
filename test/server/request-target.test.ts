/**
 * Request targets and bodies on the wire (src/metrics/server/request.ts), over real TLS against the embedded
 * authority: absolute-form targets are served like origin-form ones; no `100 Continue` before authentication;
 * bodies are bounded and never drained for a caller that is refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import http2 from 'node:http2';
import type { Readable } from 'node:stream';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { h2Get, rawRequest, startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';

const logs = new LogCapture();
let cluster: TestCluster;
let ep: SecureEndpoint;
let reader = '';

before(async () => {
  cluster = await startTestCluster();
  const restConfig = await cluster.managerConfig();
  logs.secret(restConfig.token!);
  reader = logs.secret(await cluster.readerToken());
  ep = await startSecureEndpoint(restConfig, {
    metrics: {
      extraHandlers: {
        '/echo': (req, res) => void collect(req as Readable).then((b) => res.end(`got ${b.length} bytes`)),
      },
    },
  });
});

after(async () => {
  await ep?.stop();
  await cluster?.stop();
  logs.restore();
  assert.deepEqual(logs.leaks(), [], 'a secret reached a log line');
});

function collect(req: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const head = (lines: string[]) => [...lines, '', ''].join('\r\n');

describe('absolute-form request targets', () => {
  test("served like origin form: 200 with the token, 401 without; the URL's authority is ignored", async () => {
    const port = ep.port;
    for (const target of [
      `https://127.0.0.1:${port}/metrics`,
      'https://evil.example:1/metrics',
      'HTTPS://127.0.0.1/metrics?x=1',
      'http://localhost/metrics',
    ]) {
      const ok = await rawRequest(
        port,
        head([`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', `Authorization: Bearer ${reader}`]),
      );
      assert.equal(ok.status, 200, `${target}: ${ok.text.slice(0, 200)}`);
      const anon = await rawRequest(port, head([`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close']));
      assert.equal(anon.status, 401, target);
    }
    const root = await rawRequest(
      port,
      head([
        `GET https://127.0.0.1:${port} HTTP/1.1`,
        'Host: 127.0.0.1',
        'Connection: close',
        `Authorization: Bearer ${reader}`,
      ]),
    );
    assert.equal(root.status, 404, 'no path is "/", which is not served');
    const other = await rawRequest(
      port,
      head([
        `GET https://127.0.0.1:${port}/metricsx HTTP/1.1`,
        'Host: 127.0.0.1',
        'Connection: close',
        `Authorization: Bearer ${reader}`,
      ]),
    );
    assert.equal(other.status, 404);
  });
});

/**
 * Writes `head`, then up to `bodyBytes` of body as fast as the server takes them (chunked when `chunked`), until the
 * server closes or 15 s pass. Returns what was read and how many body bytes the socket accepted.
 */
function sendBody(
  headText: string,
  bodyBytes: number,
  chunked: boolean,
): Promise<{ text: string; sent: number; closed: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    let sent = 0;
    let done = false;
    const s = tls.connect({ host: '127.0.0.1', port: ep.port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      resolve({ text, sent, closed });
    };
    const timer = setTimeout(() => finish(false), 15_000);
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('error', () => finish(true));
    s.on('close', () => finish(true));
    const piece = Buffer.alloc(64 * 1024, 0x61);
    const framed = chunked
      ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
      : piece;
    s.once('secureConnect', () => {
      s.write(headText);
      const pump = () => {
        while (!done && sent < bodyBytes) {
          sent += piece.length;
          if (!s.write(framed)) {
            s.once('drain', pump);
            return;
          }
        }
      };
      // as a client that does not wait for 100 Continue (curl waits 1 s, then sends anyway)
      pump();
    });
  });
}

describe('request bodies and Expect: 100-continue', () => {
  const MiB = 1024 * 1024;

  test('unauthenticated, 64 MiB declared: 413 at once, no 100 Continue, closed after a few MiB at most', async () => {
    const r = await sendBody(
      head(['POST /metrics HTTP/1.1', 'Host: 127.0.0.1', 'Expect: 100-continue', `Content-Length: ${64 * MiB}`]),
      64 * MiB,
      false,
    );
    assert.doesNotMatch(r.text, /100 Continue/);
    assert.match(r.text, /^HTTP\/1\.1 413 /);
    assert.match(r.text, /\r\nConnection: close\r\n/i);
    assert.ok(r.closed, 'the server closed the connection');
    assert.ok(r.sent <= 8 * MiB, `${(r.sent / MiB).toFixed(1)} MiB were taken before the close`);
  });

  test('unauthenticated, 64 MiB chunked (length unknown): 401, no 100 Continue, closed after a few MiB at most', async () => {
    const r = await sendBody(
      head(['POST /metrics HTTP/1.1', 'Host: 127.0.0.1', 'Expect: 100-continue', 'Transfer-Encoding: chunked']),
      64 * MiB,
      true,
    );
    assert.doesNotMatch(r.text, /100 Continue/);
    assert.match(r.text, /^HTTP\/1\.1 401 /);
    assert.ok(r.closed, 'the server closed the connection');
    assert.ok(r.sent <= 8 * MiB, `${(r.sent / MiB).toFixed(1)} MiB were taken before the close`);
  });

  test('an unbound caller with a small body: 403, and the connection is closed rather than drained', async () => {
    const stranger = logs.secret(await cluster.serviceAccountToken('monitoring', 'stranger'));
    const r = await rawRequest(
      ep.port,
      head(['POST /echo HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${stranger}`, 'Content-Length: 10']) +
        '0123456789',
      15_000,
      true,
    );
    assert.equal(r.status, 403);
    assert.match(r.text, /\r\nConnection: close\r\n/i);
    assert.ok(r.closed);
  });

  test('an authorized caller gets 100 Continue, then its body reaches the handler; the connection closes after', async () => {
    const admin = cluster.authority.adminToken;
    const s = tls.connect({ host: '127.0.0.1', port: ep.port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    let text = '';
    const closed = new Promise<void>((resolve) => s.on('close', () => resolve()));
    s.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (text.includes('100 Continue\r\n\r\n') && !text.includes('body sent')) {
        text += '[body sent]';
        s.write('0123456789');
      }
    });
    s.on('error', () => undefined);
    await new Promise<void>((resolve) => s.once('secureConnect', () => resolve()));
    s.write(
      head([
        'POST /echo HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Bearer ${admin}`,
        'Expect: 100-continue',
        'Content-Length: 10',
      ]),
    );
    const t = setTimeout(() => s.destroy(), 10_000);
    await closed;
    clearTimeout(t);
    assert.match(text, /^HTTP\/1\.1 100 Continue\r\n\r\n\[body sent\]HTTP\/1\.1 200 /);
    assert.match(text, /got 10 bytes$/);
  });

  test('HTTP/2: a declared body over 4 KiB gets 413; an unauthenticated body of unknown length gets 401 and its stream is cancelled after a few MiB at most', async () => {
    const h2ep = await startSecureEndpoint(await cluster.managerConfig(), { metrics: { enableHTTP2: true } });
    const session = http2.connect(h2ep.url, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    try {
      const post = (headers: http2.OutgoingHttpHeaders, bodyBytes: number) =>
        new Promise<{ status: number; sent: number; reset: number | undefined }>((resolve) => {
          const stream = session.request({ ':method': 'POST', ':path': '/metrics', ...headers });
          let status = 0;
          let sent = 0;
          const piece = Buffer.alloc(64 * 1024, 0x61);
          stream.on('response', (h) => (status = Number(h[':status'])));
          stream.on('data', () => undefined);
          stream.on('error', () => undefined);
          stream.on('close', () => resolve({ status, sent, reset: stream.rstCode }));
          const pump = () => {
            while (!stream.destroyed && sent < bodyBytes) {
              sent += piece.length;
              if (!stream.write(piece)) return void stream.once('drain', pump);
            }
            if (!stream.destroyed) stream.end();
          };
          pump();
        });
      const declared = await post({ 'content-length': String(64 * MiB) }, 64 * MiB);
      assert.equal(declared.status, 413);
      assert.ok(declared.sent <= 8 * MiB, `${(declared.sent / MiB).toFixed(1)} MiB taken`);
      const unknown = await post({}, 64 * MiB);
      assert.equal(unknown.status, 401);
      assert.ok(unknown.sent <= 8 * MiB, `${(unknown.sent / MiB).toFixed(1)} MiB taken`);
      const ok = await h2Get(session, '/metrics', { authorization: `Bearer ${reader}` });
      assert.equal(ok.status, 200, 'the session still serves');
    } finally {
      session.close();
      await h2ep.stop();
    }
  });

  test('a body over 4 KiB is refused with 413 before authentication, for any path', async () => {
    const r = await rawRequest(
      ep.port,
      head(['GET /metrics HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${reader}`, 'Content-Length: 4097']) +
        'x'.repeat(4097),
      15_000,
      true,
    );
    assert.equal(r.status, 413);
    assert.match(r.text, /at most 4096 bytes/);
    const small = await rawRequest(
      ep.port,
      head(['GET /metrics HTTP/1.1', 'Host: 127.0.0.1', `Authorization: Bearer ${reader}`, 'Content-Length: 5']) +
        'hello',
      15_000,
      true,
    );
    assert.equal(small.status, 200, 'a small body is ignored by /metrics');
    assert.ok(small.closed, 'and the connection is closed after the answer');
  });
});

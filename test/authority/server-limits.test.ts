/**
 * The authority serves on the manager's server core (src/httpserver), so it has the same bounds: a request head
 * trickled past the head timeout gets 408, a connection that sends nothing is closed, a head over the size is 431,
 * and plain HTTP on its port gets Go's 400. The timeouts are shortened here through `serverLimits` (the defaults,
 * 30 s heads, are kube-apiserver's).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import tls from 'node:tls';
import net from 'node:net';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';

let authority: Authority;
let port = 0;
before(async () => {
  authority = await startAuthority({ listen: '127.0.0.1:0', serverLimits: { headersTimeoutMs: 300 } });
  port = Number(new URL(authority.url).port);
});
after(async () => {
  await authority?.stop();
});

/** Opens a TLS connection, runs `use` on it, and resolves with what the server sent and when it closed. */
function talk(use: (c: tls.TLSSocket) => void): Promise<{ got: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const c = tls.connect({ host: '127.0.0.1', port, ca: authority.caPem, servername: 'localhost' }, () => use(c));
    let got = '';
    c.setEncoding('latin1').on('data', (d: string) => (got += d));
    c.on('close', () => resolve({ got, ms: Date.now() - t0 }));
    c.on('error', () => undefined);
    setTimeout(() => {
      c.destroy();
      reject(new Error('the connection was still open after 10 s'));
    }, 10_000).unref();
  });
}

test('a request head trickled past the head timeout gets 408 and the connection is closed', async () => {
  const r = await talk((c) => c.write('GET /api HTTP/1.1\r\nHost: x\r\n'));
  assert.match(r.got, /^HTTP\/1\.1 408 Request Timeout\r\n/);
});

test('a connection that sends no request is closed', async () => {
  const r = await talk(() => undefined);
  // Node answers an empty head as one that timed out (the guard closes what Node does not, e.g. HTTP/2 sessions)
  assert.match(r.got, /^(|HTTP\/1\.1 408 Request Timeout\r\n[^]*)$/);
  assert.ok(r.ms < 5_000, `closed after ${r.ms} ms`);
});

test("a request head over 16 KiB gets 431; plain HTTP on the port gets Go's 400", async () => {
  const big = await talk((c) => c.write(`GET /api HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`));
  assert.match(big.got, /^HTTP\/1\.1 431 /);
  const plain = await new Promise<string>((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write('GET /api HTTP/1.1\r\nHost: x\r\n\r\n'));
    let got = '';
    s.setEncoding('latin1').on('data', (d: string) => (got += d));
    s.on('close', () => resolve(got));
    s.on('error', () => undefined);
  });
  assert.equal(plain, 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
});

test('a watch outlives the head and request timeouts: its answer streams as long as it lasts', async () => {
  const r = await fetchWatch();
  assert.match(r, /^HTTP\/1\.1 200 OK/);
});

/** A watch held for 1.5 s (five head timeouts): the server must not cut it. */
function fetchWatch(): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = tls.connect({ host: '127.0.0.1', port, ca: authority.caPem, servername: 'localhost' }, () =>
      c.write(
        `GET /api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=30 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${authority.adminToken}\r\n\r\n`,
      ),
    );
    let got = '';
    c.setEncoding('latin1').on('data', (d: string) => (got += d));
    c.on('close', () => reject(new Error(`the server closed the watch: ${got.slice(0, 200)}`)));
    c.on('error', () => undefined);
    setTimeout(() => {
      c.removeAllListeners('close');
      c.destroy();
      resolve(got);
    }, 1_500);
  });
}

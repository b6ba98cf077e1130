/**
 * The connection guard (src/httpserver/connection-guard.ts) on a real HTTP server over loopback, with short
 * timeouts: the head timeout, the idle timeout that trickled bytes do not reset, and which connection makes room
 * at the cap.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  ConnectionGuard,
  type ConnectionGuardOptions,
} from '../../packages/ctrlmetrics/src/httpserver/connection-guard.js';

const servers: http.Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A plain HTTP server whose requests the guard counts; `/hold` answers only when released. */
async function guarded(o: ConnectionGuardOptions) {
  let release: () => void = () => undefined;
  const server = http.createServer(
    { keepAliveTimeout: 60_000, headersTimeout: 60_000, requestTimeout: 60_000 },
    (req, res) => {
      res.once('close', guard.requestStarted(req.socket));
      if (req.url === '/hold') {
        void new Promise<void>((r) => (release = r)).then(() => res.end('held'));
        return;
      }
      res.end('ok');
    },
  );
  const guard = new ConnectionGuard(server, o);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { guard, port: (server.address() as AddressInfo).port, release: () => release() };
}

/** A raw TCP client: what it read, and when the server closed it (ms after opening). */
function client(port: number) {
  const t0 = Date.now();
  const s = net.connect(port, '127.0.0.1');
  let text = '';
  s.on('data', (d: Buffer) => (text += d.toString('latin1')));
  s.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => s.on('close', () => resolve(Date.now() - t0)));
  const connected = new Promise<void>((resolve) => s.on('connect', () => resolve()));
  return { s, closed, connected, text: () => text };
}

const isOpen = async (c: ReturnType<typeof client>, ms: number) =>
  await Promise.race([c.closed.then(() => false), new Promise<boolean>((r) => setTimeout(() => r(true), ms))]);

describe('ConnectionGuard', () => {
  test('a connection that starts no request within the head timeout is closed; one that does is not', async () => {
    const { guard, port } = await guarded({ maxConnections: 100, headTimeoutMs: 300, idleTimeoutMs: 5_000 });
    const silent = client(port);
    const slow = client(port);
    await slow.connected;
    slow.s.write('GET / HTTP/1.1\r\n');
    const tick = setInterval(() => slow.s.write('X'), 50);
    const served = client(port);
    await served.connected;
    served.s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const [a, b] = await Promise.all([silent.closed, slow.closed]);
    clearInterval(tick);
    assert.ok(a >= 250 && a < 1_500, `silent connection closed after ${a} ms`);
    assert.ok(b >= 250 && b < 1_500, `slow head closed after ${b} ms (bytes do not reset the timeout)`);
    assert.equal(await isOpen(served, 600), true, 'the connection that was served stays (keep-alive)');
    assert.match(served.text(), /^HTTP\/1\.1 200 /);
    assert.equal(guard.stats().headTimeouts, 2);
    served.s.destroy();
  });

  test('between requests, a next head trickled a byte at a time is closed after the idle timeout', async () => {
    const { guard, port } = await guarded({ maxConnections: 100, headTimeoutMs: 300, idleTimeoutMs: 600 });
    const c = client(port);
    await c.connected;
    c.s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 100));
    assert.match(c.text(), /^HTTP\/1\.1 200 /);
    c.s.write('GET / HTTP/1.1\r\n');
    const tick = setInterval(() => c.s.write('X'), 50);
    const closedAfter = await c.closed;
    clearInterval(tick);
    assert.ok(closedAfter >= 550 && closedAfter < 2_000, `closed after ${closedAfter} ms`);
    assert.equal(guard.stats().idleTimeouts, 1);
  });

  test('at the cap: the oldest never-used connection makes room, then the oldest idle one; busy ones never; all busy refuses', async () => {
    const { guard, port, release } = await guarded({ maxConnections: 3, headTimeoutMs: 10_000, idleTimeoutMs: 10_000 });
    const used = client(port); // served once, then idle (keep-alive)
    await used.connected;
    used.s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const busy = client(port); // a request in flight
    await busy.connected;
    busy.s.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
    const unused = client(port); // never a request
    await unused.connected;
    await new Promise((r) => setTimeout(r, 100));
    const newcomer = client(port);
    await newcomer.connected;
    assert.ok((await unused.closed) >= 0, 'the never-used connection made room');
    assert.equal(await isOpen(used, 200), true, 'the used one is kept while a never-used one can go');
    newcomer.s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 100));
    const second = client(port);
    await second.connected;
    await used.closed; // now the oldest idle one goes
    assert.equal(await isOpen(busy, 200), true, 'the busy one stays');
    second.s.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
    newcomer.s.write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 100));
    const refused = client(port);
    assert.ok((await refused.closed) < 1_000, 'every connection busy: the newcomer is refused');
    assert.deepEqual({ evicted: guard.stats().evicted, refused: guard.stats().refused }, { evicted: 2, refused: 1 });
    release();
    for (const c of [busy, newcomer, second]) c.s.destroy();
  });
});

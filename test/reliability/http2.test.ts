/**
 * With HTTP/2 switched on (`enableHTTP2: true`), the same guarantees over h2 streams: every stream is decided on
 * its own (401 / 403 / 200), path tricks in `:path` are never served without authorization, a rapid-reset
 * burst (CVE-2023-44487: streams opened and cancelled at once) leaves the server serving, and the session
 * settings are bounded (100 streams, 16 KiB header lists).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { h2Get, startSecureEndpoint, scrape, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';

const logs = new LogCapture();
let cluster: TestCluster;
let ep: SecureEndpoint;
let reader = '';
let unbound = '';

function connect(): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = http2.connect(`https://127.0.0.1:${ep.port}`, { rejectUnauthorized: false });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

function h2get(
  session: http2.ClientHttp2Session,
  path: string,
  token?: string,
): Promise<{ status: number; body: string }> {
  return h2Get(session, path, token === undefined ? {} : { authorization: `Bearer ${token}` });
}

describe('HTTP/2 enabled', { timeout: 60_000 }, () => {
  before(async () => {
    cluster = await startTestCluster();
    const restConfig = await cluster.managerConfig();
    logs.secret(restConfig.token!);
    reader = logs.secret(await cluster.readerToken());
    unbound = logs.secret(await cluster.serviceAccountToken('monitoring', 'unbound'));
    ep = await startSecureEndpoint(restConfig, { metrics: { enableHTTP2: true } });
  });

  after(async () => {
    await ep?.stop();
    await cluster?.stop();
    logs.restore();
    assert.deepEqual(logs.leaks(), [], 'a secret reached a log line');
  });

  test('every stream of one session is decided on its own; path tricks are not served', async () => {
    const s = await connect();
    try {
      assert.equal(s.alpnProtocol, 'h2');
      const [a, b, c] = await Promise.all([
        h2get(s, '/metrics', reader),
        h2get(s, '/metrics'),
        h2get(s, '/metrics', unbound),
      ]);
      assert.equal(a.status, 200);
      assert.match(a.body, /# TYPE /);
      assert.equal(b.status, 401);
      assert.equal(c.status, 403);
      for (const p of ['//metrics', '/metrics/', '/%6Detrics', '/metrics/../metrics']) {
        for (const token of [undefined, unbound]) {
          const r = await h2get(s, p, token);
          assert.ok(r.status !== 200 && !/# TYPE /.test(r.body), `${p}: ${r.status}`);
        }
      }
    } finally {
      s.close();
    }
  });

  test('rapid reset: 1 000 streams opened and cancelled at once, the server keeps serving', async (t) => {
    const s = await connect();
    let goaway = false;
    s.on('goaway', () => (goaway = true));
    s.on('error', () => undefined);
    let opened = 0;
    for (let i = 0; i < 1000 && !s.closed && !s.destroyed; i++) {
      try {
        const req = s.request({ ':path': '/metrics', authorization: `Bearer ${reader}` });
        req.on('error', () => undefined);
        req.close(http2.constants.NGHTTP2_CANCEL);
        opened++;
      } catch {
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    t.diagnostic(`${opened} streams opened and cancelled; GOAWAY from the server: ${goaway}`);
    s.destroy();
    const fresh = await connect();
    try {
      assert.equal((await h2get(fresh, '/metrics', reader)).status, 200);
    } finally {
      fresh.close();
    }
    assert.equal((await scrape(ep.port, { token: reader })).status, 200, 'HTTP/1.1 still served');
  });

  test('bounded settings: 100 concurrent streams, header lists up to 16 KiB; a bigger header list is refused, the session serves on', async () => {
    const s = await connect();
    s.on('error', () => undefined);
    try {
      // the server's SETTINGS frame may arrive after 'connect'
      await Promise.race([new Promise((r) => s.once('remoteSettings', r)), new Promise((r) => setTimeout(r, 2_000))]);
      assert.equal(s.remoteSettings.maxConcurrentStreams, 100);
      assert.equal(s.remoteSettings.maxHeaderListSize, 16 * 1024);
      const big = await new Promise<string>((resolve) => {
        const req = s.request({
          ':path': '/metrics',
          authorization: `Bearer ${reader}`,
          'x-padding': 'a'.repeat(20 * 1024),
        });
        req.on('response', (h) => resolve(`status ${h[':status']}`));
        req.on('error', (err: NodeJS.ErrnoException) => resolve(`error ${err.code}`));
        req.on('close', () => resolve(`closed ${req.rstCode}`));
        req.end();
      });
      assert.doesNotMatch(big, /^status 200$/, big);
      const fresh = s.closed || s.destroyed ? await connect() : s;
      assert.equal((await h2get(fresh, '/metrics', reader)).status, 200);
      if (fresh !== s) fresh.close();
    } finally {
      s.close();
    }
  });
});

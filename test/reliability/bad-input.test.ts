/**
 * Bad input against the secure endpoint: every request below gets the stated answer, nothing is served
 * without a decision, and the server keeps serving afterwards. Real TLS sockets on 127.0.0.1, the embedded
 * authority as the API server.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { randomBytes } from 'node:crypto';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { startSecureEndpoint, scrape, rawRequest, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';
import { eventually, within } from '../helpers/process.js';

const logs = new LogCapture();
let cluster: TestCluster;
let ep: SecureEndpoint;
/** A second endpoint with maxConnections 40, flooded with idle connections from the start. */
let idleEp: SecureEndpoint;
const idleT0 = { ms: 0 };
const idleClosedAt: number[] = [];
let reader = '';
let unbound = '';
let poster = '';

/** A slowloris and idle sockets opened at the start; checked at the end (so their timeouts overlap other tests). */
const background: {
  slowClosedAfterMs?: number;
  slowStarted: number;
  slowDone?: Promise<void>;
  idleLastClosedMs?: number;
  idle: net.Socket[];
} = {
  slowStarted: 0,
  idle: [],
};

function isMetricsBody(body: string): boolean {
  return /# (HELP|TYPE) /.test(body);
}

async function stillServing(): Promise<void> {
  const r = await scrape(ep.port, { token: reader });
  assert.equal(r.status, 200, `the server stopped serving: ${r.status} ${r.body.slice(0, 200)}`);
  assert.ok(isMetricsBody(r.body));
}

function headRequest(lines: string[], path = '/metrics', method = 'GET'): string {
  return [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...lines, '', ''].join('\r\n');
}

/** A TLS ClientHello record for `version` (0x0300 SSLv3, 0x0301 TLS 1.0, 0x0302 TLS 1.1, 0x0303 TLS 1.2), no supported_versions extension. */
function clientHello(version: number): Buffer {
  const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
  const ext = (type: number, body: Buffer) => Buffer.concat([u16(type), u16(body.length), body]);
  const groups = Buffer.from([0x00, 0x1d, 0x00, 0x17]);
  const sigs = Buffer.from([0x04, 0x03, 0x08, 0x04, 0x04, 0x01, 0x05, 0x03]);
  const extensions = Buffer.concat([
    ext(0x000a, Buffer.concat([u16(groups.length), groups])),
    ext(0x000b, Buffer.from([0x01, 0x00])),
    ext(0x000d, Buffer.concat([u16(sigs.length), sigs])),
  ]);
  const suites = Buffer.from([0xc0, 0x2b, 0xc0, 0x2f, 0xc0, 0x09, 0xc0, 0x13, 0x00, 0x2f, 0x00, 0x35]);
  const body = Buffer.concat([
    u16(version),
    randomBytes(32),
    Buffer.from([0]),
    u16(suites.length),
    suites,
    Buffer.from([1, 0]),
    u16(extensions.length),
    extensions,
  ]);
  const hs = Buffer.concat([Buffer.from([0x01, 0, body.length >> 8, body.length & 0xff]), body]);
  return Buffer.concat([Buffer.from([0x16]), u16(version === 0x0300 ? 0x0300 : 0x0301), u16(hs.length), hs]);
}

/** The first record the server sends back to a raw hello: 0x16 handshake (a ServerHello), 0x15 alert, or 'closed'. */
function firstRecord(port: number, hello: Buffer): Promise<{ type: number | 'closed'; bytes: Buffer }> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(hello));
    let buf = Buffer.alloc(0);
    const t = setTimeout(() => done('closed'), 10_000);
    const done = (type: number | 'closed') => {
      clearTimeout(t);
      s.destroy();
      resolve({ type, bytes: buf });
    };
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 5) done(buf[0]);
    });
    s.on('error', () => done('closed'));
    s.on('close', () => done('closed'));
  });
}

describe('bad input: every request is answered as stated and the server keeps serving', { timeout: 150_000 }, () => {
  before(async () => {
    cluster = await startTestCluster();
    const managerConfig = await cluster.managerConfig();
    logs.secret(managerConfig.token!);
    reader = logs.secret(await cluster.readerToken());
    unbound = logs.secret(await cluster.serviceAccountToken('monitoring', 'unbound'));
    // an identity allowed to "post /metrics" only: proves the verb checked for POST is `post`
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'metrics-poster' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['post'] }],
    });
    poster = logs.secret(await cluster.serviceAccountToken('monitoring', 'poster'));
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'metrics-poster' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-poster' },
      subjects: [{ kind: 'ServiceAccount', name: 'poster', namespace: 'monitoring' }],
    });
    ep = await startSecureEndpoint(managerConfig);
    await stillServing();
    idleEp = await startSecureEndpoint(managerConfig, { metrics: { maxConnections: 40 } });
    // idle TCP connections that never say anything, more than maxConnections
    idleT0.ms = Date.now();
    for (let i = 0; i < 60; i++) {
      const s = net.connect(idleEp.port, '127.0.0.1');
      s.on('error', () => undefined);
      s.on('close', () => idleClosedAt.push(Date.now() - idleT0.ms));
      background.idle.push(s);
    }

    // slowloris: the request head trickled one byte a second; the header timeout (10 s) must close it
    background.slowStarted = Date.now();
    background.slowDone = new Promise<void>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port: ep.port, rejectUnauthorized: false }, () => {
        s.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
        let i = 0;
        const tick = setInterval(() => {
          if (i++ > 120) return s.destroy();
          s.write('X');
        }, 1000);
        s.once('close', () => clearInterval(tick));
      });
      s.on('error', () => undefined);
      s.once('close', () => {
        background.slowClosedAfterMs = Date.now() - background.slowStarted;
        resolve();
      });
    });
  });

  after(async () => {
    for (const s of background.idle) s.destroy();
    await ep?.stop();
    await idleEp?.stop();
    await cluster?.stop();
    logs.restore();
    const leaks = logs.leaks();
    assert.deepEqual(leaks, [], 'a secret reached a log line');
  });

  test('Authorization header variants → 401 (431 when oversized)', async () => {
    const cases: Array<[string, string[], number[]]> = [
      ['missing', [], [401]],
      ['empty', ['Authorization: '], [401]],
      ['Basic', ['Authorization: Basic ' + Buffer.from('admin:admin').toString('base64')], [401]],
      ['Bearer without a token', ['Authorization: Bearer'], [401]],
      ['Bearer and spaces', ['Authorization: Bearer    '], [401]],
      [
        'two headers with the valid token',
        [`Authorization: Bearer ${reader}`, `Authorization: Bearer ${reader}`],
        [401],
      ],
      ['valid token then junk', [`Authorization: Bearer ${reader} extra`], [401]],
      ['token with a TAB inside', [`Authorization: Bearer ${reader.slice(0, 10)}\t${reader.slice(10)}`], [401]],
      ['invalid token', [`Authorization: Bearer ${logs.secret(randomBytes(24).toString('hex'))}`], [401]],
      [
        'token of 10 KB (longer than any service-account token)',
        [`Authorization: Bearer ${logs.secret('t' + randomBytes(5000).toString('hex'))}`],
        [401],
      ],
      ['token of 100 KB', [`Authorization: Bearer ${logs.secret('u' + randomBytes(50_000).toString('hex'))}`], [431]],
    ];
    for (const [what, lines, want] of cases) {
      const r = await rawRequest(ep.port, headRequest(lines));
      assert.ok(want.includes(r.status), `${what}: got ${r.status} (${r.text.slice(0, 120)}), want ${want.join('/')}`);
      assert.ok(!isMetricsBody(r.text), `${what}: metrics served`);
    }
    // control characters the HTTP parser itself refuses: 400 from the parser, never reaching the handler
    for (const ch of ['\x00', '\x01', '\x1b', '\x7f']) {
      const r = await rawRequest(
        ep.port,
        headRequest([`Authorization: Bearer ${reader.slice(0, 10)}${ch}${reader.slice(10)}`]),
      );
      assert.ok([400, 401].includes(r.status), `control char ${JSON.stringify(ch)}: got ${r.status}`);
      assert.ok(!isMetricsBody(r.text));
    }
    // the scheme is case-insensitive, as in Kubernetes
    assert.equal((await rawRequest(ep.port, headRequest([`Authorization: bearer ${reader}`]))).status, 200);
    await stillServing();
  });

  test('a valid token of an unbound identity → 403', async () => {
    const r = await scrape(ep.port, { token: unbound });
    assert.equal(r.status, 403);
    assert.match(r.body, /Authorization denied for user system:serviceaccount:monitoring:unbound/);
    await stillServing();
  });

  test('POST/PUT/DELETE /metrics are checked as verbs post/put/delete and denied by the reader role', async (t) => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await scrape(ep.port, { token: reader, method });
      assert.equal(r.status, 403, `${method} with the reader token: ${r.status}`);
      assert.ok(!isMetricsBody(r.body));
    }
    // an identity allowed only "post /metrics": GET is denied, POST passes authorization (so the verb was `post`)
    assert.equal((await scrape(ep.port, { token: poster })).status, 403);
    const post = await scrape(ep.port, { token: poster, method: 'POST' });
    assert.notEqual(post.status, 403, 'POST by an identity allowed to post was denied: the verb is not `post`');
    assert.notEqual(post.status, 401);
    t.diagnostic(`POST /metrics by an identity allowed to post: ${post.status}`);
    await stillServing();
  });

  test('path tricks are never served without authorization', async () => {
    const paths = [
      '/metrics/',
      '//metrics',
      '/metrics?x',
      '/metrics?x=1&y',
      '/%6Detrics',
      '/%6detrics',
      '/metrics/../metrics',
      '/./metrics',
      '/metrics%00',
      '/metrics#x',
      '/METRICS',
      '/metrics;x',
    ];
    for (const p of paths) {
      for (const [who, lines] of [
        ['no token', []],
        ['unbound token', [`Authorization: Bearer ${unbound}`]],
      ] as Array<[string, string[]]>) {
        const r = await rawRequest(ep.port, headRequest(lines, p));
        assert.ok(r.status !== 0, `${p} (${who}): no HTTP answer`);
        assert.ok(r.status !== 200 && !isMetricsBody(r.text), `${p} (${who}): served with ${r.status}`);
      }
    }
    // with the reader token the query string does not matter
    assert.equal(
      (await rawRequest(ep.port, headRequest([`Authorization: Bearer ${reader}`], '/metrics?x'))).status,
      200,
    );
    await stillServing();
  });

  test('keep-alive: every request is decided on its own (a pipelined request without a token after an allowed one gets 401)', async () => {
    const one = (lines: string[]) => ['GET /metrics HTTP/1.1', 'Host: 127.0.0.1', ...lines, '', ''].join('\r\n');
    const r = await rawRequest(
      ep.port,
      one([`Authorization: Bearer ${reader}`]) +
        one([]) +
        one([`Authorization: Bearer ${unbound}`, 'Connection: close']),
      15_000,
      true,
    );
    const statuses = [...r.text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
    assert.deepEqual(statuses, [200, 401, 403]);
    // request smuggling shapes are refused by the parser
    const smuggle = await rawRequest(
      ep.port,
      [
        'POST /metrics HTTP/1.1',
        'Host: 127.0.0.1',
        'Content-Length: 4',
        'Transfer-Encoding: chunked',
        'Connection: close',
        '',
        '0',
        '',
        'GET /metrics HTTP/1.1',
        'Host: x',
        '',
        '',
      ].join('\r\n'),
    );
    assert.ok(!isMetricsBody(smuggle.text), 'a smuggled request was served');
    await stillServing();
  });

  test('plain HTTP to the TLS port is refused', async () => {
    const res = await new Promise<string>((resolve) => {
      let text = '';
      const s = net.connect(ep.port, '127.0.0.1', () => s.write(headRequest([`Authorization: Bearer ${reader}`])));
      const t = setTimeout(() => {
        s.destroy();
        resolve(text + '[timeout]');
      }, 12_000);
      s.on('data', (d: Buffer) => (text += d.toString('latin1')));
      s.on('error', () => undefined);
      s.on('close', () => {
        clearTimeout(t);
        resolve(text);
      });
    });
    assert.ok(!res.includes('[timeout]'), 'the plain-HTTP connection was left open');
    assert.ok(!/^HTTP\/1\.1 200/.test(res) && !isMetricsBody(res), `plain HTTP was served: ${res.slice(0, 100)}`);
    await stillServing();
  });

  test('SSLv3, TLS 1.0 and TLS 1.1 hellos are refused; TLS 1.2 is accepted', async () => {
    for (const [name, v] of [
      ['SSLv3', 0x0300],
      ['TLS 1.0', 0x0301],
      ['TLS 1.1', 0x0302],
    ] as Array<[string, number]>) {
      const r = await firstRecord(ep.port, clientHello(v));
      assert.ok(
        r.type === 0x15 || r.type === 'closed',
        `${name}: the server answered a record of type ${r.type} (a ServerHello is 0x16)`,
      );
    }
    const ok = await firstRecord(ep.port, clientHello(0x0303));
    assert.equal(ok.type, 0x16, 'control: a TLS 1.2 hello gets a ServerHello');
    // and through OpenSSL's client with the version pinned
    for (const [minVersion, maxVersion] of [
      ['TLSv1', 'TLSv1'],
      ['TLSv1.1', 'TLSv1.1'],
    ] as const) {
      const err = await new Promise<Error | undefined>((resolve) => {
        const s = tls.connect(
          {
            host: '127.0.0.1',
            port: ep.port,
            rejectUnauthorized: false,
            minVersion,
            maxVersion,
            ciphers: 'DEFAULT@SECLEVEL=0',
          },
          () => {
            s.destroy();
            resolve(undefined);
          },
        );
        s.on('error', (e) => resolve(e));
      });
      assert.ok(err, `${maxVersion} handshake succeeded`);
    }
    await stillServing();
  });

  test('ALPN h2 is not negotiated when HTTP/2 is off', async () => {
    const negotiated = (protocols: string[]) =>
      // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- 'refused' names the third outcome
      new Promise<string | false | 'refused'>((resolve) => {
        const s = tls.connect(
          { host: '127.0.0.1', port: ep.port, rejectUnauthorized: false, ALPNProtocols: protocols },
          () => {
            const p = s.alpnProtocol;
            s.destroy();
            resolve(p ?? false);
          },
        );
        s.on('error', () => resolve('refused'));
      });
    const h2only = await negotiated(['h2']);
    assert.ok(h2only === false || h2only === 'refused', `h2 alone: ${h2only}`);
    assert.equal(await negotiated(['h2', 'http/1.1']), 'http/1.1');
    await stillServing();
  });

  test('slowloris is closed by the header timeout', async (t) => {
    await within(background.slowDone!, 60_000, 'slowloris connection closed');
    t.diagnostic(`slowloris closed after ${background.slowClosedAfterMs} ms`);
    assert.ok(
      background.slowClosedAfterMs! <= 25_000,
      `slowloris kept its connection ${background.slowClosedAfterMs} ms`,
    );
    await stillServing();
  });

  test('idle connections are bounded: beyond maxConnections the oldest idle ones are closed at once, the rest by the handshake timeout', async (t) => {
    const closedAt = idleClosedAt;
    assert.ok(closedAt.length >= 20, 'connections beyond maxConnections (40) made room');
    assert.ok(
      closedAt.slice(0, 20).every((ms) => ms < 2_000),
      `the excess connections were not closed at once: ${closedAt.slice(0, 20)}`,
    );
    await eventually(
      () => closedAt.length === 60 || undefined,
      'idle connections closed by the TLS handshake timeout',
      20_000,
      250,
    );
    const last = Math.max(...closedAt);
    assert.ok(last <= 15_000, `the last idle connection was closed after ${last} ms`);
    t.diagnostic(
      `60 idle connections, maxConnections 40: ${closedAt.filter((ms) => ms < 1000).length} closed within 1 s to make room, last closed after ${last} ms`,
    );
    const r = await scrape(idleEp.port, { token: reader });
    assert.equal(r.status, 200, 'the endpoint serves again once the idle connections are gone');
    await stillServing();
  });
});

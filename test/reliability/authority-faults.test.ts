/**
 * Faults of the API server behind the filter (issue 9): a fault-injecting HTTPS proxy sits between the endpoint's
 * client and the embedded authority. Down, slow past the review deadline, 500, 429, malformed JSON, resets and
 * flapping: scrapes get 500 (never 200 or 403 without a decision), the server stays up, and it recovers as soon
 * as the authority answers again (failed look-ups are not cached), well within one cache TTL.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy, type Fault } from '../helpers/fault-proxy.js';
import { startSecureEndpoint, scrape, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';
import { eventually } from '../helpers/process.js';
import type { RestConfig } from '../../src/kube/config.js';

const TTL_MS = 3_000;
const REVIEW_TIMEOUT_MS = 1_500;

const logs = new LogCapture();
let cluster: TestCluster;
let proxy: FaultProxy;
let ep: SecureEndpoint;
let viaProxy: RestConfig;
let n = 0;

/** A token of a new identity bound to nothing (the filter has never decided for it). */
async function freshUnbound(): Promise<string> {
  return logs.secret(await cluster.serviceAccountToken('monitoring', `unbound-${++n}`));
}

/** A token the filter has never seen (so the scrape must ask the API), bound to the reader role. */
async function freshReader(): Promise<string> {
  return logs.secret(await cluster.readerToken('monitoring', `reader-${++n}`));
}

async function timed<T>(f: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  const value = await f();
  return { value, ms: Date.now() - t0 };
}

describe('authority faults: 500, never an allow without a decision; recovery at once', { timeout: 120_000 }, () => {
  before(async () => {
    cluster = await startTestCluster();
    const cfg = await cluster.managerConfig();
    logs.secret(cfg.token!);
    proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
    await proxy.start();
    viaProxy = { server: proxy.url, ca: proxy.caPem, token: cfg.token };
    ep = await startSecureEndpoint(viaProxy, {
      filter: { timeoutMs: REVIEW_TIMEOUT_MS, authnTTLms: TTL_MS, unauthnTTLms: TTL_MS, allowTTLms: TTL_MS, denyTTLms: TTL_MS },
    });
    assert.equal((await scrape(ep.port, { token: await freshReader() })).status, 200);
  });

  after(async () => {
    await ep?.stop();
    await proxy?.stop();
    await cluster?.stop();
    logs.restore();
    assert.deepEqual(logs.leaks(), [], 'a secret reached a log line');
  });

  const faults: Array<[string, Fault | 'down']> = [
    ['authority down (connection refused)', 'down'],
    ['slow beyond the review deadline', { kind: 'slow', delayMs: REVIEW_TIMEOUT_MS * 3 }],
    ['500 Internal Server Error', { kind: 'status', status: 500 }],
    ['429 Too Many Requests with Retry-After', { kind: 'status', status: 429, retryAfter: 1 }],
    ['malformed JSON', { kind: 'malformed' }],
    ['connection reset mid-request', { kind: 'reset' }],
  ];

  for (const [what, fault] of faults) {
    test(`${what}: 500 for new callers, server up, recovery within one TTL`, async () => {
      const reader = await freshReader();
      const unbound = await freshUnbound();
      if (fault === 'down') await proxy.down();
      else proxy.setFault(fault);
      try {
        const tokens = [reader, unbound, logs.secret(`invalid-${what.length}-${Date.now()}-token`)];
        const answers = await Promise.all(tokens.map((token) => timed(() => scrape(ep.port, { token, timeoutMs: 20_000 }))));
        for (const { value: r, ms } of answers) {
          assert.equal(r.status, 500, `${what}: got ${r.status} ${r.body}`);
          assert.match(r.body, /Authentication failed|Authorization for user .* failed/);
          assert.ok(ms < REVIEW_TIMEOUT_MS + 3_000, `${what}: the 500 took ${ms} ms (deadline ${REVIEW_TIMEOUT_MS} ms)`);
        }
        // the server itself is up: unknown paths answer 404 without asking the API
        assert.equal((await scrape(ep.port, { path: '/nope' })).status, 404);
      } finally {
        if (fault === 'down') await proxy.up();
        else proxy.setFault({ kind: 'pass' });
      }
      const back = Date.now();
      await eventually(async () => (await scrape(ep.port, { token: reader })).status === 200, `${what}: recovery`, TTL_MS, 100);
      assert.ok(Date.now() - back <= TTL_MS, 'recovered within one cache TTL');
      assert.equal((await scrape(ep.port, { token: unbound })).status, 403, 'denials are decided again');
    });
  }

  test('flapping authority: every answer is a real decision (200 reader, 403 unbound, 401 invalid) or a 500', async () => {
    proxy.setFault({ kind: 'flap', status: 500 });
    const seen = new Map<string, number>();
    try {
      for (let i = 0; i < 6; i++) {
        const reader = await freshReader();
        const invalid = logs.secret(`flap-invalid-token-${i}-${Date.now()}`);
        const unbound = await freshUnbound();
        const rs = await Promise.all([scrape(ep.port, { token: reader }), scrape(ep.port, { token: unbound }), scrape(ep.port, { token: invalid })]);
        const [a, b, c] = rs.map((r) => r.status);
        for (const [who, got, allowed] of [['reader', a, [200, 500]], ['unbound', b, [403, 500]], ['invalid', c, [401, 500]]] as Array<[string, number, number[]]>) {
          assert.ok(allowed.includes(got!), `flap ${i}: ${who} got ${got}`);
          seen.set(`${who}:${got}`, (seen.get(`${who}:${got}`) ?? 0) + 1);
        }
      }
    } finally {
      proxy.setFault({ kind: 'pass' });
    }
    // retries on 5xx make most flapping scrapes succeed; either way none was let in without a decision
    assert.ok((seen.get('reader:200') ?? 0) > 0, `no reader scrape got through the flapping: ${JSON.stringify([...seen])}`);
  });

  test('a cached allow keeps serving during an outage only until its TTL, then 500', async () => {
    const reader = await freshReader();
    assert.equal((await scrape(ep.port, { token: reader })).status, 200);
    await proxy.down();
    try {
      assert.equal((await scrape(ep.port, { token: reader })).status, 200, 'decided a moment ago: cached');
      await eventually(async () => (await scrape(ep.port, { token: reader, timeoutMs: 20_000 })).status === 500, 'the cached allow expires', TTL_MS + REVIEW_TIMEOUT_MS + 3_000, 250);
    } finally {
      await proxy.up();
    }
    await eventually(async () => (await scrape(ep.port, { token: reader })).status === 200, 'recovery', TTL_MS, 100);
  });

  test('the default review deadline (10 s) bounds a hanging authority', async () => {
    const def = await startSecureEndpoint(viaProxy);
    try {
      const reader = await freshReader();
      proxy.setFault({ kind: 'slow', delayMs: 14_000 });
      const { value: r, ms } = await timed(() => scrape(def.port, { token: reader, timeoutMs: 30_000 }));
      assert.equal(r.status, 500);
      assert.ok(ms >= 9_000 && ms < 13_000, `answered after ${ms} ms, want about 10 000`);
    } finally {
      proxy.setFault({ kind: 'pass' });
      await def.stop();
    }
  });
});

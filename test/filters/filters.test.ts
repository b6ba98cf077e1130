/**
 * The pieces of the authentication/authorization filter: bearer parsing, the decision cache (TTL, merged
 * look-ups, bound, errors not cached), and the Authenticator's TTLs against the embedded authority.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createLogger } from '../../packages/ctrlmetrics/src/util/log.js';
import { randomUUID } from 'node:crypto';
import { createMetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { scrape } from '../helpers/secure-endpoint.js';
import {
  authenticationAndAuthorization,
  authFilter,
  Authenticator,
  authorizationValues,
  MAX_TOKEN_LENGTH,
  parseBearerToken,
} from '../../packages/ctrlmetrics/src/metrics/filters/index.js';
import { DecisionCache } from '../../packages/ctrlmetrics/src/metrics/filters/cache.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { propertyParams } from '../helpers/property.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('parseBearerToken', () => {
  test('accepts one Bearer header with one token (scheme in any case, extra spaces before the token)', () => {
    assert.equal(parseBearerToken(['Bearer abc.def']), 'abc.def');
    assert.equal(parseBearerToken(['bearer abc']), 'abc');
    assert.equal(parseBearerToken(['BEARER   abc']), 'abc');
    assert.equal(parseBearerToken(['  Bearer abc  ']), 'abc');
  });

  test('refuses anything else', () => {
    for (const values of [
      [],
      ['Basic abc'],
      ['Bearer'],
      ['Bearer '],
      ['Bearer a b'],
      ['Bearerabc'],
      ['Bearer a\u00e9'],
      ['Bearer a', 'Bearer a'],
      ['Bearer ' + 'x'.repeat(MAX_TOKEN_LENGTH + 1)],
    ]) {
      assert.equal(parseBearerToken(values), undefined, JSON.stringify(values).slice(0, 80));
    }
  });

  test('every visible-ASCII token round-trips; any other scheme is refused', () => {
    const token = fc.stringMatching(/^[\x21-\x7e]{1,200}$/);
    fc.assert(
      fc.property(token, (t) => parseBearerToken([`Bearer ${t}`]) === t),
      propertyParams(100),
    );
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z]{1,10}$/).filter((s) => s.toLowerCase() !== 'bearer'),
        token,
        (scheme, t) => parseBearerToken([`${scheme} ${t}`]) === undefined,
      ),
      propertyParams(100),
    );
  });

  // The independent rule (the module comment of bearer.ts, stated on the value as received): exactly one value;
  // optional whitespace (SP, HTAB only: RFC 9110's OWS, what llhttp strips) around it; the scheme `bearer` in any
  // case; one or more spaces; 1..MAX_TOKEN_LENGTH visible ASCII characters; nothing after them.
  function expectedToken(values: readonly string[]): string | undefined {
    if (values.length !== 1) return undefined;
    const m = /^[ \t]*([^ ]*) +([\x21-\x7e]+)[ \t]*$/.exec(values[0]);
    return m && m[1].toLowerCase() === 'bearer' && m[2].length <= MAX_TOKEN_LENGTH ? m[2] : undefined;
  }

  test('property: any values give exactly the token the independent rule finds in them', () => {
    // whitespace other than SP/HTAB (NBSP, VT, FF, CR, LF, U+2028, BOM) is not optional whitespace in HTTP
    const space = fc.constantFrom('', ' ', '  ', '\t', ' \t', '\u00a0', '\v', '\f', '\r', '\n', '\u2028', '\ufeff');
    const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR', 'Basic', 'Bearer:', 'Bearerx', 'Bear', '');
    const token = fc.oneof(
      fc.stringMatching(/^[\x21-\x7e]{1,40}$/),
      fc.string({ unit: fc.constantFrom('a', '.', '-', ' ', '\t', '\u00a0', '\x01', '\x7f', 'é', '"'), maxLength: 12 }),
      fc.constantFrom('x'.repeat(MAX_TOKEN_LENGTH), 'x'.repeat(MAX_TOKEN_LENGTH + 1)),
    );
    const value = fc.tuple(space, scheme, space, token, space).map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        fc.oneof(
          { arbitrary: value.map((v) => [v]), weight: 4 },
          { arbitrary: fc.array(value, { maxLength: 3 }), weight: 1 },
        ),
        (values) => {
          assert.equal(parseBearerToken(values), expectedToken(values));
        },
      ),
      propertyParams(2000),
    );
  });

  test("whitespace that is not HTTP's optional whitespace is part of the value, not trimmed", () => {
    for (const ws of ['\u00a0', '\v', '\f', '\r', '\n', '\u2028', '\ufeff']) {
      assert.equal(parseBearerToken([`Bearer abc${ws}`]), undefined, JSON.stringify(ws));
      assert.equal(parseBearerToken([`${ws}Bearer abc`]), undefined, JSON.stringify(ws));
    }
    assert.equal(parseBearerToken([' \tBearer abc\t ']), 'abc');
  });

  test('authorizationValues keeps duplicate headers apart (case-insensitive name)', () => {
    assert.deepEqual(authorizationValues(['Host', 'x', 'authorization', 'Bearer a', 'AUTHORIZATION', 'Bearer b']), [
      'Bearer a',
      'Bearer b',
    ]);
  });
});

describe('DecisionCache', () => {
  test('concurrent look-ups of one key share one call', async () => {
    const cache = new DecisionCache<{ v: number }>(10, () => 60_000);
    let calls = 0;
    const lookup = async () => {
      calls++;
      await sleep(20);
      return { v: 1 };
    };
    // eslint-disable-next-line @typescript-eslint/await-thenable -- it answers a value or a promise of one
    const results = await Promise.all(Array.from({ length: 25 }, () => cache.get('k', lookup)));
    assert.equal(calls, 1);
    assert.ok(results.every((r) => r.v === 1));
    await cache.get('k', lookup);
    assert.equal(calls, 1, 'cached afterwards');
  });

  test('entries expire after their own TTL', async () => {
    const cache = new DecisionCache<{ ok: boolean }>(10, (v) => (v.ok ? 10_000 : 40));
    let calls = 0;
    const lookup = (ok: boolean) => async () => {
      calls++;
      return { ok };
    };
    await cache.get('good', lookup(true));
    await cache.get('bad', lookup(false));
    await sleep(80);
    await cache.get('good', lookup(true));
    await cache.get('bad', lookup(false));
    assert.equal(calls, 3, 'the short-TTL entry was looked up again, the long one was not');
  });

  test('failures are not cached and reach every waiter', async () => {
    const cache = new DecisionCache<{ v: number }>(10, () => 60_000);
    let calls = 0;
    const failing = async () => {
      calls++;
      await sleep(10);
      throw new Error('api down');
    };
    const outcomes = await Promise.allSettled([cache.get('k', failing), cache.get('k', failing)]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    assert.equal(calls, 1);
    assert.equal(cache.pending, 0);
    assert.equal((await cache.get('k', async () => ({ v: 2 }))).v, 2);
  });

  test('a cached value comes back as is, a look-up as a promise', async () => {
    const cache = new DecisionCache<{ v: number }>(10, () => 60_000);
    const first = cache.get('k', async () => ({ v: 1 }));
    assert.ok(first instanceof Promise, 'the first look-up is asynchronous');
    assert.equal((await first).v, 1);
    const hit = cache.get('k', async () => {
      throw new Error('a hit must not look up');
    });
    assert.ok(!(hit instanceof Promise), 'a hit is returned without a promise');
    assert.equal(hit.v, 1);
  });

  test('a stale policy: an expired allow answers only when its refresh fails for an accepted reason, and only within its window', async () => {
    let t = 0;
    const clock = { now: () => t };
    const served: number[] = [];
    const cache = new DecisionCache<{ ok: boolean; n: number }>(10, () => 1_000, clock, {
      staleFor: (v) => (v.ok ? 5_000 : 0),
      usable: (err) => (err as Error).message === 'outage',
      onStale: (v) => served.push(v.n),
    });
    const fail = (message: string) => async () => {
      throw new Error(message);
    };
    const stands: boolean[] = [];
    assert.equal((await cache.get('allow', async (s) => (stands.push(s), { ok: true, n: 1 }))).n, 1);
    await cache.get('deny', async () => ({ ok: false, n: 2 }));
    t = 1_500; // past the TTL
    assert.equal(
      (await cache.get('allow', async (s) => (stands.push(s), Promise.reject(new Error('outage'))))).n,
      1,
      'served stale',
    );
    assert.deepEqual(stands, [false, true], 'the refresh learns that a stale value stands by');
    await assert.rejects(
      Promise.resolve(cache.get('allow', fail('malformed answer'))),
      /malformed answer/,
      'only accepted failures fall back',
    );
    await assert.rejects(Promise.resolve(cache.get('deny', fail('outage'))), /outage/, 'a deny is never served stale');
    t = 5_900; // within TTL + stale window
    assert.equal((await cache.get('allow', fail('outage'))).n, 1);
    t = 6_100; // past it
    await assert.rejects(Promise.resolve(cache.get('allow', fail('outage'))), /outage/);
    assert.deepEqual(served, [1, 1]);
    // while the API answers, an expired entry is simply looked up again
    t = 10_000;
    assert.equal((await cache.get('allow', async () => ({ ok: true, n: 3 }))).n, 3);
    t = 10_500;
    const hit = cache.get('allow', fail('must not look up'));
    assert.ok(!(hit instanceof Promise), 'fresh again: answered from the cache');
    assert.equal(hit.n, 3);
  });

  test('holds at most max entries', async () => {
    const cache = new DecisionCache<{ v: number }>(50, () => 60_000);
    for (let i = 0; i < 500; i++) await cache.get(`k${i}`, async () => ({ v: i }));
    assert.ok(cache.size <= 50, `size ${cache.size}`);
  });
});

describe('Authenticator against the embedded authority', () => {
  let cluster: TestCluster;
  let client: KubeClient;
  const calls: string[] = [];
  before(async () => {
    cluster = await startTestCluster();
    client = new KubeClient(await cluster.managerConfig());
    client.observer = (code, method) => method === 'POST' && calls.push(code);
  });
  after(async () => {
    client?.close();
    await cluster?.stop();
  });

  test('TTLs are configurable: an expired authentication is reviewed again', async () => {
    const auth = new Authenticator(client, { authnTTLms: 50 });
    const token = await cluster.readerToken();
    const first = await auth.authenticate(token);
    assert.equal(first.authenticated, true);
    assert.equal(first.authenticated && first.user.username, 'system:serviceaccount:monitoring:prometheus');
    const n = calls.length;
    await auth.authenticate(token);
    assert.equal(calls.length, n, 'within the TTL: cached');
    await sleep(100);
    await auth.authenticate(token);
    assert.equal(calls.length, n + 1, 'after the TTL: a new TokenReview');
  });

  test('allow and deny decisions of the SubjectAccessReview', async () => {
    const auth = new Authenticator(client);
    const a = await auth.authenticate(await cluster.readerToken());
    assert.ok(a.authenticated);
    const user = { ...a.user, groups: [...a.user.groups, 'system:authenticated'] };
    assert.equal((await auth.authorize(user, '/metrics', 'get')).allowed, true);
    assert.equal((await auth.authorize(user, '/metrics', 'put')).allowed, false);
    assert.equal((await auth.authorize(user, '/debug', 'get')).allowed, false);
  });

  test('with warm caches the filter calls the handler synchronously, with no promise to wait for', async () => {
    const auth = new Authenticator(client);
    const token = await cluster.readerToken();
    let handled = 0;
    const filtered = authFilter(auth)(createLogger('test'), () => {
      handled++;
    });
    const request = () =>
      ({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${token}` },
        rawHeaders: ['Authorization', `Bearer ${token}`],
      }) as unknown as IncomingMessage;
    const response = {} as ServerResponse;
    const cold = filtered(request(), response);
    assert.equal(handled, 0, 'a cold request waits for the TokenReview');
    await cold;
    assert.equal(handled, 1);
    const n = calls.length;
    const warm = filtered(request(), response);
    assert.equal(handled, 2, 'a warm request reached the handler before the filter returned');
    await warm;
    assert.equal(calls.length, n, 'no review for the warm request');
  });

  test("the filter reviews through its own client: a flood of new tokens leaves the manager's client and its rate limit untouched", async () => {
    const restConfig = await cluster.managerConfig();
    // a manager client that could make one call a second: any review through it would queue or fail on its limiter
    const manager = new KubeClient({ ...restConfig, qps: 1, burst: 1 });
    const managerCalls: string[] = [];
    manager.observer = (code, method) => managerCalls.push(`${method} ${code}`);
    const server = createMetricsServer(
      {
        bindAddress: '127.0.0.1:0',
        filterProvider: authenticationAndAuthorization({ rateLimitWaitMs: 100 }),
        shutdownTimeoutMs: 2_000,
      },
      { restConfig, kubeClient: manager, logger: createLogger('isolation-under-test') },
    );
    await server.start();
    try {
      const garbage = Array.from({ length: 40 }, (_, i) => `garbage-${i}-${randomUUID()}`);
      const answers = await Promise.all([
        ...garbage.map((token) => scrape(server.port, { token })),
        scrape(server.port, { token: await cluster.readerToken() }),
      ]);
      assert.deepEqual(
        answers.slice(0, -1).map((r) => r.status),
        garbage.map(() => 401),
        'every garbage token reviewed and refused',
      );
      assert.equal(answers.at(-1)!.status, 200, 'the reader is served');
      assert.deepEqual(managerCalls, [], "no review went through the manager's client");
      const t0 = performance.now();
      await manager.get('/version', { maxRateLimitWaitMs: 0 });
      assert.ok(
        performance.now() - t0 < 1_000,
        "the manager's one call a second is still there, not spent by the filter",
      );
    } finally {
      await server.stop();
      manager.close();
    }
  });

  test('a saturated new-token lane answers 503 with Retry-After, while a known token whose decision expired and a new cluster-signed token are served', async () => {
    const restConfig = await cluster.managerConfig();
    const server = createMetricsServer(
      {
        bindAddress: '127.0.0.1:0',
        // one review of a never-seen token per second, none waiting longer than 200 ms
        filterProvider: authenticationAndAuthorization({
          authnTTLms: 50,
          admission: { new: { concurrency: 1, queue: 1, maxWaitMs: 200, qps: 1, burst: 1 } },
        }),
        shutdownTimeoutMs: 2_000,
      },
      { restConfig, logger: createLogger('lanes-under-test') },
    );
    await server.start();
    try {
      const reader = await cluster.readerToken();
      assert.equal(
        (await scrape(server.port, { token: reader })).status,
        200,
        "first scrape: the reader becomes known (and spends the new lane's token)",
      );
      await sleep(100); // the reader's authentication (50 ms) has expired
      const garbage = await Promise.all(
        Array.from({ length: 10 }, () => scrape(server.port, { token: `garbage-${randomUUID()}` })),
      );
      const statuses = garbage.map((r) => r.status);
      assert.ok(
        statuses.every((st) => st === 503 || st === 401),
        JSON.stringify(statuses),
      );
      assert.ok(
        statuses.filter((st) => st === 503).length >= 9,
        `the new lane is saturated: ${JSON.stringify(statuses)}`,
      );
      const refused = garbage.find((r) => r.status === 503)!;
      assert.equal(refused.headers['retry-after'], '1');
      assert.match(refused.body, /^Too many new tokens to review: retry in 1 s\n$/);
      assert.equal(
        (await scrape(server.port, { token: reader })).status,
        200,
        'the known reader is re-validated in its own lane',
      );
      const newcomer = await cluster.readerToken('monitoring', 'newcomer');
      assert.equal(
        (await scrape(server.port, { token: newcomer })).status,
        200,
        'a never-seen token the cluster signed takes the signed lane',
      );
    } finally {
      await server.stop();
    }
  });
});

// The filter's own metrics, read from the endpoint's /metrics as Prometheus reads them: requests by the
// code the filter answered (200 passed, 401, 403, 500, 503), cache hits and misses, review latencies, reviews in
// flight, and stale decisions during an API outage. Expected deltas come from the requests the test makes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { scrape, startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { parseExposition } from '../../packages/cli/src/ops/exposition.js';

describe("the filter's metrics", () => {
  let cluster: TestCluster;
  let proxy: FaultProxy;
  let ep: SecureEndpoint;
  let forbidden: SecureEndpoint;
  let reader: string;
  let unbound: string;
  const clock = new ManualClock();

  /** The value of one series of the endpoint's exposition (0 when absent). */
  const read = async () => {
    const r = await scrape(ep.port, { token: reader });
    assert.equal(r.status, 200, r.body);
    const samples = parseExposition(r.body);
    return (name: string, labels: Record<string, string> = {}) =>
      samples
        .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((a, s) => a + s.value, 0);
  };

  before(async () => {
    cluster = await startTestCluster();
    proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
    await proxy.start();
    const cfg = await cluster.managerConfig();
    const viaProxy = { server: proxy.url, ca: proxy.caPem, token: cfg.token };
    ep = await startSecureEndpoint(viaProxy, { filter: { cacheClock: clock, timeoutMs: 1_500 } });
    // a manager identity without the metrics-auth-role: its reviews are refused (500)
    const unprivileged = await cluster.serviceAccountToken('ctrlmetrics-system', 'unprivileged-manager');
    forbidden = await startSecureEndpoint(
      { ...cluster.authority.restConfig, token: unprivileged, cert: undefined, key: undefined },
      { filter: { timeoutMs: 1_500 } },
    );
    reader = await cluster.readerToken('monitoring', 'prometheus');
    unbound = await cluster.serviceAccountToken('monitoring', 'unbound');
  });
  after(async () => {
    await forbidden?.stop();
    await ep?.stop();
    await proxy?.stop();
    await cluster?.stop();
  });

  it('requests by code, cache hits and misses, review latencies; stale answers during an outage', async () => {
    const first = await read(); // the reader's own first scrape: a miss in each cache, two reviews
    assert.ok(
      first('ctrlmetrics_filter_review_duration_seconds_count', { review: 'TokenReview', result: 'success' }) >= 1,
    );
    assert.equal(first('ctrlmetrics_filter_reviews_in_flight', { review: 'TokenReview' }), 0);
    await scrape(ep.port, {}); // 401: no token
    await scrape(ep.port, { token: 'not-a-token-at-all' }); // 401: not authenticated
    await scrape(ep.port, { token: unbound }); // 403
    await scrape(ep.port, { token: unbound }); // 403, from the caches
    await scrape(forbidden.port, { token: reader }); // 500 (the other endpoint, same global families)
    const m = await read();
    const delta = (name: string, labels: Record<string, string>) => m(name, labels) - first(name, labels);
    // read() itself counts: the scrape that produced `m` was passed (200) and hit both caches
    assert.equal(delta('ctrlmetrics_filter_requests_total', { code: '200' }), 1);
    assert.equal(delta('ctrlmetrics_filter_requests_total', { code: '401' }), 2);
    assert.equal(delta('ctrlmetrics_filter_requests_total', { code: '403' }), 2);
    assert.equal(delta('ctrlmetrics_filter_requests_total', { code: '500' }), 1);
    assert.equal(
      delta('ctrlmetrics_filter_cache_requests_total', { cache: 'authentication', result: 'hit' }),
      2,
      'the reader again, the unbound token again',
    );
    assert.equal(
      delta('ctrlmetrics_filter_cache_requests_total', { cache: 'authentication', result: 'miss' }),
      3,
      'the bad token, the unbound token, the reader at the forbidden endpoint',
    );
    assert.equal(delta('ctrlmetrics_filter_cache_requests_total', { cache: 'authorization', result: 'hit' }), 2);
    assert.equal(delta('ctrlmetrics_filter_cache_requests_total', { cache: 'authorization', result: 'miss' }), 1);
    assert.equal(
      delta('ctrlmetrics_filter_review_duration_seconds_count', { review: 'SubjectAccessReview', result: 'success' }),
      1,
    );
    assert.ok(
      delta('ctrlmetrics_filter_review_duration_seconds_count', { review: 'TokenReview', result: 'error' }) >= 1,
      'the refused review',
    );

    // an outage past the TTLs: the reader's allow answers stale, a new token gets 503
    await proxy.down();
    try {
      await clock.advance(301_000);
      assert.equal((await scrape(ep.port, { token: reader, timeoutMs: 20_000 })).status, 200);
      const newcomer = await cluster.readerToken('monitoring', 'newcomer');
      assert.equal((await scrape(ep.port, { token: newcomer, timeoutMs: 20_000 })).status, 503);
      const o = await read();
      assert.ok(
        o('ctrlmetrics_filter_cache_requests_total', { result: 'stale' }) -
          m('ctrlmetrics_filter_cache_requests_total', { result: 'stale' }) >=
          2,
        'stale answers counted',
      );
      assert.equal(
        o('ctrlmetrics_filter_requests_total', { code: '503' }) -
          m('ctrlmetrics_filter_requests_total', { code: '503' }),
        1,
      );
    } finally {
      await proxy.up();
    }
  });
});

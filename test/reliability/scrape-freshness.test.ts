/**
 * Freshness under concurrent scrapes: the server shares renders among scrapes, but a scrape whose
 * request was sent after an update must include it, even when a render of the same format started earlier is
 * still streaming. 8 keep-alive connections over real TLS scrape a 100k-line registry; before each request a
 * counter is incremented, and the answer must show at least the value it had when the request was sent.
 * Bounded: 8 connections × 8 requests, each with its own timeout.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import tls from 'node:tls';
import { Counter, Histogram, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { createMetricsServer, type MetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/util/log.js';
import { request } from '../server/helpers.js';

setLogSink(() => undefined);

const CONNECTIONS = 8;
const REQUESTS_PER_CONNECTION = 8;
/** 10 counter and 10 histogram vectors of 667 series: ≈ 100k sample lines, as in `npm run bench`. */
const VECTORS = 10;
const SERIES = 667;

const registry = new Registry();
const fresh = new Counter({
  name: 'fresh_updates_total',
  help: 'Incremented right before each request.',
  registers: [registry],
});
let server: MetricsServer;

before(async () => {
  for (let v = 0; v < VECTORS; v++) {
    const c = new Counter({
      name: `app_requests_${v}_total`,
      help: 'x',
      labelNames: ['route', 'code'],
      registers: [registry],
    });
    const h = new Histogram({
      name: `app_request_duration_${v}_seconds`,
      help: 'x',
      labelNames: ['route', 'code'],
      registers: [registry],
    });
    for (let i = 0; i < SERIES; i++) {
      c.labels(`/api/v1/resource/${i}`, String(200 + (i % 3))).inc(i);
      h.labels(`/api/v1/resource/${i}`, String(200 + (i % 3))).observe(i / SERIES);
    }
  }
  server = createMetricsServer({ bindAddress: '127.0.0.1:0', shutdownTimeoutMs: 2_000 }, { registry });
  await server.start();
});
after(() => server.stop());

/** The sample value of `fresh_updates_total` in a text or OpenMetrics body. */
function freshValue(body: string): number {
  const m = /^fresh_updates_total (\S+)$/m.exec(body);
  assert.ok(m, 'fresh_updates_total is in the answer');
  return Number(m[1]);
}

describe('a scrape includes every update made before its request was sent', { timeout: 120_000 }, () => {
  test(`${CONNECTIONS} connections × ${REQUESTS_PER_CONNECTION} scrapes of ≈100k lines, mixed formats and gzip`, async () => {
    const lines = (await registry.collect()).lineCount;
    assert.ok(lines > 95_000, `the registry has ≈100k lines (${lines})`);
    const stale: string[] = [];
    let scrapes = 0;
    const connection = async (c: number) => {
      const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (let r = 0; r < REQUESTS_PER_CONNECTION; r++) {
          fresh.inc();
          const expected = fresh.get();
          const headers: Record<string, string> = {};
          if (c % 2)
            headers.Accept = 'application/openmetrics-text;version=1.0.0;escaping=underscores,text/plain;q=0.5';
          if (c % 4 >= 2) headers['Accept-Encoding'] = 'gzip';
          const reply = await request(`${server.url}/metrics`, { agent, headers, timeoutMs: 30_000 });
          assert.equal(reply.status, 200);
          const got = freshValue(reply.text);
          if (got < expected)
            stale.push(`connection ${c} request ${r}: sent after ${expected} updates, answer shows ${got}`);
          scrapes++;
        }
      } finally {
        agent.destroy();
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, (_, c) => connection(c)));
    assert.equal(scrapes, CONNECTIONS * REQUESTS_PER_CONNECTION);
    assert.deepEqual(stale, [], `${stale.length} of ${scrapes} scrapes missed an update made before their request`);
  });
});

describe('a client that stops reading does not hold the other scrapes back', { timeout: 120_000 }, () => {
  test('3 scrapes, one after the other, complete and are fresh while a stalled reader holds its answer open', async () => {
    const port = new URL(server.url).port;
    const stalled = tls.connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false });
    try {
      await new Promise<void>((resolve, reject) => {
        stalled.once('error', reject);
        stalled.once('secureConnect', () => stalled.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
        // the first bytes of the answer prove the render is shared with this reader; then it reads no more
        stalled.once('data', () => {
          stalled.pause();
          resolve();
        });
      });
      for (let r = 0; r < 3; r++) {
        fresh.inc();
        const expected = fresh.get();
        const reply = await request(`${server.url}/metrics`, { timeoutMs: 30_000 });
        assert.equal(reply.status, 200);
        assert.ok(freshValue(reply.text) >= expected, `scrape ${r} includes the update made before it`);
      }
    } finally {
      stalled.destroy();
    }
  });
});

/**
 * Render blocks are reused between scrapes, so a block must never be handed to a new render while an
 * answer written from it may still be unsent. A reader that stops reading holds its answer (≈ 9 MB, far beyond
 * the loopback socket buffers) half written while later scrapes, each after every counter was incremented, are
 * rendered and answered; when it reads again its body must be whole and show its own generation's values only.
 * (Values are read while rendering, so the counters change only once a later scrape has been answered: its
 * render started after the held one's was done.)
 * Bounded: 4 later scrapes, each with a timeout; the held answer is drained within the test's timeout.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import { Counter, Histogram, Registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { createMetricsServer, type MetricsServer } from '../../packages/ctrlmetrics/src/metrics/server/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/util/log.js';
import { request } from '../server/helpers.js';

setLogSink(() => undefined);

const VECTORS = 10;
const SERIES = 667;
const LATER_SCRAPES = 4;

const registry = new Registry();
const counters: Counter[] = [];
let server: MetricsServer;

before(async () => {
  for (let v = 0; v < VECTORS; v++) {
    const c = new Counter({ name: `app_requests_${v}_total`, help: 'x', labelNames: ['route'], registers: [registry] });
    const h = new Histogram({
      name: `app_request_duration_${v}_seconds`,
      help: 'x',
      labelNames: ['route'],
      registers: [registry],
    });
    for (let i = 0; i < SERIES; i++) {
      c.labels(`/api/v1/resource/${i}`).inc(i);
      h.labels(`/api/v1/resource/${i}`).observe(i / SERIES);
    }
    counters.push(c);
  }
  server = createMetricsServer({ bindAddress: '127.0.0.1:0', shutdownTimeoutMs: 2_000 }, { registry });
  await server.start();
});
after(() => server.stop());

function incrementAll(): void {
  for (const c of counters) for (let i = 0; i < SERIES; i++) c.labels(`/api/v1/resource/${i}`).inc();
}

/** Checks that every counter line shows `i + generation` and the body is whole; returns the number of counter lines. */
function checkGeneration(body: string, generation: number, what: string): number {
  const re = /^app_requests_\d+_total\{route="\/api\/v1\/resource\/(\d+)"\} (\S+)$/gm;
  let n = 0;
  for (const m of body.matchAll(re)) {
    const want = Number(m[1]) + generation;
    if (Number(m[2]) !== want) assert.fail(`${what}: ${m[0]} should show ${want} (generation ${generation})`);
    n++;
  }
  assert.equal(n, VECTORS * SERIES, `${what}: every counter line is there`);
  assert.equal(
    body.split('\n').filter((l) => l.startsWith('app_request_duration_') && l.includes('_count{')).length,
    VECTORS * SERIES,
    `${what}: every histogram is there`,
  );
  return n;
}

/** A GET whose reader stops after the first bytes until `resume()` is called; `body` resolves once it has read all. */
function stalledScrape(gzip: boolean): Promise<{ resume: () => void; body: Promise<string> }> {
  return new Promise((resolveStarted, rejectStarted) => {
    const req = https.get(
      `${server.url}/metrics`,
      { rejectUnauthorized: false, headers: gzip ? { 'Accept-Encoding': 'gzip' } : {}, timeout: 60_000 },
      (res) => {
        assert.equal(res.statusCode, 200);
        const parts: Buffer[] = [];
        let resolveBody!: (s: string) => void;
        let rejectBody!: (e: Error) => void;
        const body = new Promise<string>((ok, fail) => ((resolveBody = ok), (rejectBody = fail)));
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const raw = Buffer.concat(parts);
          resolveBody((gzip ? gunzipSync(raw) : raw).toString('utf8'));
        });
        res.on('error', rejectBody);
        res.once('data', () => {
          res.pause();
          resolveStarted({ resume: () => res.resume(), body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('the stalled scrape timed out')));
    req.on('error', rejectStarted);
  });
}

for (const gzip of [false, true]) {
  test(
    `a held ${gzip ? 'gzip ' : ''}answer is not overwritten by the renders of later scrapes`,
    { timeout: 120_000 },
    async () => {
      const generation0 = counters[0].labels('/api/v1/resource/0').get();
      const stalled = await stalledScrape(gzip);
      // values are read while rendering: a scrape answered next starts its render only once the held one's is done
      for (let k = 0; k <= LATER_SCRAPES; k++) {
        if (k > 0) incrementAll();
        const reply = await request(`${server.url}/metrics`, {
          timeoutMs: 30_000,
          headers: gzip ? {} : { 'Accept-Encoding': 'gzip' },
        });
        assert.equal(reply.status, 200);
        checkGeneration(reply.text, generation0 + k, `later scrape ${k}`);
      }
      stalled.resume();
      checkGeneration(await stalled.body, generation0, 'the held answer');
    },
  );
}

/**
 * Property-based tests at the wire (issue 9), complementing the unit properties of the bearer parser
 * (test/filters) and of label escaping in the registry (test/metrics): here every case goes through the real
 * HTTPS endpoint.
 * - Any set of `Authorization` headers (random schemes, spacing, control and non-ASCII characters, duplicates)
 *   is served only when it is exactly one `Bearer <valid token>`; everything else is 400/401/431, never 200.
 * - Label values with `"`, `\`, newline, `,`, `=` stay one series each and round-trip through independent
 *   parsers of both formats, gzip or not, for our classes and for a user's prom-client collector — including the
 *   prom-client 15 case where `{a:"1,b:2"}` and `{a:"1",b:"2"}` are merged.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import * as promClient from 'prom-client';
import { Counter } from '../../src/metrics/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { startSecureEndpoint, rawRequest, scrape, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';
import { parseExposition } from '../controller/helpers/exposition.js';
import { parseOpenMetrics } from '../metrics/openmetrics-parser.js';

const logs = new LogCapture();
let cluster: TestCluster;
let ep: SecureEndpoint;
let reader = '';

before(async () => {
  cluster = await startTestCluster();
  const restConfig = await cluster.managerConfig();
  logs.secret(restConfig.token!);
  reader = logs.secret(await cluster.readerToken());
  ep = await startSecureEndpoint(restConfig);
});

after(async () => {
  await ep?.stop();
  await cluster?.stop();
  logs.restore();
  assert.deepEqual(logs.leaks(), [], 'a secret reached a log line');
});

describe('Authorization headers on the wire', { timeout: 120_000 }, () => {
  const scheme = fc.oneof(
    { arbitrary: fc.constantFrom('Bearer', 'bearer', 'BEARER'), weight: 3 },
    { arbitrary: fc.constantFrom('Basic', 'Token', 'Bearer:', 'Bearerx', '', 'Negotiate'), weight: 2 },
  );
  const gap = fc.constantFrom('', ' ', '  ', '\t', ' \t ');
  const junk = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '.', '-', '_', '~', ' ', '\t', '\x01', '\x7f', 'é', '"', ','), maxLength: 20 });
  const token = fc.oneof(
    fc.constant('VALID'),
    fc.constant('VALID'),
    junk,
    fc.tuple(junk, junk).map(([a, b]) => `${a}VALID${b}`),
  );
  const header = fc.tuple(gap, scheme, gap, token, gap);
  const headers = fc.oneof({ arbitrary: header.map((h) => [h]), weight: 3 }, { arbitrary: fc.array(header, { minLength: 0, maxLength: 3 }), weight: 2 });

  test('served only for exactly one "Bearer <valid token>"', async (t) => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(headers, async (hs) => {
        const values = hs.map(([g1, s, g2, tok, g3]) => `${g1}${s}${g2}${tok.replace('VALID', reader)}${g3}`);
        // llhttp strips leading/trailing whitespace of a value; the parser splits at the first run of spaces
        const valid =
          hs.length === 1 &&
          /^bearer$/i.test(hs[0]![1]) &&
          hs[0]![3] === 'VALID' &&
          !hs[0]![2].includes('\t') &&
          hs[0]![2].length > 0;
        const lines = values.map((v) => `Authorization: ${v}`);
        const r = await rawRequest(ep.port, ['GET /metrics HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', ...lines, '', ''].join('\r\n'));
        seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
        if (valid) assert.equal(r.status, 200, `valid header refused: ${JSON.stringify(values).replace(reader, 'TOKEN')}`);
        else assert.ok([400, 401].includes(r.status), `${r.status} for ${JSON.stringify(values).replace(reader, 'TOKEN')}`);
      }),
      { numRuns: 150 },
    );
    t.diagnostic(`answers: ${JSON.stringify([...seen])}`);
  });
});

describe('label values on the wire', { timeout: 120_000 }, () => {
  const tricky = fc.string({ unit: fc.constantFrom('"', '\\', '\n', ',', '=', ':', '{', '}', ' ', 'a', 'b', '1', '2', 'é'), maxLength: 8 });

  async function fetchBody(format: 'text' | 'openmetrics', gzip: boolean): Promise<string> {
    const accept = format === 'openmetrics' ? 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' : 'text/plain;version=0.0.4';
    if (!gzip) {
      const r = await scrape(ep.port, { token: reader, headers: { accept } });
      assert.equal(r.status, 200);
      return r.body;
    }
    const https = await import('node:https');
    return new Promise((resolve, reject) => {
      https
        .get({ host: '127.0.0.1', port: ep.port, path: '/metrics', rejectUnauthorized: false, agent: false, headers: { accept, 'accept-encoding': 'gzip', authorization: `Bearer ${reader}` } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const raw = Buffer.concat(chunks);
            resolve((res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'));
          });
        })
        .on('error', reject);
    });
  }

  function seriesOf(body: string, format: 'text' | 'openmetrics', family: string): Map<string, number> {
    const f = format === 'text' ? parseExposition(body).get(`${family}_total`) : parseOpenMetrics(body).get(family);
    assert.ok(f, `${family} missing from the ${format} exposition`);
    const out = new Map<string, number>();
    for (const s of f.samples) if (!s.name.endsWith('_created')) out.set(JSON.stringify([s.labels['a'], s.labels['b']]), s.value);
    return out;
  }

  let run = 0;
  for (const [kind, make] of [
    ['ctrlmetrics Counter', (name: string) => new Counter({ name: `${name}_total`, help: 'h', labelNames: ['a', 'b'] })],
    ['prom-client Counter (a user\'s collector)', (name: string) => new promClient.Counter({ name: `${name}_total`, help: 'h', labelNames: ['a', 'b'] })],
  ] as const) {
    test(`${kind}: one series per distinct label tuple, round-trip in text and OpenMetrics, gzip or not`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(tricky, tricky), { minLength: 1, maxLength: 8 }), fc.boolean(), async (tuples, gzip) => {
          const name = `wire_prop_${kind.startsWith('prom') ? 'pc' : 'cm'}_${++run}`;
          const c = make(name) as { labels(...v: string[]): { inc(): void } };
          const expected = new Map<string, number>();
          for (const [a, b] of tuples) {
            c.labels(a, b).inc();
            const k = JSON.stringify([a, b]);
            expected.set(k, (expected.get(k) ?? 0) + 1);
          }
          for (const format of ['text', 'openmetrics'] as const) {
            assert.deepEqual(seriesOf(await fetchBody(format, gzip), format, name), expected, `${format}${gzip ? ' gzip' : ''}`);
          }
        }),
        { numRuns: 25 },
      );
    });
  }

  // Known limit, documented in src/metrics/foreign.ts: prom-client 15 hashes label sets without escaping and merges
  // the two label sets inside its own storage before ctrlmetrics collects them (ctrlmetrics classes are not
  // affected: the property above). It cannot be undone from outside prom-client, so it is guarded: the endpoint
  // serves what prom-client holds, escaped correctly, and a warning names the family and the fix.
  test('the prom-client 15 collision case: {a:"1,b:2"} and {a:"1",b:"2"} are one series inside prom-client; served escaped, with a warning naming the family', async () => {
    const c = new promClient.Counter({ name: 'wire_collision_total', help: 'h', labelNames: ['a', 'b'] });
    c.inc({ a: '1,b:2' });
    c.inc({ a: '1', b: '2' });
    for (const format of ['text', 'openmetrics'] as const) {
      const got = seriesOf(await fetchBody(format, false), format, 'wire_collision');
      // prom-client kept the first label set it saw and counted both increments into it
      assert.deepEqual(got, new Map([[JSON.stringify(['1,b:2', undefined]), 2]]), `${format}: ${JSON.stringify([...got])}`);
    }
    const warnings = logs.lines.filter((l) => l.includes('"level":"warn"') && l.includes('"family":"wire_collision_total"'));
    assert.equal(warnings.length, 1, 'one warning for the family, however many scrapes');
    assert.match(warnings[0]!, /metrics\.Counter/);
  });
});

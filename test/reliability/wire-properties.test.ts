/**
 * Property-based tests at the wire, complementing the unit properties of the bearer parser
 * (test/filters) and of label escaping in the registry (test/metrics): here every case goes through the real
 * HTTPS endpoint.
 * - Any set of `Authorization` headers (random schemes, spacing, control and non-ASCII characters, duplicates)
 *   is served only when it is exactly one `Bearer <valid token>`, judged from the header values as sent;
 *   everything else is 400/401, never 200.
 * - Label values with `"`, `\`, newline, `,`, `=` stay one series each and round-trip through independent
 *   parsers of both formats, gzip or not, for our classes and for a user's prom-client collector — including the
 *   prom-client 15 case where `{a:"1,b:2"}` and `{a:"1",b:"2"}` are merged.
 *
 * Oracles judge what went on the wire, never how a generator built it. Each run draws a new seed; to replay a
 * failure from CI's log, pass the printed seed and path as `FC_SEED` and `FC_PATH` (see test/helpers/property.ts).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import * as promClient from 'prom-client';
import { Counter } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { startSecureEndpoint, rawRequest, scrape, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import { LogCapture } from '../helpers/log-capture.js';
import { parseExposition } from '../controller/helpers/exposition.js';
import { parseOpenMetrics } from '../metrics/openmetrics-parser.js';
import { propertyParams } from '../helpers/property.js';

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
  const junk = fc.string({
    unit: fc.constantFrom('a', 'Z', '0', '.', '-', '_', '~', ' ', '\t', '\x01', '\x7f', 'é', '"', ','),
    maxLength: 20,
  });
  const token = fc.oneof(
    fc.constant('VALID'),
    fc.constant('VALID'),
    junk,
    fc.tuple(junk, junk).map(([a, b]) => `${a}VALID${b}`),
  );
  const header = fc.tuple(gap, scheme, gap, token, gap);
  const headers = fc.oneof(
    { arbitrary: header.map((h) => [h]), weight: 3 },
    { arbitrary: fc.array(header, { minLength: 0, maxLength: 3 }), weight: 2 },
  );
  type Header = [string, string, string, string, string];

  /** The `Authorization` values as they go on the wire (`VALID` stands for the reader's token). */
  const wireValues = (hs: readonly Header[]): string[] => hs.map((parts) => parts.join('').replace('VALID', reader));

  /**
   * Whether a request with these `Authorization` values must be served, judged from the values as sent (never from
   * how the generator built them): exactly one header; llhttp drops the whitespace (SP, HTAB) around a field value;
   * then the scheme `bearer` in any case, one or more spaces, and the reader's token with nothing after it.
   */
  function mustServe(values: readonly string[]): boolean {
    if (values.length !== 1) return false;
    const value = values[0].replace(/^[ \t]+|[ \t]+$/g, '');
    const m = /^([^ ]*) +(.*)$/s.exec(value);
    return m !== null && m[1].toLowerCase() === 'bearer' && m[2] === reader;
  }

  /** Sends one request with `values` and checks the answer against {@link mustServe}; returns the status. */
  async function check(values: readonly string[]): Promise<number> {
    const lines = values.map((v) => `Authorization: ${v}`);
    const r = await rawRequest(
      ep.port,
      ['GET /metrics HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', ...lines, '', ''].join('\r\n'),
    );
    const shown = JSON.stringify(values).replaceAll(reader, 'TOKEN');
    if (mustServe(values)) assert.equal(r.status, 200, `valid header refused: ${shown}`);
    else assert.ok([400, 401].includes(r.status), `${r.status} for ${shown}`);
    return r.status;
  }

  // CI, seed -1869868216, path "2:0:0:2": the token's own leading space was the gap after the scheme, so the
  // header on the wire was `Bearer <token>` and was rightly served; the old oracle read the generator's parts.
  const tokenCarriesTheGap: Header[] = [['', 'Bearer', '', ' VALID', '']];

  test("regression (seed -1869868216): a gap that comes from the token's own leading space is served", async () => {
    assert.deepEqual(wireValues(tokenCarriesTheGap), [`Bearer ${reader}`]);
    assert.equal(await check(wireValues(tokenCarriesTheGap)), 200);
  });

  test("regression: CI's seed and path replay that counterexample through the property", async () => {
    const replayed: Header[][] = [];
    await fc.assert(
      fc.asyncProperty(headers, async (hs) => {
        replayed.push(hs);
        await check(wireValues(hs));
      }),
      { seed: -1869868216, path: '2:0:0:2', endOnFailure: true },
    );
    // if the generators above change, the seed draws something else: the fixed case above still holds the value
    assert.deepEqual(
      replayed,
      [tokenCarriesTheGap],
      'the generators changed: this seed no longer draws the CI counterexample',
    );
  });

  test('a byte 0xA0 (NBSP in latin1, as Node decodes header values) after the token is refused, not trimmed', async () => {
    for (const raw of [`Bearer ${reader}\xa0`, `\xa0Bearer ${reader}`, `Bearer ${reader}\x0b`]) {
      const request = Buffer.from(
        ['GET /metrics HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close', `Authorization: ${raw}`, '', ''].join('\r\n'),
        'latin1',
      );
      const r = await rawRequest(ep.port, request);
      assert.ok([400, 401].includes(r.status), `${r.status} for ${JSON.stringify(raw).replaceAll(reader, 'TOKEN')}`);
    }
  });

  test('the oracle itself, on hand-written values', () => {
    const yes = [[`Bearer ${reader}`], [`bearer   ${reader}`], [` \tBEARER ${reader} \t`]];
    const no = [
      [],
      [`Bearer\t${reader}`],
      [`Bearer ${reader} x`],
      [`Bearer ${reader}`, `Bearer ${reader}`],
      [`Bearer  ${reader}\x01`],
      [`Basic ${reader}`],
      [`Bearer: ${reader}`],
      ['Bearer '],
      [reader],
    ];
    for (const v of yes) assert.equal(mustServe(v), true, JSON.stringify(v).replaceAll(reader, 'TOKEN'));
    for (const v of no) assert.equal(mustServe(v), false, JSON.stringify(v).replaceAll(reader, 'TOKEN'));
  });

  test('served only for exactly one "Bearer <valid token>"', async (t) => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(headers, async (hs) => {
        const status = await check(wireValues(hs));
        seen.set(status, (seen.get(status) ?? 0) + 1);
      }),
      propertyParams(150),
    );
    t.diagnostic(`answers: ${JSON.stringify([...seen])}`);
  });
});

describe('label values on the wire', { timeout: 120_000 }, () => {
  const tricky = fc.string({
    unit: fc.constantFrom('"', '\\', '\n', ',', '=', ':', '{', '}', ' ', 'a', 'b', '1', '2', 'é'),
    maxLength: 8,
  });

  async function fetchBody(format: 'text' | 'openmetrics', gzip: boolean): Promise<string> {
    const accept =
      format === 'openmetrics'
        ? 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5'
        : 'text/plain;version=0.0.4';
    if (!gzip) {
      const r = await scrape(ep.port, { token: reader, headers: { accept } });
      assert.equal(r.status, 200);
      return r.body;
    }
    const https = await import('node:https');
    return new Promise((resolve, reject) => {
      https
        .get(
          {
            host: '127.0.0.1',
            port: ep.port,
            path: '/metrics',
            rejectUnauthorized: false,
            agent: false,
            headers: { accept, 'accept-encoding': 'gzip', authorization: `Bearer ${reader}` },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const raw = Buffer.concat(chunks);
              resolve((res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8'));
            });
          },
        )
        .on('error', reject);
    });
  }

  function seriesOf(body: string, format: 'text' | 'openmetrics', family: string): Map<string, number> {
    const f = format === 'text' ? parseExposition(body).get(`${family}_total`) : parseOpenMetrics(body).get(family);
    assert.ok(f, `${family} missing from the ${format} exposition`);
    const out = new Map<string, number>();
    for (const s of f.samples)
      if (!s.name.endsWith('_created')) out.set(JSON.stringify([s.labels['a'], s.labels['b']]), s.value);
    return out;
  }

  /**
   * The series a collector must serve after one increment per tuple: one per distinct tuple, counted, labelled as
   * first seen. `identity` says which tuples a collector holds as one series.
   */
  function expectedSeries(
    tuples: readonly (readonly [string, string])[],
    identity: (a: string, b: string) => string,
  ): Map<string, number> {
    const byIdentity = new Map<string, { labels: string; count: number }>();
    for (const [a, b] of tuples) {
      const id = identity(a, b);
      const s = byIdentity.get(id) ?? { labels: JSON.stringify([a, b]), count: 0 };
      s.count++;
      byIdentity.set(id, s);
    }
    return new Map([...byIdentity.values()].map((s) => [s.labels, s.count]));
  }

  // Ours tell every tuple apart. prom-client 15 keys a series by `a:<a>,b:<b>,` without escaping (the known limit
  // in src/metrics/foreign.ts, tested on its own below), so e.g. [",b:", ""] and ["", ",b:"] are one series there:
  // the endpoint must serve what prom-client holds. Without this, such draws failed CI at random.
  const distinctTuple = (a: string, b: string) => JSON.stringify([a, b]);
  const promClientKey = (a: string, b: string) => `a:${a},b:${b},`;

  test('prom-client 15 holds [",b:", ""] and ["", ",b:"] as one series (why the property models its key)', async () => {
    const name = 'wire_prop_pc_key';
    const c = new promClient.Counter({ name: `${name}_total`, help: 'h', labelNames: ['a', 'b'] });
    c.labels(',b:', '').inc();
    c.labels('', ',b:').inc();
    assert.deepEqual(
      seriesOf(await fetchBody('text', false), 'text', name),
      new Map([[JSON.stringify([',b:', '']), 2]]),
    );
  });

  let run = 0;
  for (const [kind, make, identity] of [
    [
      'ctrlmetrics Counter',
      (name: string) => new Counter({ name: `${name}_total`, help: 'h', labelNames: ['a', 'b'] }),
      distinctTuple,
    ],
    [
      "prom-client Counter (a user's collector)",
      (name: string) => new promClient.Counter({ name: `${name}_total`, help: 'h', labelNames: ['a', 'b'] }),
      promClientKey,
    ],
  ] as const) {
    test(`${kind}: one series per distinct label tuple, round-trip in text and OpenMetrics, gzip or not`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(tricky, tricky), { minLength: 1, maxLength: 8 }),
          fc.boolean(),
          async (tuples, gzip) => {
            const name = `wire_prop_${kind.startsWith('prom') ? 'pc' : 'cm'}_${++run}`;
            const c = make(name) as { labels(...v: string[]): { inc(): void } };
            for (const [a, b] of tuples) c.labels(a, b).inc();
            const expected = expectedSeries(tuples, identity);
            for (const format of ['text', 'openmetrics'] as const) {
              assert.deepEqual(
                seriesOf(await fetchBody(format, gzip), format, name),
                expected,
                `${format}${gzip ? ' gzip' : ''}`,
              );
            }
          },
        ),
        propertyParams(25),
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
      assert.deepEqual(
        got,
        new Map([[JSON.stringify(['1,b:2', undefined]), 2]]),
        `${format}: ${JSON.stringify([...got])}`,
      );
    }
    const warnings = logs.lines.filter(
      (l) => l.includes('"level":"warn"') && l.includes('"family":"wire_collision_total"'),
    );
    assert.equal(warnings.length, 1, 'one warning for the family, however many scrapes');
    assert.match(warnings[0], /metrics\.Counter/);
  });
});

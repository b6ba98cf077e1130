/**
 * The pure helpers behind the operations commands: kubectl's AGE and table layout, Go-style durations, the
 * exposition parser, and quantiles from histogram bucket deltas. Expected values are worked out by hand.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { formatTable, humanAge, parseDuration, toKubectlYaml } from '../../packages/cli/src/ops/output.js';
import {
  controllerTotals,
  filterExposition,
  parseExposition,
  quantileFromBuckets,
} from '../../packages/cli/src/ops/exposition.js';
import { explainStatus, type ScrapeTarget } from '../../packages/cli/src/ops/scrape.js';
import { bindingDifferences, buildBinding } from '../../packages/cli/src/ops/grant.js';

describe('kubectl output conventions', () => {
  test("AGE gets coarser with time like kubectl's", () => {
    const s = 1000;
    const cases: Array<[number, string]> = [
      [-5 * s, '<invalid>'],
      [0, '0s'],
      [119 * s, '119s'],
      [120 * s, '2m'],
      [(3 * 60 + 12) * s, '3m12s'],
      [25 * 60 * s, '25m'],
      [179 * 60 * s, '179m'],
      [(5 * 60 + 3) * 60 * s, '5h3m'],
      [8 * 3600 * s, '8h'],
      [47 * 3600 * s, '47h'],
      [(3 * 24 + 4) * 3600 * s, '3d4h'],
      [10 * 24 * 3600 * s, '10d'],
      [(2 * 365 + 10) * 24 * 3600 * s, '2y10d'],
      [9 * 365 * 24 * 3600 * s, '9y'],
    ];
    for (const [ms, want] of cases) assert.equal(humanAge(ms), want, `${ms} ms`);
  });

  test('tables: columns padded to the widest cell plus 3 spaces (at least 6), the last column unpadded', () => {
    assert.equal(
      formatTable(
        ['NAME', 'AGE'],
        [
          ['a', '5s'],
          ['longer-name', '10m'],
        ],
      ),
      'NAME          AGE\na             5s\nlonger-name   10m\n',
    );
    assert.equal(formatTable(['A', 'B'], [['x', 'y']]), 'A     B\nx     y\n');
  });

  test('YAML: sorted keys, unindented sequences, strings that YAML 1.1 would read otherwise are quoted', () => {
    assert.equal(
      toKubectlYaml({ b: ['x'], a: { d: '2026-01-01T00:00:00Z', c: 'yes' }, z: null }),
      'a:\n  c: "yes"\n  d: "2026-01-01T00:00:00Z"\nb:\n- x\nz: null\n',
    );
  });

  test('durations: Go syntax and bare seconds; nonsense is a usage error', () => {
    assert.equal(parseDuration('1h30m', '--d'), 5_400_000);
    assert.equal(parseDuration('500ms', '--d'), 500);
    assert.equal(parseDuration('90', '--d'), 90_000);
    assert.equal(parseDuration('2.5s', '--d'), 2500);
    assert.throws(() => parseDuration('5 minutes', '--d'), /--d: invalid duration/);
  });
});

describe('exposition', () => {
  const text = [
    '# HELP controller_runtime_reconcile_total Total number of reconciliations per controller',
    '# TYPE controller_runtime_reconcile_total counter',
    'controller_runtime_reconcile_total{controller="a",result="success"} 7',
    'controller_runtime_reconcile_total{controller="a",result="error"} 3',
    'controller_runtime_reconcile_errors_total{controller="a"} 3',
    'controller_runtime_reconcile_time_seconds_bucket{controller="a",le="0.1"} 4',
    'controller_runtime_reconcile_time_seconds_bucket{controller="a",le="0.2"} 8',
    'controller_runtime_reconcile_time_seconds_bucket{controller="a",le="+Inf"} 10',
    'workqueue_depth{controller="a",name="a",priority=""} 2',
    'odd_label{v="quote \\" and \\\\ and \\n"} 1.5e3',
    'untyped 42 1700000000000',
  ].join('\n');

  test('parses samples with escaped label values, exponents and timestamps', () => {
    const samples = parseExposition(text);
    assert.equal(samples.length, 9);
    assert.deepEqual(
      samples.find((s) => s.name === 'odd_label'),
      { name: 'odd_label', labels: { v: 'quote " and \\ and \n' }, value: 1500 },
    );
    assert.deepEqual(samples.find((s) => s.name === 'untyped')?.value, 42);
  });

  test('groups the reconcile metrics by controller', () => {
    const t = controllerTotals(parseExposition(text)).get('a')!;
    assert.equal(t.reconciles, 10);
    assert.equal(t.errors, 3);
    assert.equal(t.depth, 2);
    assert.deepEqual(
      [...t.buckets.entries()],
      [
        [0.1, 4],
        [0.2, 8],
        [Infinity, 10],
      ],
    );
  });

  test("the depth of a priority queue is the sum of its per-priority series (scrape --watch's DEPTH)", () => {
    const pq = [
      'workqueue_depth{controller="b",name="b",priority="0"} 2',
      'workqueue_depth{controller="b",name="b",priority="-100"} 5',
    ].join('\n');
    assert.equal(controllerTotals(parseExposition(pq)).get('b')!.depth, 7);
  });

  test('--match keeps the matching families with their HELP/TYPE lines', () => {
    assert.equal(filterExposition(text, /^controller_runtime_reconcile_total$/).split('\n').length, 5);
    assert.equal(filterExposition(text, /^untyped$/), 'untyped 42 1700000000000\n');
  });

  test('quantiles interpolate inside the bucket of the rank, from deltas between scrapes', () => {
    const before = new Map([
      [0.1, 4],
      [0.2, 8],
      [Infinity, 10],
    ]);
    const now = new Map([
      [0.1, 4],
      [0.2, 18],
      [Infinity, 20],
    ]); // 10 new: 0 ≤ 0.1, 10 in (0.1, 0.2]
    assert.equal(quantileFromBuckets(0.5, now, before), 0.1 + 0.1 * 0.5); // rank 5 of 10 in (0.1, 0.2]
    // all observations at once: 4 ≤ 0.1, 4 in (0.1, 0.2], 2 above: p50 is rank 5 → 0.1 + 0.1 * (1/4)
    assert.equal(quantileFromBuckets(0.5, before), 0.125);
    assert.equal(quantileFromBuckets(0.99, before), 0.2, 'a rank in the +Inf bucket reports the highest finite bound');
    assert.equal(quantileFromBuckets(0.5, before, before), undefined, 'nothing observed');
  });
});

describe('explanations', () => {
  const target = {
    url: new URL('https://127.0.0.1:8443/metrics'),
    insecure: true,
    timeoutMs: 1000,
    tokenSource: '--token',
  } as ScrapeTarget;
  test('403 names the identity from the body, or from the token when the body does not', () => {
    assert.match(
      explainStatus(403, 'Authorization denied for user system:serviceaccount:ns1:sa1', target, 'x'),
      /identity system:serviceaccount:ns1:sa1 .*ctrlmetrics grant --serviceaccount ns1:sa1\. Just granted\? /,
    );
    const jwt = `e30.${Buffer.from(JSON.stringify({ sub: 'system:serviceaccount:ns2:sa2' })).toString('base64url')}.sig`;
    assert.match(
      explainStatus(403, 'Forbidden', target, jwt),
      /ctrlmetrics grant --serviceaccount ns2:sa2\. Just granted\? /,
    );
    assert.match(
      explainStatus(403, 'Authorization denied for user alice', target, 'x'),
      /--user=alice\. Just granted\? /,
    );
  });

  test('503 says the endpoint is saturated with new tokens and when to come back', () => {
    assert.match(
      explainStatus(503, 'Too many new tokens to review: retry in 2 s\n', target, 'x'),
      /saturated with new tokens .*already knows are still served\. Try again in 2 s;/,
    );
    assert.match(explainStatus(503, '', target, 'x'), /Try again shortly;/);
  });

  test('binding differences name the role and the subjects', () => {
    const want = buildBinding('b', 'p-metrics-reader', { namespace: 'ns', name: 'sa' });
    assert.deepEqual(bindingDifferences(want, want), []);
    const other = buildBinding('b', 'view', { namespace: 'ns', name: 'other' });
    assert.deepEqual(bindingDifferences(other, want), [
      'roleRef is ClusterRole/view, wanted ClusterRole/p-metrics-reader',
      'subjects are [ServiceAccount ns/other], wanted [ServiceAccount ns/sa]',
    ]);
  });
});

/**
 * The controller metrics end to end: a manager with two controllers against the embedded authority, scraped
 * over HTTPS with a metrics-reader token, parsed by an independent parser and checked by `promtool check metrics`.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  Controller,
  Manager,
  TerminalError,
  filters,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../packages/ctrlmetrics/src/index.js';
import { PanicError, ReconcileTimeoutError } from '../../packages/ctrlmetrics/src/exports/controller.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { reconcileTime } from '../../packages/ctrlmetrics/src/controller/metrics.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import {
  eventually,
  httpsGet,
  parseExposition,
  promtoolCheck,
  samples,
  value,
  type Family,
} from './helpers/exposition.js';

const NS = 'ctl-test';
/** The `le` labels controller-runtime exposes, as Go formats them (dashboards match these strings exactly). */
const CR_RECONCILE_LES = [
  '0.005',
  '0.01',
  '0.025',
  '0.05',
  '0.1',
  '0.15',
  '0.2',
  '0.25',
  '0.3',
  '0.35',
  '0.4',
  '0.45',
  '0.5',
  '0.6',
  '0.7',
  '0.8',
  '0.9',
  '1',
  '1.25',
  '1.5',
  '1.75',
  '2',
  '2.5',
  '3',
  '3.5',
  '4',
  '4.5',
  '5',
  '6',
  '7',
  '8',
  '9',
  '10',
  '15',
  '20',
  '25',
  '30',
  '40',
  '50',
  '60',
  '+Inf',
];
/**
 * `ExponentialBuckets(10e-9, 10, 12)`: Go multiplies step by step, so two bounds carry the float error
 * (`9.999999999999999e-06`, `9.999999999999999e-05`), as on any controller-runtime /metrics.
 */
const WQ_LES = [
  '1e-08',
  '1e-07',
  '1e-06',
  '9.999999999999999e-06',
  '9.999999999999999e-05',
  '0.001',
  '0.01',
  '0.1',
  '1',
  '10',
  '100',
  '1000',
  '+Inf',
];

let cluster: TestCluster;
let mgr: Manager;
let stop: AbortController;
let running: Promise<void>;
let readerToken: string;
/** Reconciles seen per object name, and which "mode" each should play. */
const calls = new Map<string, number>();
let behaviour: Controller;
/** The "slow" controller's clock: its reconciliation timeout fires when the test advances it. */
const slowClock = new ManualClock();
/** A promise and its resolve (Promise.withResolvers is not in Node 20). */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
const slowStarted = deferred<void>();
const slowReason = deferred<unknown>();
/** Requests the `owners` controller reconciled, in order. */
const ownerRequests: string[] = [];

async function behave(req: Request, ctx: ReconcileContext): Promise<Result | void> {
  const n = (calls.get(req.name) ?? 0) + 1;
  calls.set(req.name, n);
  const obj = ctx.cache.get<{ data?: { mode?: string } }>('ConfigMap', req.namespace, req.name);
  const mode = obj?.data?.mode ?? 'ok';
  const first = n === 1;
  switch (mode) {
    case 'requeue':
      return first ? { requeue: true } : undefined;
    case 'after':
      return first ? { requeueAfterMs: 50 } : undefined;
    case 'error':
      if (first) throw new Error('transient failure');
      return;
    case 'panic':
      if (first) throw 'a string, not an Error';
      return;
    case 'panicerr':
      if (first) throw new PanicError('invariant broken');
      return;
    case 'terminal':
      throw new TerminalError('cannot ever work');
    case 'then-terminal':
      // a failure (backoff count 1), then a terminal error: controller-runtime keeps the count (no Forget)
      if (first) throw new Error('transient failure');
      throw new TerminalError('cannot ever work after all');
    case 'typeerror': {
      // a bug: reading a property of undefined, Go's nil dereference
      const missing = (obj as unknown as { spec?: { replicas: number } }).spec;
      if (first) return void missing!.replicas;
      return;
    }
    default:
      return;
  }
}

async function scrape(): Promise<Map<string, Family>> {
  const res = await httpsGet(`${mgr.metricsServer!.url}/metrics`, readerToken);
  assert.equal(res.status, 200, res.body.slice(0, 300));
  return parseExposition(res.body);
}

before(async () => {
  cluster = await startTestCluster();
  await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  readerToken = await cluster.readerToken();
  mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    healthProbeBindAddress: '127.0.0.1:0',
    metrics: { bindAddress: '127.0.0.1:0', filterProvider: filters.withAuthenticationAndAuthorization },
  });
  behaviour = new Controller({
    name: 'behaviour',
    maxConcurrentReconciles: 1, // one worker: a panic that killed it would stop everything after it
    reconciler: behave,
    watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, labelSelector: 'test=ctl' }],
  });
  mgr.add(behaviour);
  mgr.add(
    new Controller({
      name: 'slow',
      reconciliationTimeoutMs: 1000,
      clock: slowClock,
      reconciler: async (req, ctx) => {
        if (req.name !== 'cm-slow') return;
        slowStarted.resolve();
        // an honest reconciler: it stops when its signal says so
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        slowReason.resolve(ctx.signal.reason);
      },
      watches: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, labelSelector: 'test=slow' }],
    }),
  );
  mgr.add(
    new Controller({
      name: 'quiet',
      maxConcurrentReconciles: 3,
      reconciler: async () => undefined,
      watches: [{ apiVersion: 'v1', kind: 'Secret', namespace: NS }],
    }),
  );
  mgr.add(
    new Controller({
      name: 'owners',
      reconciler: async (req) => void ownerRequests.push(`${req.namespace}/${req.name}`),
      watches: [
        { apiVersion: 'v1', kind: 'ConfigMap', namespace: NS, labelSelector: 'test=owner' },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace: NS,
          labelSelector: 'test=owned',
          enqueue: { ownerKind: 'ConfigMap', ownerApiVersion: 'v1' },
        },
      ],
    }),
  );
  stop = new AbortController();
  running = mgr.start(stop.signal);
  await Promise.race([mgr.ready(), running]);
});

after(async () => {
  stop?.abort();
  await running?.catch(() => undefined);
  await cluster?.stop();
});

test('at start every controller series is zero-initialised, before any reconcile', async () => {
  const f = await scrape();
  for (const controller of ['behaviour', 'quiet']) {
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      assert.equal(
        value(f, 'controller_runtime_reconcile_total', { controller, result }),
        0,
        `${controller} ${result}`,
      );
    }
    assert.equal(value(f, 'controller_runtime_reconcile_errors_total', { controller }), 0);
    assert.equal(value(f, 'controller_runtime_terminal_reconcile_errors_total', { controller }), 0);
    assert.equal(value(f, 'controller_runtime_reconcile_panics_total', { controller }), 0);
    assert.equal(value(f, 'controller_runtime_reconcile_timeouts_total', { controller }), 0);
    assert.equal(value(f, 'controller_runtime_active_workers', { controller }), 0);
    // the priority queue (the default) has a depth series per priority once an item is ready, none before
    assert.equal(value(f, 'workqueue_depth', { name: controller, controller, priority: '' }), undefined);
    assert.equal(value(f, 'workqueue_adds_total', { name: controller, controller }), 0);
  }
  assert.equal(value(f, 'controller_runtime_max_concurrent_reconciles', { controller: 'behaviour' }), 1);
  assert.equal(value(f, 'controller_runtime_max_concurrent_reconciles', { controller: 'quiet' }), 3);
  assert.equal(
    samples(f, 'controller_runtime_reconcile_time_seconds', { controller: 'behaviour' }).length,
    0,
    'the histogram appears with the first reconcile, as in controller-runtime',
  );
});

test('counters move as reconciles succeed, fail, requeue, panic and hit terminal errors; the worker survives panics', async () => {
  const modes = ['ok', 'requeue', 'after', 'error', 'panic', 'panicerr', 'terminal', 'then-terminal', 'typeerror'];
  for (const mode of modes) {
    await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${mode}`, namespace: NS, labels: { test: 'ctl' } },
      data: { mode },
    });
  }
  // expected from the modes (calls: 1 for ok and terminal, 2 for the others):
  // 7 successes (all but terminal and then-terminal); errors: error, panic, panicerr, terminal, typeerror once,
  // then-terminal twice; panics: panic, panicerr, typeerror
  const f = await eventually(
    async () => {
      const fams = await scrape();
      const done =
        value(fams, 'controller_runtime_reconcile_total', { controller: 'behaviour', result: 'success' }) === 7 &&
        value(fams, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'behaviour' }) === 2;
      return done ? fams : undefined;
    },
    'seven successful reconciles and two terminal errors',
    20_000,
  );
  const c = { controller: 'behaviour' };
  assert.equal(value(f, 'controller_runtime_reconcile_total', { ...c, result: 'error' }), 7);
  assert.equal(value(f, 'controller_runtime_reconcile_total', { ...c, result: 'requeue' }), 1);
  assert.equal(value(f, 'controller_runtime_reconcile_total', { ...c, result: 'requeue_after' }), 1);
  assert.equal(value(f, 'controller_runtime_reconcile_errors_total', c), 7);
  assert.equal(value(f, 'controller_runtime_terminal_reconcile_errors_total', c), 2);
  assert.equal(
    value(f, 'controller_runtime_reconcile_panics_total', c),
    3,
    "a TypeError from a bug counts as a panic, as Go's nil dereference does",
  );
  assert.equal(value(f, 'controller_runtime_reconcile_time_seconds_count', c), 16);
  // controller-runtime v0.24's native buckets beside the classic ones: schema 3, every reconcile counted
  const native = reconcileTime.labels('behaviour').cell.native!;
  assert.equal(native.schema, 3);
  assert.equal(native.zeroCount + [...native.positive.values()].reduce((a, b) => a + b, 0), 16);
  assert.equal(value(f, 'controller_runtime_active_workers', c), 0);
  assert.equal(calls.get('cm-terminal'), 1, 'a terminal error is not retried');
  assert.equal(calls.get('cm-then-terminal'), 2, 'a terminal error after a failure is not retried');
  assert.equal(
    behaviour.queue.numRequeues(`${NS}/cm-then-terminal`),
    1,
    'a terminal error keeps the backoff count (no Forget), as controller-runtime',
  );
  assert.equal(behaviour.queue.numRequeues(`${NS}/cm-error`), 0, 'a success forgets it');
  assert.equal(calls.get('cm-panic'), 2, 'a panic is retried with backoff, by the surviving worker');
  assert.equal(calls.get('cm-typeerror'), 2);
  // requeue, requeue_after, error, panic, panicerr, then-terminal, typeerror: 7 delayed re-adds
  assert.equal(value(f, 'workqueue_retries_total', { name: 'behaviour', controller: 'behaviour' }), 7);
  assert.equal(value(f, 'workqueue_adds_total', { name: 'behaviour', controller: 'behaviour' }), 16);
  assert.equal(value(f, 'workqueue_work_duration_seconds_count', { name: 'behaviour', controller: 'behaviour' }), 16);
  // the other controller is untouched
  assert.equal(value(f, 'controller_runtime_reconcile_total', { controller: 'quiet', result: 'success' }), 0);
  // every API call of the manager is counted, including the TokenReview/SubjectAccessReview of this scrape
  const host = new URL(cluster.authority.url).host;
  const posts = value(f, 'rest_client_requests_total', { code: '201', method: 'POST', host });
  assert.ok((posts ?? 0) >= 2, `TokenReview + SubjectAccessReview counted (${posts})`);
  assert.ok(
    (value(f, 'rest_client_requests_total', { code: '200', method: 'GET', host }) ?? 0) >= 2,
    'lists and watches counted',
  );
});

test("reconciliationTimeoutMs: the reconcile's signal aborts with a ReconcileTimeoutError and the timeout is counted once it returns", async () => {
  const before = await scrape();
  assert.equal(value(before, 'controller_runtime_reconcile_timeouts_total', { controller: 'slow' }), 0);
  await cluster.admin.create(`/api/v1/namespaces/${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-slow', namespace: NS, labels: { test: 'slow' } },
  });
  await slowStarted.promise;
  await slowClock.advance(999);
  assert.equal(
    value(await scrape(), 'controller_runtime_reconcile_timeouts_total', { controller: 'slow' }),
    0,
    'not before the timeout',
  );
  await slowClock.advance(1);
  const reason = await slowReason.promise;
  assert.ok(reason instanceof ReconcileTimeoutError, String(reason));
  assert.match(reason.message, /reconcile of ctl-test\/cm-slow exceeded the reconciliation timeout of 1000 ms/);
  const f = await eventually(
    async () => {
      const fams = await scrape();
      return value(fams, 'controller_runtime_reconcile_timeouts_total', { controller: 'slow' }) === 1
        ? fams
        : undefined;
    },
    'the timeout counted',
    10_000,
  );
  // the result is handled as usual: it returned normally, so it is a success
  assert.equal(value(f, 'controller_runtime_reconcile_total', { controller: 'slow', result: 'success' }), 1);
  assert.equal(
    value(f, 'controller_runtime_reconcile_timeouts_total', { controller: 'behaviour' }),
    0,
    'no timeout configured: never counted',
  );
});

test("every family has controller-runtime's type, labels and buckets, and promtool accepts the exposition", async () => {
  // the GC histogram has a series once a collection ran since the manager started its monitors: make garbage (more
  // than the young generation holds, so a scavenge must run) and let the observer's entries arrive
  let garbage = 0;
  for (let i = 0; i < 64; i++) garbage += new Array<number>(131_072).fill(i).length;
  assert.equal(garbage, 64 * 131_072);
  await new Promise((r) => setTimeout(r, 20));
  const res = await httpsGet(`${mgr.metricsServer!.url}/metrics`, readerToken);
  assert.equal(res.status, 200);
  const f = parseExposition(res.body);
  const expect: Array<[string, string, string[]]> = [
    ['controller_runtime_reconcile_total', 'counter', ['controller', 'result']],
    ['controller_runtime_reconcile_errors_total', 'counter', ['controller']],
    ['controller_runtime_terminal_reconcile_errors_total', 'counter', ['controller']],
    ['controller_runtime_reconcile_panics_total', 'counter', ['controller']],
    ['controller_runtime_reconcile_timeouts_total', 'counter', ['controller']],
    ['controller_runtime_reconcile_time_seconds', 'histogram', ['controller']],
    ['controller_runtime_max_concurrent_reconciles', 'gauge', ['controller']],
    ['controller_runtime_active_workers', 'gauge', ['controller']],
    ['workqueue_depth', 'gauge', ['controller', 'name', 'priority']],
    ['workqueue_adds_total', 'counter', ['controller', 'name']],
    ['workqueue_queue_duration_seconds', 'histogram', ['controller', 'name']],
    ['workqueue_work_duration_seconds', 'histogram', ['controller', 'name']],
    ['workqueue_unfinished_work_seconds', 'gauge', ['controller', 'name']],
    ['workqueue_longest_running_processor_seconds', 'gauge', ['controller', 'name']],
    ['workqueue_retries_total', 'counter', ['controller', 'name']],
    ['rest_client_requests_total', 'counter', ['code', 'host', 'method']],
  ];
  for (const [name, type, labels] of expect) {
    const fam = f.get(name);
    assert.ok(fam, `${name} is exposed`);
    assert.equal(fam.type, type, `${name} type`);
    assert.ok(fam.help.length > 0, `${name} has help`);
    assert.ok(fam.samples.length > 0, `${name} has series`);
    for (const s of fam.samples) {
      const keys = Object.keys(s.labels)
        .filter((k) => k !== 'le')
        .sort();
      assert.deepEqual(keys, labels, `${name} labels of ${s.name}`);
    }
  }
  const les = (fam: string, match: Record<string, string>) =>
    samples(f, fam, match, `${fam}_bucket`).map((s) => s.labels.le);
  assert.deepEqual(les('controller_runtime_reconcile_time_seconds', { controller: 'behaviour' }), CR_RECONCILE_LES);
  assert.deepEqual(
    les('workqueue_queue_duration_seconds', { name: 'quiet' }),
    WQ_LES,
    'an idle queue has its (zero) buckets too',
  );
  assert.deepEqual(les('workqueue_work_duration_seconds', { name: 'behaviour' }), WQ_LES);
  // process and Node.js runtime metrics, as in any controller-runtime manager (Go's go_* have no Node equivalent)
  for (const name of [
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'process_open_fds',
    'process_start_time_seconds',
    'nodejs_eventloop_lag_seconds',
    'nodejs_heap_size_used_bytes',
    'nodejs_gc_duration_seconds',
  ]) {
    assert.ok(f.has(name), `${name} is exposed`);
  }
  // leader election is off: its gauge is absent, as in controller-runtime
  assert.equal(samples(f, 'leader_election_master_status').length, 0);

  const check = await promtoolCheck(res.body);
  assert.equal(check.code, 0, `promtool check metrics:\n${check.output}`);
});

test('events of owned objects enqueue their controlling owner; objects without one enqueue nothing', async () => {
  const cms = `/api/v1/namespaces/${NS}/configmaps`;
  const parent = await cluster.admin.create<{ metadata: { uid: string } }>(cms, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'parent', namespace: NS, labels: { test: 'owner' } },
  });
  await eventually(() => ownerRequests.length === 1, 'the parent to be reconciled', 10_000, 20);
  await cluster.admin.create(cms, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'child',
      namespace: NS,
      labels: { test: 'owned' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: parent.metadata.uid, controller: true },
      ],
    },
  });
  await eventually(() => ownerRequests.length === 2, 'the child to enqueue its owner', 10_000, 20);
  await cluster.admin.create(cms, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'stray', namespace: NS, labels: { test: 'owned' } },
  });
  await cluster.admin.delete(`${cms}/child`);
  await eventually(() => ownerRequests.length === 3, 'the deleted child to enqueue its owner', 10_000, 20);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(
    ownerRequests,
    [`${NS}/parent`, `${NS}/parent`, `${NS}/parent`],
    'the stray child (no owner) enqueued nothing',
  );
});

/**
 * A controller: watches, a workqueue and `maxConcurrentReconciles` workers running a reconciler, instrumented
 * with controller-runtime's `controller_runtime_*` and `workqueue_*` metrics.
 */
import { randomUUID } from 'node:crypto';
import type { KubeClient } from '../kube/client.js';
import { objectKey } from '../kube/informer.js';
import { createLogger, type Logger } from '../util/log.js';
import { ReconcileTimeoutError, isPanic, isTerminal } from './errors.js';
import { collectionPath, keyRequest, requestKey, requestsFor } from './handlers.js';
import { WatchSpecError, type InformerSet, type WatchCache } from './informers.js';
import { controllerMetricsFor, type ControllerMetrics } from './metrics.js';
import type { RateLimiter } from './ratelimiter.js';
import type {
  CacheListOptions,
  CacheReader,
  EventType,
  KubeObject,
  ReconcileContext,
  Reconciler,
  Request,
  Result,
  WatchSpec,
} from './types.js';
import { Workqueue } from './workqueue.js';
import { LOW_PRIORITY, PriorityQueue } from './priorityqueue.js';
import { cachedReadClient } from './cached-client.js';
import { deepFreeze } from '../kube/freeze.js';
import { ObjectClient } from '../kube/object-client.js';
import { RESTMapper } from '../kube/restmapper.js';
import { EventBroadcaster, type EventRecorder } from '../kube/events.js';
import { after, type TimerClock } from '../util/timers.js';
import { NotCachedError } from './not-cached.js';
import { WatchCaches, type TypeRef } from './watch-caches.js';
import type { ShardGate } from './sharding.js';

/** Options of a {@link Controller}. */
export interface ControllerOptions {
  /** Unique name: the `controller` label of every metric. Lower-case, like controller-runtime's kind-derived names. */
  name: string;
  /** Workers reconciling in parallel (default 1). */
  maxConcurrentReconciles?: number;
  /** The reconcile function. */
  reconciler: Reconciler;
  /** The watched collections and how their events map to requests. */
  watches: WatchSpec[];
  /**
   * controller-runtime's `UsePriorityQueue` (default true, as since v0.23): the {@link PriorityQueue}, where objects
   * of the initial list and resync updates wait behind everything else (`LOW_PRIORITY`). false: the legacy
   * client-go queue.
   */
  usePriorityQueue?: boolean;
  /**
   * Rate limiter of the queue (default controller-runtime's: per-item 5 ms → 1000 s; the legacy queue adds an
   * overall 10 qps / burst 100 bucket).
   */
  rateLimiter?: RateLimiter<string>;
  /** How long to wait for the watches' first list before failing to start (default 2 min). */
  cacheSyncTimeoutMs?: number;
  /**
   * controller-runtime's `ReconciliationTimeout`: after this long a reconcile's `ctx.signal` aborts (reason: a
   * `ReconcileTimeoutError`) and, once it returns, `controller_runtime_reconcile_timeouts_total` counts it.
   * The reconcile is not cut short; its result is handled as usual. 0 or absent: no timeout.
   */
  reconciliationTimeoutMs?: number;
  /**
   * Whether the controller runs only on the replica holding the leader Lease (controller-runtime's
   * `NeedLeaderElection`, default true). false: it reconciles on every replica, e.g. for per-node work.
   */
  needLeaderElection?: boolean;
  /**
   * controller-runtime's `EnableWarmup` (beta there since v0.22): on a standby replica, start this controller's
   * watches — first list, handlers, the queue filling — before it wins the Lease, so a new leader reconciles at
   * once instead of waiting for its lists; workers start only once leading. Default: the manager's `enableWarmup`
   * (false). No effect without leader election or with `needLeaderElection: false`.
   */
  enableWarmup?: boolean;
  /** Clock of the reconciliation timeout and the queue's delays (tests). */
  clock?: TimerClock;
}

/** What the manager hands a controller at start. */
export interface ControllerStartDeps {
  client: KubeClient;
  informers: InformerSet;
  logger?: Logger;
  /** Aborted at shutdown; passed to reconcilers. */
  signal: AbortSignal;
  /** The manager's kind → resource mapper (default: one of the controller's own). */
  mapper?: RESTMapper;
  /** The manager's event writer (default: one of the controller's own, shut down with it). */
  events?: EventBroadcaster;
  /**
   * Fencing (leader election): asked before each reconcile starts. When it answers false the worker starts no
   * reconcile, stops, and calls `onFenced`.
   */
  mayReconcile?: () => boolean;
  onFenced?: () => void;
  /** Cached reads hand out the cached objects, frozen, instead of copies (see `ManagerOptions.cache`). */
  unsafeDisableDeepCopy?: boolean;
  /** A read of a kind no informer caches throws instead of starting one (see `ManagerOptions.cache`). */
  readerFailOnMissingInformer?: boolean;
  /**
   * The ownership gate of a sharded manager: the primary kind's events and reconciles pass only for objects of
   * this shard's, and a drain request is acknowledged instead of reconciled.
   */
  shard?: ShardGate;
}

/** What a controller needs of its queue: the priority queue's methods (the legacy queue ignores priorities). */
export interface ControllerQueue {
  /** Queues an item (once, however often added before it is taken). */
  add(item: string, priority?: number): void;
  /** Queues an item after a delay. */
  addAfter(item: string, delayMs: number, priority?: number): void;
  /** Queues an item after its per-item backoff. */
  addRateLimited(item: string, priority?: number): void;
  /** Resets an item's backoff. */
  forget(item: string): void;
  /** How often an item was requeued with backoff since it was last forgotten. */
  numRequeues(item: string): number;
  /** The next item, waiting for one; `shutdown: true` once the queue is shut down and drained. */
  get(): Promise<{ item: string; priority?: number; shutdown: false } | { item: undefined; shutdown: true }>;
  /** Marks an item as processed (re-added meanwhile, it is queued again). */
  done(item: string): void;
  /** Stops handing out items. */
  shutDown(): void;
  /** The number of items waiting. */
  len(): number;
}

/**
 * The started event sources: the queue they fill, the watch caches by kind, and the primary kind's watch (the first
 * that enqueues the object itself), which a sharded manager's gate reads.
 */
type Sources = { queue: ControllerQueue; caches: WatchCaches; primary?: { spec: WatchSpec; cache: WatchCache } };

/** What the workers use: the start deps plus the reconcile context's cache-reading clients and recorder. */
type WorkerDeps = ControllerStartDeps & {
  objects: ObjectClient;
  apiReader: ObjectClient;
  recorder: EventRecorder;
  /** A sharded manager's gate, with the primary kind's watch it reads. */
  gate?: { shard: ShardGate; spec: WatchSpec; cache: WatchCache };
};

const NAME_RE = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/;

/** A reconcile loop over a rate-limited, de-duplicating, delaying workqueue. */
export class Controller {
  readonly name: string;
  readonly maxConcurrentReconciles: number;
  /** Whether it runs only on the leader (see {@link ControllerOptions.needLeaderElection}). */
  readonly needLeaderElection: boolean;
  /** Whether it warms up on a standby (see {@link ControllerOptions.enableWarmup}; undefined: the manager's choice). */
  readonly enableWarmup: boolean | undefined;
  private readonly reconciler: Reconciler;
  private readonly watches: WatchSpec[];
  private readonly rateLimiter: RateLimiter<string> | undefined;
  private readonly cacheSyncTimeoutMs: number;
  private readonly reconciliationTimeoutMs: number;
  private readonly clock: TimerClock | undefined;
  private readonly usePriorityQueue: boolean;
  private _queue: ControllerQueue | undefined;
  private metrics: ControllerMetrics | undefined;
  private workers: Promise<void>[] = [];
  private removeHandlers: Array<() => void> = [];
  private started = false;
  /** The event writer this controller made itself (no manager's was given). */
  private ownEvents: EventBroadcaster | undefined;

  constructor(opts: ControllerOptions) {
    if (!opts.name || !NAME_RE.test(opts.name)) {
      throw new Error(
        `controller name ${JSON.stringify(opts.name)} is invalid: use lower-case letters, digits, '-', '_' or '.'`,
      );
    }
    if (!opts.watches?.length) throw new Error(`controller ${opts.name}: at least one watch is required`);
    this.name = opts.name;
    this.maxConcurrentReconciles = Math.max(1, Math.floor(opts.maxConcurrentReconciles ?? 1));
    this.needLeaderElection = opts.needLeaderElection ?? true;
    this.enableWarmup = opts.enableWarmup;
    this.reconciler = opts.reconciler;
    this.watches = opts.watches;
    this.rateLimiter = opts.rateLimiter;
    this.usePriorityQueue = opts.usePriorityQueue ?? true;
    this.cacheSyncTimeoutMs = opts.cacheSyncTimeoutMs ?? 120_000;
    this.reconciliationTimeoutMs = Math.max(0, opts.reconciliationTimeoutMs ?? 0);
    this.clock = opts.clock;
  }

  /** The watches the controller was made with. @internal */
  get watchSpecs(): readonly WatchSpec[] {
    return this.watches;
  }

  /** The controller's queue (exists once started). */
  get queue(): ControllerQueue {
    if (!this._queue) throw new Error(`controller ${this.name} is not started`);
    return this._queue;
  }

  /**
   * Starts: zero-initialises the metrics, registers event handlers on the (shared) informers, waits for their
   * first list (unless {@link warmup} did), then starts the workers. Resolves once the workers run; throws if the
   * caches do not sync in time. Called by the manager.
   * @internal
   */
  async start(deps: ControllerStartDeps): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} was already started`);
    this.started = true;
    const log = this.logFor(deps);
    const sources = await this.startSources(deps);
    if (!sources || deps.signal.aborted) return;
    this.startWorkers(deps, sources, log);
  }

  /**
   * controller-runtime's warm-up: starts the event sources — handlers on the informers, the first list, the queue
   * filling — without workers, so that a standby that wins the Lease reconciles at once. Resolves once the caches
   * synced (false if `deps.signal` aborted first); throws as {@link start} when they do not sync in time.
   * @internal
   */
  async warmup(deps: ControllerStartDeps): Promise<boolean> {
    return (await this.startSources(deps)) !== undefined;
  }

  /** Whether the workers were started (not merely warmed up). */
  get isStarted(): boolean {
    return this.started;
  }

  private logFor(deps: Pick<ControllerStartDeps, 'logger'>): Logger {
    return (this.logger ??= (deps.logger ?? createLogger('controller')).child(this.name, { controller: this.name }));
  }

  private logger: Logger | undefined;
  private sources: Promise<Sources | undefined> | undefined;
  private ownMapper: RESTMapper | undefined;

  /** The manager's mapper, else one of this controller's own (made once). */
  private mapperFor(deps: ControllerStartDeps): RESTMapper {
    return deps.mapper ?? (this.ownMapper ??= new RESTMapper(deps.client));
  }

  /** Starts the event sources once (warm-up or start, whichever comes first). */
  private startSources(deps: ControllerStartDeps): Promise<Sources | undefined> {
    return (this.sources ??= this.syncSources(deps));
  }

  private async syncSources(deps: ControllerStartDeps): Promise<Sources | undefined> {
    const log = this.logFor(deps);
    this.metrics = controllerMetricsFor(this.name, this.maxConcurrentReconciles);
    const queueOptions = { name: this.name, rateLimiter: this.rateLimiter, clock: this.clock };
    const queue: ControllerQueue = this.usePriorityQueue
      ? new PriorityQueue<string>(queueOptions)
      : new Workqueue<string>(queueOptions);
    const lowPriority = this.usePriorityQueue ? LOW_PRIORITY : 0;
    this._queue = queue;

    log.info('Starting Controller');
    // resources and scopes from discovery; what is not served yet is asked again within the sync timeout
    const deadline = Date.now() + this.cacheSyncTimeoutMs;
    const mapper = this.mapperFor(deps);
    const resolved = await Promise.allSettled(
      this.watches.map((spec) => deps.informers.resolve(spec, mapper, deadline, deps.signal)),
    );
    const wrong = resolved.find(
      (r): r is PromiseRejectedResult => r.status === 'rejected' && r.reason instanceof WatchSpecError,
    );
    if (wrong) throw new Error(`controller ${this.name}: ${(wrong.reason as Error).message}`);
    if (deps.signal.aborted) {
      this.sources = undefined;
      return undefined;
    }
    const unresolved = resolved.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
    if (unresolved.length) {
      throw new Error(
        `controller ${this.name}: timed out after ${this.cacheSyncTimeoutMs} ms waiting for the watch caches to sync (can the manager list and watch ${this.watches.map((w) => w.kind).join(', ')}?): ${unresolved.join('; ')}`,
      );
    }
    const specs = resolved.map((r) => (r as PromiseFulfilledResult<WatchSpec>).value);

    const watched: Array<{ spec: WatchSpec; cache: WatchCache }> = [];
    const used = new Set<WatchCache>();
    let primary: { spec: WatchSpec; cache: WatchCache } | undefined;
    for (const spec of specs) {
      const inf = deps.informers.cacheFor(spec);
      used.add(inf);
      watched.push({ spec, cache: inf });
      const isPrimary = !primary && (spec.enqueue === undefined || spec.enqueue === 'self');
      if (isPrimary) primary = { spec, cache: inf };
      const gate = isPrimary ? deps.shard : undefined;
      const enqueue = (obj: KubeObject, ev: EventType, old: KubeObject | undefined, priority: number) => {
        const passes = () => !spec.predicate || spec.predicate(obj, ev, old);
        if (gate ? !gate.admits(obj, passes) : !passes()) return;
        for (const r of requestsFor(spec.enqueue, obj, ev)) queue.add(requestKey(r), priority);
      };
      // controller-runtime's LowPriority: objects of the initial list, and updates that change nothing (resync,
      // re-list) wait behind real changes
      const unchanged = (o: KubeObject, n: KubeObject) =>
        o.metadata?.resourceVersion !== undefined && o.metadata.resourceVersion === n.metadata?.resourceVersion;
      this.removeHandlers.push(
        inf.addHandler({
          onAdd: (o, initial) => enqueue(o, 'add', undefined, initial ? lowPriority : 0),
          onUpdate: (o, n) => enqueue(n, 'update', o, unchanged(o, n) ? lowPriority : 0),
          onDelete: (o) => enqueue(o, 'delete', undefined, 0),
        }),
      );
    }
    // the manager's abort ends the wait at once (a test's after() must not wait for the sync timeout)
    const synced = await Promise.all(
      [...used].map((i) => i.waitForSync(Math.max(0, deadline - Date.now()), deps.signal)),
    );
    if (deps.signal.aborted) {
      // a later start (the warm-up was cut short) registers and syncs again
      for (const r of this.removeHandlers.splice(0)) r();
      this.sources = undefined;
      return undefined;
    }
    if (!synced.every(Boolean)) {
      const pending = [...used].filter((i) => !i.synced);
      const why = pending.map((i) => `${i.path}: ${i.lastFailure ?? 'no list answered yet'}`).join('; ');
      throw new Error(
        `controller ${this.name}: timed out after ${this.cacheSyncTimeoutMs} ms waiting for the watch caches to sync (can the manager list and watch ${this.watches.map((w) => w.kind).join(', ')}?): ${why}`,
      );
    }
    return { queue, caches: new WatchCaches(this.name, watched), primary };
  }

  private startWorkers(deps: ControllerStartDeps, { queue, caches, primary }: Sources, log: Logger): void {
    const mapper = this.mapperFor(deps);
    const readClient = cachedReadClient(deps.client, deps.informers, {
      unsafeDisableDeepCopy: deps.unsafeDisableDeepCopy,
      mapper,
      readerFailOnMissingInformer: deps.readerFailOnMissingInformer,
    });
    // matchingFields lists answered from the field indexes of this controller's watches
    const fromIndex = (type: TypeRef, field: string, value: string, namespace: string | undefined) => {
      try {
        return caches.byIndex(type, field, value, namespace);
      } catch (err) {
        if (err instanceof NotCachedError)
          throw new Error(
            `list ${type.kind} (${type.apiVersion}) with matchingFields: the controller ${this.name} does not watch it, so no cache of it is indexed`,
            { cause: err },
          );
        throw err;
      }
    };
    const objects = new ObjectClient(readClient, mapper, fromIndex);
    const apiReader = new ObjectClient(deps.client, mapper);
    const events = deps.events ?? (this.ownEvents = new EventBroadcaster(deps.client, { logger: log.child('events') }));
    const recorder = events.recorderFor(this.name);
    // the cache's own objects, never copied: frozen, so that a reconcile changing one fails instead of corrupting it
    const cache: CacheReader = {
      get: <T extends object>(kind: string | TypeRef, namespace: string | undefined, name: string) =>
        deepFreeze(caches.get(kind, namespace ? `${namespace}/${name}` : name)) as T | undefined,
      list: <T extends object>(kind: string | TypeRef, opts: CacheListOptions = {}) => {
        const fields = Object.entries(opts.matchingFields ?? {});
        const named = typeof kind === 'string' ? kind : kind.kind;
        // as controller-runtime's cache: one exact field match, answered from its index
        if (fields.length > 1)
          throw new Error(
            `non-exact field matches are not supported by the cache: list ${named} by one field (got ${fields.map(([f]) => f).join(', ')})`,
          );
        if (fields.length === 1)
          return caches.byIndex(kind, fields[0][0], fields[0][1], opts.namespace).map(deepFreeze) as unknown as T[];
        const all = caches.list(kind);
        return (opts.namespace === undefined ? all : all.filter((o) => o.metadata?.namespace === opts.namespace)).map(
          deepFreeze,
        ) as unknown as T[];
      },
    };
    log.info('Starting workers', { 'worker count': this.maxConcurrentReconciles });
    const gate = deps.shard && primary ? { shard: deps.shard, ...primary } : undefined;
    for (let i = 0; i < this.maxConcurrentReconciles; i++) {
      this.workers.push(this.worker(queue, { ...deps, objects, apiReader, recorder, gate }, log, cache));
    }
  }

  /**
   * Stops: the queue stops handing out items, in-flight reconciles finish (bounded by `timeoutMs`), event handlers
   * are removed. Queued items are dropped (a restart re-lists everything).
   */
  async stop(timeoutMs = 30_000): Promise<boolean> {
    for (const r of this.removeHandlers.splice(0)) r();
    if (!this._queue) return true;
    this._queue.shutDown();
    let cancel: (() => void) | undefined;
    const finished = await Promise.race([
      Promise.all(this.workers).then(() => true),
      new Promise<boolean>((r) => (cancel = after(timeoutMs, () => r(false)))),
    ]);
    cancel?.();
    await this.ownEvents?.shutdown();
    return finished;
  }

  private async worker(queue: ControllerQueue, deps: WorkerDeps, log: Logger, cache: CacheReader): Promise<void> {
    for (;;) {
      const got = await queue.get();
      if (got.shutdown) return;
      const item = got.item;
      // checked after the wait for an item: a process that wakes from a freeze must not act on a lost lease
      if (deps.mayReconcile && !deps.mayReconcile()) {
        queue.done(item);
        log.error("Not reconciling: the leader lease may have expired by this process's clock", { key: item });
        deps.onFenced?.();
        return;
      }
      try {
        await this.reconcileHandler(queue, item, got.priority ?? 0, deps, log, cache);
      } finally {
        queue.done(item);
      }
    }
  }

  /**
   * A sharded manager's gate before the user's reconciler: only an object this shard still holds is reconciled; a
   * drain request is acknowledged instead (a failed acknowledgement is retried with backoff).
   */
  private async passesGate(
    queue: ControllerQueue,
    key: string,
    req: Request,
    priority: number,
    gate: NonNullable<WorkerDeps['gate']>,
    log: Logger,
  ): Promise<boolean> {
    try {
      const decision = await gate.shard.decide(gate.cache.get(key), objectPath(gate.spec, req));
      if (decision === 'own') return true;
      if (decision === 'drained') log.debug('Acknowledged the drain of an object moving to another shard', { key });
      queue.forget(key);
    } catch (err) {
      log.error('Failed to acknowledge the drain of an object', { key, error: describe(err) });
      queue.addRateLimited(key, priority);
    }
    return false;
  }

  private async reconcileHandler(
    queue: ControllerQueue,
    key: string,
    priority: number,
    deps: WorkerDeps,
    log: Logger,
    cache: CacheReader,
  ): Promise<void> {
    const m = this.metrics!;
    const req: Request = keyRequest(key);
    if (deps.gate && !(await this.passesGate(queue, key, req, priority, deps.gate, log))) return;
    // the request's logger is built only if something logs (keeps the hot path free of allocations)
    let reqLog: Logger | undefined;
    // controller-runtime's reconcileID: a UUID per reconcile, in its log lines; made only when asked for
    let reconcileID: string | undefined;
    const getID = () => (reconcileID ??= randomUUID());
    const getLog = () =>
      (reqLog ??= log.child(
        'reconcile',
        req.namespace
          ? { namespace: req.namespace, name: req.name, reconcileID: getID() }
          : { name: req.name, reconcileID: getID() },
      ));
    // controller-runtime's context.WithTimeoutCause: the reconcile's own signal, aborted by the timeout or shutdown
    let timeout: AbortController | undefined;
    let cancelTimer: (() => void) | undefined;
    if (this.reconciliationTimeoutMs > 0) {
      const t = (timeout = new AbortController());
      const ms = this.reconciliationTimeoutMs;
      cancelTimer = after(
        ms,
        () => t.abort(new ReconcileTimeoutError(`reconcile of ${key} exceeded the reconciliation timeout of ${ms} ms`)),
        this.clock,
      );
    }
    const ctx: ReconcileContext = {
      controller: this.name,
      client: deps.objects,
      apiReader: deps.apiReader,
      pathClient: deps.client,
      recorder: deps.recorder,
      get log() {
        return getLog();
      },
      get reconcileID() {
        return getID();
      },
      signal: timeout ? AbortSignal.any([deps.signal, timeout.signal]) : deps.signal,
      cache,
    };
    m.activeWorkers.inc();
    const start = performance.now();
    let result: Result | void = undefined;
    let err: unknown;
    let failed = false;
    try {
      result = await this.reconciler(req, ctx);
    } catch (e) {
      failed = true;
      err = e;
    }
    m.observeReconcileTime((performance.now() - start) / 1000);
    m.activeWorkers.dec();
    cancelTimer?.();
    // counted only when the reconcile's own timeout fired, not when shutdown aborted the signal
    if (timeout?.signal.aborted) m.timeouts.inc();

    if (failed) {
      let text = describe(err);
      if (isPanic(err)) {
        m.panics.inc();
        getLog().error('Observed a panic in reconciler', {
          panic: text,
          ...(err instanceof Error && err.stack ? { stacktrace: err.stack } : {}),
        });
        text = `panic: ${text} [recovered]`;
      }
      m.errors.inc();
      m.total.error.inc();
      if (isTerminal(err)) {
        // as controller-runtime: neither requeued nor forgotten (the backoff count is kept for the next failure)
        m.terminalErrors.inc();
      } else {
        queue.addRateLimited(key, priority);
      }
      getLog().error('Reconciler error', { error: text });
      return;
    }
    const requeueAfterMs = result?.requeueAfterMs ?? 0;
    // a requeue keeps the priority the request was handed out with unless the result sets one
    const next = result?.priority ?? priority;
    if (requeueAfterMs > 0) {
      queue.forget(key);
      queue.addAfter(key, requeueAfterMs, next);
      m.total.requeue_after.inc();
    } else if (result?.requeue) {
      queue.addRateLimited(key, next);
      m.total.requeue.inc();
    } else {
      queue.forget(key);
      m.total.success.inc();
    }
  }
}

/** The API path of the object a request names, in the collection of `spec`. */
function objectPath(spec: WatchSpec, req: Request): string {
  return `${collectionPath({ ...spec, namespace: req.namespace })}/${encodeURIComponent(req.name)}`;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message;
  try {
    return typeof err === 'string' ? err : (JSON.stringify(err) ?? String(err));
  } catch {
    return String(err);
  }
}

/** The cache key of an object (exported for reconcilers that look objects up by key). */
export { objectKey };

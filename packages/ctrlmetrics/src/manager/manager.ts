/**
 * The controller manager: it owns the API client, the REST mapper, the event recorder and the caches, and runs
 * runnables — its own (metrics, probe and profiling servers, the webhook server, the caches) and the user's
 * (controllers, anything with `start(signal)`) — in controller-runtime's groups:
 *
 * start: API config → API reachability check (GET /version, bounded) → HTTP servers (metrics, probes, profiling:
 * served whether or not this replica leads) → webhooks → caches → runnables that run on every replica → warm-up
 * (not awaited) → leader election (if on) → the leader's runnables and controllers (caches synced, workers up);
 * stop (abort signal, SIGTERM or SIGINT), within the graceful shutdown budget: warm-up → every-replica runnables →
 * the leader's → caches → lease released → webhooks → HTTP servers (last, so the final state of the counters can
 * still be scraped while the rest drains).
 */
import { hostname } from 'node:os';
import { KubeApiError, KubeClient } from '../kube/client.js';
import { loadRestConfig, type RestConfig } from '../kube/config.js';
import { createLogger, type Logger } from '../util/log.js';
import { createMetricsServer, DEFAULT_BIND_ADDRESS } from '../metrics/server/index.js';
import type { MetricsOptions, MetricsServer } from '../metrics/server/types.js';
import { Controller, type ControllerStartDeps } from '../controller/controller.js';
import { InformerSet, type CacheScope, type InformerTuning } from '../controller/informers.js';
import type { IndexExtractor } from '../kube/field-index.js';
import type { KubeObject } from '../controller/types.js';
import { RESTMapper } from '../kube/restmapper.js';
import { ObjectClient } from '../kube/object-client.js';
import { cachedReadClient } from '../controller/cached-client.js';
import { EventBroadcaster, type EventRecorder } from '../kube/events.js';
import { EventsV1Broadcaster, type EventsV1Recorder } from '../kube/events-v1.js';
import { isDisabled } from '../util/bind-address.js';
import { HealthProbeServer, type HealthCheck } from './health.js';
// the profiling server and the leader elector load when the options ask for them
import type { ProfilingServer } from './profiling.js';
import type { LeaderElector } from './leaderelection.js';
import { WebhookServer, type WebhookServerOptions } from '../webhook/server.js';
import { Webhook } from '../webhook/for-kind.js';
import { CONVERSION_PATH, ConversionRegistry, ConversionWebhook } from '../webhook/conversion.js';
import { RunnableGroup, type ReportingRunnable, type Runnable } from './runnable-group.js';
import { includePromClientCopies, type PromClientCopy } from '../metrics/prom-client-copies.js';
import { runtimeCollector } from '../metrics/builtin.js';
import { CtrlmetricsError } from '../util/errors.js';
import {
  ShardGate,
  invalidRingName,
  invalidShardName,
  reportCachedObjects,
  type CachedObjects,
} from '../controller/sharding.js';

/** The application's prom-client copies, looked for once per process (see includeApplicationPromClients). */
let promClientCopies: Promise<PromClientCopy[]> | undefined;
let promClientCopiesReported = false;

/** Options of a {@link Manager} (controller-runtime's `manager.Options`, the parts that matter here). */
export interface ManagerOptions {
  /** The metrics server (contract B). Default: `:8443`, HTTPS, self-signed; `bindAddress: '0'` disables it. */
  metrics?: MetricsOptions;
  /**
   * The webhook server: default `:9443`, the certificate from `<os.tmpdir()>/k8s-webhook-server/serving-certs`. It
   * starts only when a webhook is added (or a path registered on {@link Manager.webhookServer}).
   */
  webhook?: WebhookServerOptions;
  /** Address of `/healthz` and `/readyz` (plain HTTP), e.g. `:8081`. Absent, empty or `0`: no probe server. */
  healthProbeBindAddress?: string;
  /**
   * Address of the profiling endpoints (controller-runtime's `PprofBindAddress`; plain HTTP, no authentication):
   * `/debug/pprof/profile?seconds=N` (a V8 CPU profile) and `/debug/pprof/heap` (a heap snapshot). Absent, empty or
   * `0` (the default): off. An address without a host (`:8082`) listens on loopback only: a heap snapshot holds the
   * tokens and keys in memory. Reach it with `kubectl port-forward`.
   */
  profilingBindAddress?: string;
  /** kubeconfig file to load when `restConfig` is not given (else `KUBECONFIG`, in-cluster, `~/.kube/config`). */
  kubeconfig?: string;
  /** How to reach the API (wins over `kubeconfig`). */
  restConfig?: RestConfig;
  /** Run controllers only while holding a coordination.k8s.io/v1 Lease (default false). */
  leaderElection?: boolean;
  /**
   * Warm replicas (controller-runtime's `EnableWarmup`, for every controller that does not say otherwise): a
   * standby starts the watches of its leader-elected controllers before it wins the Lease — first lists, event
   * handlers, queues filling — and starts their workers once leading, so failover does not wait for the lists.
   * `/readyz` of a standby then waits for those caches to sync. Default false; no effect without leader election.
   */
  enableWarmup?: boolean;
  /** Lease name (required with leader election). */
  leaderElectionID?: string;
  /**
   * Lease namespace. Default: the pod's namespace (the service-account namespace file); outside a pod there is no
   * default and start() rejects, as controller-runtime does: a Lease in a namespace the leader-election Role does
   * not reach would only be refused, attempt after attempt.
   */
  leaderElectionNamespace?: string;
  /**
   * Give the lease up when the manager stops, after the controllers have stopped, so another replica takes over
   * at once (default false, as controller-runtime's `LeaderElectionReleaseOnCancel`).
   */
  leaderElectionReleaseOnCancel?: boolean;
  /**
   * Run as one shard of a ring (horizontal scale-out): this manager holds a Lease of its own, named after the shard
   * and labelled with the ring, and its controllers (those that need leader election) cache and reconcile only the
   * objects a sharder assigned to it. Exclusive with `leaderElection`. See {@link ShardingOptions}.
   */
  sharding?: ShardingOptions;
  /** Lease timing (client-go defaults 15 s / 10 s / 2 s). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** How long stopping may take in all (default 30 000 ms). */
  gracefulShutdownTimeoutMs?: number;
  /** Stop on SIGTERM and SIGINT (default true; a second signal exits at once with status 1). */
  handleSignals?: boolean;
  /** Bound of the start-up API check (default 10 000 ms). */
  apiCheckTimeoutMs?: number;
  /**
   * Informer tuning (watch timeout, re-list, resync, backoff, stuck detection); its `transform` is the same as
   * `cache.defaultTransform`.
   */
  informers?: InformerTuning;
  /** How reconciles read the cache (controller-runtime's `cache.Options`). */
  cache?: ManagerCacheOptions;
  logger?: Logger;
}

/**
 * A sharded manager's options, in the protocol of timebertt/kubernetes-controller-sharding (TKCS), whose label keys
 * are the default: a sharder (`ctrlmetrics sharder`, or TKCS's) labels every object of the ring's kinds with the
 * live shard it belongs to; each shard caches, for its controllers' primary and owned kinds, only the objects
 * labelled for it, reconciles an object only while it is still labelled for it (one that moved away is never
 * handed to the reconciler as if it were deleted), and acknowledges the sharder's drain requests.
 */
export interface ShardingOptions {
  /** The ring (TKCS's ControllerRing) the controllers belong to: at most 63 characters, part of the label keys. */
  ring: string;
  /**
   * This shard's name: its Lease's name and holder, and the label value of its objects; a DNS-1123 label of at most
   * 63 characters. Default: `POD_NAME` (set it from `metadata.name` in the Deployment), else the hostname.
   */
  shardName?: string;
  /** The Lease's namespace (default: `leaderElectionNamespace`'s default, the pod's namespace). */
  leaseNamespace?: string;
  /** The label keys' prefix (default TKCS's `alpha.sharding.timebertt.dev`). */
  labelPrefix?: string;
}

/**
 * Cache options of a {@link Manager} (controller-runtime's `cache.Options`): what is cached — `defaultNamespaces`,
 * `defaultLabelSelector`, `defaultFieldSelector`, or per kind `byObject: [{ apiVersion, kind, namespaces,
 * labelSelector, fieldSelector, metadataOnly, transform }]` —, what is kept of each object (`defaultTransform`,
 * e.g. `transforms.stripManagedFields`), and how reconciles read it.
 */
export interface ManagerCacheOptions extends CacheScope {
  /**
   * `ctx.client` and `mgr.client` reads answered from the cache hand out the cached objects themselves, frozen,
   * instead of deep copies (controller-runtime's `UnsafeDisableDeepCopy`): no copy per read, which matters for
   * large objects or lists; a write to what was read throws, so copy (`structuredClone`) before changing it.
   * `ctx.cache` always answers this way.
   */
  unsafeDisableDeepCopy?: boolean;
  /**
   * A `ctx.client` or `mgr.client` read of a kind that no informer caches throws a `NotCachedError` (not a
   * not-found) instead of starting an informer for the kind (controller-runtime's `ReaderFailOnMissingInformer`).
   * By default, as controller-runtime's cache, the first read of a kind starts an informer for it — every object of
   * the kind in the cache's namespaces, in memory, and the manager needs list and watch on it — and waits for its
   * first list; `apiReader` reads past the cache.
   */
  readerFailOnMissingInformer?: boolean;
}

/** A start-up or runtime failure of the manager, with a message that says what to do. */
export class ManagerError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_MANAGER';
  override name = 'ManagerError';
}

const IN_CLUSTER_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** Runs controllers with a metrics server, health probes and optional leader election. */
export class Manager {
  private readonly opts: ManagerOptions;
  private readonly log: Logger;
  private readonly controllers: Controller[] = [];
  private _client: KubeClient | undefined;
  private _objectClient: ObjectClient | undefined;
  private _apiReader: ObjectClient | undefined;
  private _restMapper: RESTMapper | undefined;
  private _restConfig: RestConfig | undefined;
  private _metricsServer: MetricsServer | undefined;
  private _health: HealthProbeServer | undefined;
  private _webhookServer: WebhookServer | undefined;
  private _profiling: ProfilingServer | undefined;
  private informers: InformerSet | undefined;
  private events: EventBroadcaster | undefined;
  private eventsV1: EventsV1Broadcaster | undefined;
  private elector: LeaderElector | undefined;
  private electorStop: AbortController | undefined;
  private renewing: Promise<void> | undefined;
  private leaseLost = false;
  private startedFlag = false;
  private running = false;
  private stopping = false;
  /** Up (metrics, probes) and waiting for the Lease: a standby replica, ready so that rolling updates proceed. */
  private standby = false;
  private readonly extraHealthz: Array<[string, HealthCheck]> = [];
  private readonly extraReadyz: Array<[string, HealthCheck]> = [];
  private readonly readyPromise: Promise<void>;
  private resolveReady!: () => void;
  private rejectReady!: (e: Error) => void;
  /** The runnables, in controller-runtime's groups. */
  private readonly groups: Record<
    'httpServers' | 'webhooks' | 'caches' | 'others' | 'warmup' | 'leaderElection',
    RunnableGroup
  >;
  /** Stops the running manager with an error (set while start() runs). */
  private failRunning: ((e: Error) => void) | undefined;
  private stopDeadline: number | undefined;
  private controllerDeps: ControllerStartDeps | undefined;
  private fencing: Pick<ControllerStartDeps, 'mayReconcile' | 'onFenced' | 'shard'> = {};

  /**
   * Makes a manager that is usable before {@link start} (controller-runtime's `manager.New`): loads the API
   * configuration (`restConfig`, else `kubeconfig`, `KUBECONFIG`, in-cluster, `~/.kube/config`), builds the client,
   * the REST mapper and the event recorder, and settles the Lease namespace when leader election is on. A
   * configuration that cannot be loaded rejects here, with a {@link ManagerError} whose `cause` is the loader's
   * error; the API is first contacted by {@link start}.
   *
   * @example
   * ```ts
   * const mgr = await Manager.create({ leaderElection: true, leaderElectionID: 'memcached-operator' });
   * const nodes = await mgr.client.list('v1', 'Node'); // reads at set-up
   * mgr.add(newMemcachedController());
   * await mgr.start();
   * ```
   */
  static async create(opts: ManagerOptions = {}): Promise<Manager> {
    let restConfig = opts.restConfig;
    if (!restConfig) {
      try {
        restConfig = await loadRestConfig({ kubeconfig: opts.kubeconfig });
      } catch (err) {
        throw new ManagerError(`cannot load the Kubernetes API configuration: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }
    const leaderElectionNamespace_ = opts.leaderElection
      ? await leaderElectionNamespace(opts.leaderElectionNamespace)
      : opts.leaderElectionNamespace;
    // a shard's Lease namespace is settled here too, so that a manager made outside a pod without one fails now
    const sharding = opts.sharding && {
      ...opts.sharding,
      leaseNamespace: await leaderElectionNamespace(opts.sharding.leaseNamespace ?? opts.leaderElectionNamespace),
    };
    return new Manager({
      ...opts,
      restConfig,
      leaderElectionNamespace: leaderElectionNamespace_,
      ...(sharding ? { sharding } : {}),
    });
  }

  /**
   * A manager whose client exists once started, unless `restConfig` is given; {@link Manager.create} makes one that
   * is usable at once.
   */
  constructor(opts: ManagerOptions = {}) {
    this.opts = opts;
    this.log = opts.logger ?? createLogger('manager');
    if (opts.restConfig) {
      this._restConfig = opts.restConfig;
      this._client = new KubeClient(opts.restConfig);
      this._restMapper = new RESTMapper(this._client);
    }
    if (opts.leaderElection && !opts.leaderElectionID) {
      throw new ManagerError('leaderElectionID is required when leader election is enabled');
    }
    if (opts.sharding) {
      if (opts.leaderElection)
        throw new ManagerError(
          'sharding and leaderElection cannot both be on: a shard holds a Lease of its own and runs its controllers while it holds it; drop leaderElection',
        );
      const why = invalidRingName(String(opts.sharding.ring ?? ''));
      if (why) throw new ManagerError(`sharding.ring ${JSON.stringify(opts.sharding.ring)} cannot name a ring: ${why}`);
    }
    this.readyPromise = new Promise<void>((res, rej) => {
      this.resolveReady = res;
      this.rejectReady = rej;
    });
    this.readyPromise.catch(() => undefined);
    const onFailure = (err: Error, member: string) => this.runnableFailed(err, member);
    this.groups = {
      httpServers: new RunnableGroup('HTTP servers', onFailure),
      webhooks: new RunnableGroup('webhooks', onFailure),
      caches: new RunnableGroup('caches', onFailure),
      others: new RunnableGroup('non leader election runnables', onFailure),
      warmup: new RunnableGroup('warmup runnables', onFailure),
      leaderElection: new RunnableGroup('leader election runnables', onFailure),
    };
  }

  /** A runnable rejected: the manager stops with that error as the cause of its own (after stop began: logged). */
  private runnableFailed(err: Error, member: string): void {
    const e = err instanceof ManagerError ? err : new ManagerError(`${member} failed: ${err.message}`, { cause: err });
    if (this.failRunning && !this.stopping) this.failRunning(e);
    else this.log.error('error received after stop sequence was engaged', { runnable: member, err: err.message });
  }

  /**
   * Adds a controller, a {@link Runnable}, a {@link Webhook} (its paths are registered on {@link webhookServer}) or a
   * {@link ConversionWebhook} (served at `/convert`, one path for every kind, as controller-runtime).
   *
   * Controllers and runnables run in controller-runtime's groups: those that need leader election (the default)
   * only on the replica holding the Lease, those with `needLeaderElection: false` on every replica, started after
   * the caches and stopped before them. Added after {@link start}, they start at once in their group (a leader's
   * runnable on a standby waits for the Lease). Webhooks are added before start.
   */
  add(item: Controller | Webhook<object> | ConversionWebhook | Runnable): this {
    if (item instanceof Webhook) return this.addWebhook(item);
    if (item instanceof ConversionWebhook) return this.addConversion(item);
    if (item instanceof Controller) return this.addController(item);
    if (typeof (item as Partial<Runnable> | undefined)?.start !== 'function') {
      throw new ManagerError(
        'add() takes a Controller, a Webhook, a ConversionWebhook or a Runnable (an object with start(signal))',
      );
    }
    const group = item.needLeaderElection === false ? this.groups.others : this.groups.leaderElection;
    this.addTo(group, () => group.add(item), item.name ?? 'runnable');
    return this;
  }

  private addController(controller: Controller): this {
    if (this.controllers.some((c) => c.name === controller.name)) {
      throw new ManagerError(
        `a controller named ${controller.name} was already added: controller names must be unique (they label the metrics)`,
      );
    }
    if (this.opts.sharding && controller.needLeaderElection && this.informers)
      throw new ManagerError(
        `cannot add controller ${controller.name} after start to a sharded manager: its kinds' caches are filtered by the shard label when the manager starts; add it before start()`,
      );
    const group = controller.needLeaderElection ? this.groups.leaderElection : this.groups.others;
    this.addTo(
      group,
      () => void group.addReporting(this.controllerRunnable(controller))?.catch(() => undefined),
      `controller ${controller.name}`,
    );
    // warm-up only matters where a replica waits for the Lease
    if (
      this.opts.leaderElection &&
      controller.needLeaderElection &&
      (controller.enableWarmup ?? this.opts.enableWarmup ?? false)
    ) {
      this.groups.warmup.addReporting(this.warmupRunnable(controller))?.catch(() => undefined);
    }
    this.controllers.push(controller);
    return this;
  }

  /** Adds to a group, refusing once the manager stops. */
  private addTo(group: RunnableGroup, add: () => void, what: string): void {
    if (this.stopping || group.isStopping) throw new ManagerError(`cannot add ${what}: the manager is stopping`);
    add();
  }

  private readonly fieldIndexes: Array<{
    apiVersion: string;
    kind: string;
    field: string;
    extract: IndexExtractor<KubeObject>;
  }> = [];

  /**
   * Indexes the cached objects of a kind by a field (controller-runtime's `mgr.GetFieldIndexer().IndexField`), before
   * {@link start}: `extract` gives an object's values, and a reconcile lists the matches with
   * `ctx.cache.list(kind, { matchingFields: { [field]: value }, namespace })` in O(matches), e.g. the Deployments
   * owned by a Memcached or the Pods on a node.
   */
  indexField<T extends object = KubeObject>(
    target: { apiVersion: string; kind: string },
    field: string,
    extract: (obj: T) => string[] | string | undefined,
  ): this {
    if (this.startedFlag)
      throw new ManagerError(`cannot index ${target.kind} by ${field}: the manager is already started`);
    if (
      this.fieldIndexes.some((i) => i.apiVersion === target.apiVersion && i.kind === target.kind && i.field === field)
    ) {
      throw new ManagerError(`indexer conflict: ${target.kind} (${target.apiVersion}) is already indexed by ${field}`);
    }
    this.fieldIndexes.push({
      apiVersion: target.apiVersion,
      kind: target.kind,
      field,
      extract: extract as unknown as IndexExtractor<KubeObject>,
    });
    return this;
  }

  private conversions: ConversionRegistry | undefined;

  private addConversion(webhook: ConversionWebhook): this {
    const { kind, group } = webhook.opts;
    if (this.startedFlag)
      throw new ManagerError(`cannot add the conversion webhook for ${kind}.${group}: the manager is already started`);
    if (!this.conversions) {
      if (this.webhookServer.paths.includes(CONVERSION_PATH))
        throw new ManagerError(`a webhook is already registered at ${CONVERSION_PATH}, where conversions are served`);
      this.conversions = new ConversionRegistry();
      this.webhookServer.registerConversion(CONVERSION_PATH, this.conversions);
    }
    try {
      this.conversions.add(webhook);
    } catch (err) {
      throw new ManagerError((err as Error).message, { cause: err });
    }
    return this;
  }

  private addWebhook(webhook: Webhook<object>): this {
    if (this.startedFlag)
      throw new ManagerError(`cannot add the webhook for ${webhook.opts.for.kind}: the manager is already started`);
    const server = this.webhookServer;
    const handlers = webhook.handlers();
    const taken = handlers.map(([path]) => path).filter((path) => server.paths.includes(path));
    if (taken.length)
      throw new ManagerError(
        `a webhook is already registered at ${taken.join(' and ')}: one defaulter and one validator per kind (or give custom paths)`,
      );
    for (const [path, handler] of handlers) server.register(path, handler);
    return this;
  }

  /**
   * The webhook server (made on first use, as controller-runtime's `GetWebhookServer`). Register raw admission
   * handlers on it; it starts with the manager once it has a path. `url` is its bound address once started.
   */
  get webhookServer(): WebhookServer {
    this._webhookServer ??= new WebhookServer(this.opts.webhook, this.log.child('webhook'));
    return this._webhookServer;
  }

  /** Adds a liveness check served on `/healthz` (the informer check is built in). */
  addHealthzCheck(name: string, check: HealthCheck): this {
    this.extraHealthz.push([name, check]);
    return this;
  }

  /** Adds a readiness check served on `/readyz` (the cache-sync check is built in). */
  addReadyzCheck(name: string, check: HealthCheck): this {
    this.extraReadyz.push([name, check]);
    return this;
  }

  /**
   * The client acting as the manager (controller-runtime's `GetClient`): objects in, objects out, as a reconcile's
   * `ctx.client`; once started, reads of what the manager's informers cache whole are answered from the cache.
   * Available at once with {@link Manager.create} or `restConfig`, else once started.
   */
  get client(): ObjectClient {
    this._objectClient ??= new ObjectClient(
      cachedReadClient(this.pathClient, () => this.informers, {
        unsafeDisableDeepCopy: this.opts.cache?.unsafeDisableDeepCopy,
        mapper: this.restMapper,
        readerFailOnMissingInformer: this.opts.cache?.readerFailOnMissingInformer,
      }),
      this.restMapper,
    );
    return this._objectClient;
  }

  /** {@link Manager.client} without the cache: reads straight from the API server (controller-runtime's `GetAPIReader`). */
  get apiReader(): ObjectClient {
    this._apiReader ??= new ObjectClient(this.pathClient, this.restMapper);
    return this._apiReader;
  }

  /**
   * The raw client taking API paths instead of objects, acting as the manager: every call goes to the API server.
   * Available when {@link Manager.client} is.
   */
  get pathClient(): KubeClient {
    if (!this._client)
      throw new ManagerError(
        'the manager has no API client yet: make it with `await Manager.create(options)` (or pass restConfig), or wait for start()',
      );
    return this._client;
  }

  /**
   * The manager's kind → resource mapper (controller-runtime's `GetRESTMapper`), shared by the controllers; asks the
   * API's discovery on first use of a group version. Available when the client is.
   */
  get restMapper(): RESTMapper {
    if (!this._restMapper) this._restMapper = new RESTMapper(this.pathClient);
    return this._restMapper;
  }

  /** The API configuration in use (once known). */
  get restConfig(): RestConfig | undefined {
    return this._restConfig;
  }

  /** The metrics server, once started (undefined when disabled). */
  get metricsServer(): MetricsServer | undefined {
    return this._metricsServer;
  }

  /** The profiling server, once started (undefined when disabled). */
  get profilingServer(): ProfilingServer | undefined {
    return this._profiling;
  }

  /** The health probe server, once started (undefined when disabled). */
  get healthProbeServer(): HealthProbeServer | undefined {
    return this._health;
  }

  /**
   * A recorder of core/v1 Events naming `name` as their source (controller-runtime's `GetEventRecorderFor`);
   * reconcilers have theirs as `ctx.recorder`. Needs the manager's API client: at once with {@link Manager.create} or
   * `restConfig`, else once start() has loaded the configuration (events before that are dropped with a warning).
   */
  getEventRecorderFor(name: string): EventRecorder {
    return {
      event: (obj, type, reason, message) => {
        if (this._client) this.eventBroadcaster().recorderFor(name).event(obj, type, reason, message);
        else
          this.log.warn(
            'event dropped: the manager has no API client yet (make it with Manager.create(), or record after start())',
            { reason },
          );
      },
    };
  }

  /**
   * A recorder of `events.k8s.io/v1` Events naming `name` as their reporting controller (controller-runtime's
   * `GetEventRecorder`, its default since v0.23): `event(regarding, related, type, reason, action, note)`, repeats
   * counted as a series as client-go's events API does. Needs the manager's API client, as
   * {@link getEventRecorderFor} (events before it exists are dropped with a warning); the core/v1 recorder stays for
   * clusters and tools that read those.
   */
  getEventRecorder(name: string): EventsV1Recorder {
    return {
      event: (regarding, related, type, reason, action, note) => {
        if (!this._client) {
          this.log.warn(
            'event dropped: the manager has no API client yet (make it with Manager.create(), or record after start())',
            { reason },
          );
          return;
        }
        this.eventsV1 ??= new EventsV1Broadcaster(this.pathClient, { logger: this.log.child('events') });
        this.eventsV1.recorderFor(name).event(regarding, related, type, reason, action, note);
      },
    };
  }

  private eventBroadcaster(): EventBroadcaster {
    return (this.events ??= new EventBroadcaster(this.pathClient, { logger: this.log.child('events') }));
  }

  /** Resolves once every component runs; rejects if start fails. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /**
   * Starts everything and runs until `signal` aborts (or SIGTERM/SIGINT), then stops in order and resolves.
   * Rejects with a {@link ManagerError} when start-up fails (cannot bind, cannot reach the API, caches do not
   * sync) or when leadership is lost; what was started is stopped first.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.startedFlag) throw new ManagerError('the manager was already started');
    this.startedFlag = true;
    // the process metrics' GC and event-loop monitors run from here, not from the library's import
    runtimeCollector.start();
    const stop = new AbortController();
    let fatal: Error | undefined;
    const fail = (err: Error) => {
      fatal ??= err;
      stop.abort();
    };
    this.failRunning = fail;
    const onAbort = () => stop.abort();
    if (signal?.aborted) stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const removeSignals = this.opts.handleSignals === false ? () => undefined : this.installSignalHandlers(stop);

    try {
      try {
        await this.startComponents(stop.signal, fail);
      } catch (err) {
        const e =
          err instanceof ManagerError ? err : new ManagerError(err instanceof Error ? err.message : String(err));
        this.rejectReady(e);
        // not logged here: the caller logs what start() rejects with (controller-runtime's main.go does, and the
        // scaffolded main.ts): logged here too, every start-up failure would show twice
        this.stopping = true;
        await this.stopComponents();
        // a runnable's failure that aborted the start is what start() reports, not the abort it caused
        throw fatal instanceof ManagerError ? fatal : e;
      }
      this.running = true;
      if (!stop.signal.aborted) {
        this.resolveReady();
        this.log.info('manager started', { controllers: this.controllers.map((c) => c.name) });
        await new Promise<void>((resolve) => {
          if (stop.signal.aborted) return resolve();
          stop.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      } else {
        this.rejectReady(new ManagerError('the manager was stopped while starting'));
      }
      this.running = false;
      this.stopping = true;
      const inTime = await this.stopComponents();
      if (fatal) throw fatal instanceof ManagerError ? fatal : new ManagerError(fatal.message, { cause: fatal });
      if (!inTime)
        throw new ManagerError(
          `failed waiting for all runnables to end within grace period of ${this.opts.gracefulShutdownTimeoutMs ?? 30_000} ms`,
        );
    } finally {
      signal?.removeEventListener('abort', onAbort);
      removeSignals();
    }
  }

  private installSignalHandlers(stop: AbortController): () => void {
    let count = 0;
    const handler = (sig: NodeJS.Signals) => {
      count++;
      if (count > 1) {
        this.log.error('second signal received: exiting at once', { signal: sig });
        process.exit(1);
      }
      this.log.info('signal received: shutting down', { signal: sig });
      stop.abort();
    };
    process.on('SIGTERM', handler);
    process.on('SIGINT', handler);
    return () => {
      process.off('SIGTERM', handler);
      process.off('SIGINT', handler);
    };
  }

  /**
   * Includes the default registries of the prom-client copies the application resolves other than ctrlmetrics'
   * own (once per process), and says which: a copy that cannot be included is a warning naming it, never a silent
   * loss of the application's metrics.
   */
  private async includeApplicationPromClients(log: Logger): Promise<void> {
    promClientCopies ??= includePromClientCopies();
    const first = !promClientCopiesReported;
    promClientCopiesReported = true;
    for (const c of await promClientCopies) {
      if (!first) continue;
      if (c.included)
        log.info('including the default registry of another prom-client copy', {
          module: c.module,
          version: c.version,
          dir: c.dir,
        });
      else {
        log.warn(
          `metrics of ${c.module} ${c.version} at ${c.dir} will not be served: ${c.reason}; pass its register to metrics.registerPromClientRegistry()`,
          {
            module: c.module,
            version: c.version,
            dir: c.dir,
          },
        );
      }
    }
  }

  private async startComponents(signal: AbortSignal, fail: (e: Error) => void): Promise<void> {
    // 1. API configuration and client
    if (!this._restConfig) {
      try {
        this._restConfig = await loadRestConfig({ kubeconfig: this.opts.kubeconfig });
      } catch (err) {
        throw new ManagerError(`cannot load the Kubernetes API configuration: ${(err as Error).message}`, {
          cause: err,
        });
      }
      this._client = new KubeClient(this._restConfig);
    }
    const client = this._client!;
    const mapper = this.restMapper;
    // leader election's configuration, before anything runs (controller-runtime builds its elector first)
    const sharding = this.opts.sharding;
    const leaseNamespace = this.opts.leaderElection
      ? await leaderElectionNamespace(this.opts.leaderElectionNamespace)
      : sharding
        ? await leaderElectionNamespace(sharding.leaseNamespace ?? this.opts.leaderElectionNamespace)
        : '';
    const shard = sharding ? this.shardGate(client, sharding) : undefined;

    // 2. is the API there?
    await this.checkApi(client, signal);
    if (signal.aborted) return;

    // 3. the manager's own runnables, each in its group
    this.informers = new InformerSet(
      client,
      this.opts.informers,
      this.log,
      shard ? this.shardScope(shard, this.opts.cache) : this.opts.cache,
    );
    for (const i of this.fieldIndexes) this.informers.addIndex(i, i.field, i.extract);
    this.addOwnRunnables(client);
    const timing = {
      namespace: leaseNamespace,
      leaseDurationMs: this.opts.leaseDurationMs,
      renewDeadlineMs: this.opts.renewDeadlineMs,
      retryPeriodMs: this.opts.retryPeriodMs,
    };
    const elector: LeaderElector | undefined = this.opts.leaderElection
      ? new (await import('./leaderelection.js')).LeaderElector(client, {
          id: this.opts.leaderElectionID!,
          ...timing,
          releaseOnCancel: this.opts.leaderElectionReleaseOnCancel ?? false,
          logger: this.log.child('leader-election'),
        })
      : shard
        ? // a shard's own Lease: named after the shard, held by it, labelled with the ring, given up on stop (TKCS)
          new (await import('./leaderelection.js')).LeaderElector(client, {
            id: shard.shard,
            identity: shard.shard,
            ...timing,
            releaseOnCancel: this.opts.leaderElectionReleaseOnCancel ?? true,
            labels: { [shard.labels.ring]: shard.ring },
            logger: this.log.child('shard-lease'),
          })
        : undefined;
    // what controllers are started with (fenced by the lease when leader election or sharding is on)
    const fencing = elector
      ? {
          mayReconcile: () => elector.mayLead(),
          onFenced: () => {
            this.leaseLost = true;
            fail(
              new ManagerError(
                `${shard ? 'shard lease' : 'leader election'} lost: the lease may have expired by this process's clock (paused, or renewals failing); no reconcile was started`,
              ),
            );
          },
          ...(shard ? { shard } : {}),
        }
      : {};
    this.controllerDeps = {
      client,
      informers: this.informers,
      logger: this.log,
      signal,
      mapper,
      events: this.eventBroadcaster(),
      unsafeDisableDeepCopy: this.opts.cache?.unsafeDisableDeepCopy,
      readerFailOnMissingInformer: this.opts.cache?.readerFailOnMissingInformer,
    };
    this.fencing = fencing;

    // 4. the groups in controller-runtime's order: HTTP servers (metrics, probes: served whether or not this replica
    // leads) → webhooks (before the caches: a conversion webhook may be needed by the manager's own first list) →
    // caches → runnables that run on every replica → leader election → the leader's runnables (controllers)
    for (const group of [this.groups.httpServers, this.groups.webhooks, this.groups.caches, this.groups.others]) {
      await group.start();
      if (signal.aborted) return;
    }
    // warm-up runs beside the wait for the Lease: not awaited, as controller-runtime's
    void this.groups.warmup.start().catch(() => undefined);

    // 5. leader election
    if (elector) {
      this.elector = elector;
      this.standby = true;
      const acquired = await elector.acquire(signal);
      this.standby = false;
      if (!acquired) return;
      // renewal runs on its own signal: shutdown stops the controllers first, and only then leader election
      const electorStop = new AbortController();
      this.electorStop = electorStop;
      this.renewing = elector.renewLoop(electorStop.signal).then((lost) => {
        if (!lost) return;
        this.leaseLost = true;
        fail(
          new ManagerError(shard ? lost.message.replace(/^leader election lost/, 'shard lease lost') : lost.message),
        );
      });
    }

    // 6. the runnables that need the lease
    await this.groups.leaderElection.start();
  }

  /**
   * The metrics server, the health probes, the webhook server and the caches, as runnables in their groups (added
   * before the groups start, so no launch is returned to wait on).
   */
  private addOwnRunnables(client: KubeClient): void {
    // as in controller-runtime: an empty address means the default, only "0" disables the server
    const addr = this.opts.metrics?.bindAddress || DEFAULT_BIND_ADDRESS;
    if (!isDisabled(addr)) {
      const metricsLog = this.log.child('metrics');
      void this.groups.httpServers.addReporting({
        name: 'metrics server',
        start: async (signal, up) => {
          await this.includeApplicationPromClients(metricsLog);
          const server = createMetricsServer(
            { ...this.opts.metrics, bindAddress: addr },
            { restConfig: this._restConfig, kubeClient: client, logger: metricsLog },
          );
          try {
            await server.start();
          } catch (err) {
            const msg = (err as Error).message;
            throw new ManagerError(`failed to start metrics server${msg.includes(addr) ? '' : ` on ${addr}`}: ${msg}`, {
              cause: err,
            });
          }
          this._metricsServer = server;
          this.log.info('metrics server is serving', { url: server.url });
          up();
          await aborted(signal);
          await server.stop();
        },
      });
    }
    if (!isDisabled(this.opts.healthProbeBindAddress)) {
      const health = this.probeServer(this.informers!);
      void this.groups.httpServers.addReporting({
        name: 'health probe server',
        start: async (signal, up) => {
          await health.start().catch((err: Error) => {
            throw new ManagerError(err.message, { cause: err });
          });
          this._health = health;
          this.log.info('health probes are serving', { url: health.url });
          up();
          await aborted(signal);
          await health.stop();
        },
      });
    }
    if (!isDisabled(this.opts.profilingBindAddress)) {
      void this.groups.httpServers.addReporting({
        name: 'profiling server',
        start: async (signal, up) => {
          const { ProfilingServer } = await import('./profiling.js');
          const profiling = new ProfilingServer(this.opts.profilingBindAddress!, this.log.child('profiling'));
          try {
            await profiling.start();
          } catch (err) {
            throw new ManagerError(`failed to start the profiling server: ${(err as Error).message}`, { cause: err });
          }
          this._profiling = profiling;
          this.log.info('profiling server is serving', { url: profiling.url });
          up();
          await aborted(signal);
          await profiling.stop();
        },
      });
    }
    // every replica serves the webhooks, leader or not
    const webhooks = this._webhookServer;
    if (webhooks && webhooks.paths.length > 0) {
      void this.groups.webhooks.addReporting({
        name: 'webhook server',
        start: async (signal, up) => {
          try {
            await webhooks.start();
          } catch (err) {
            throw new ManagerError(`failed to start webhook server: ${(err as Error).message}`, { cause: err });
          }
          up();
          await aborted(signal);
          await webhooks.stop();
        },
      });
    }
    const informers = this.informers!;
    void this.groups.caches.addReporting({
      name: 'caches',
      start: async (signal, up) => {
        const shard = this.fencing.shard;
        // a shard's share of the ring: the objects its caches hold under the shard label
        const unreport = shard ? reportCachedObjects(() => cachedShare(informers, shard)) : undefined;
        up();
        await aborted(signal);
        unreport?.();
        await informers.stop();
      },
    });
  }

  private probeServer(informers: InformerSet): HealthProbeServer {
    const health = new HealthProbeServer(this.opts.healthProbeBindAddress!);
    health.healthz.add('ping', () => undefined);
    health.healthz.add('informers', () => {
      const bad = informers
        .all()
        .map((i) => i.health())
        .filter((h) => !h.healthy);
      if (bad.length) return new Error(bad.map((b) => b.reason).join('; '));
    });
    health.readyz.add('ping', () => undefined);
    health.readyz.add('informers-synced', () => {
      // a standby is ready once the caches it keeps (warm-up, every-replica controllers) synced, so that a rolling
      // update proceeds while the old pod holds the Lease
      if (!this.running && !this.standby) return new Error('the manager is not running');
      const pending = informers.unsynced();
      if (pending.length) return new Error(`caches not synced: ${pending.join(', ')}`);
    });
    const webhooks = this._webhookServer;
    if (webhooks && webhooks.paths.length > 0) health.readyz.add('webhook', webhooks.startedCheck());
    for (const [n, c] of this.extraHealthz) health.healthz.add(n, c);
    for (const [n, c] of this.extraReadyz) health.readyz.add(n, c);
    return health;
  }

  /** The ownership gate of a sharded manager, its shard name settled (`POD_NAME`, else the hostname) and checked. */
  private shardGate(client: KubeClient, sharding: ShardingOptions): ShardGate {
    const name = sharding.shardName ?? process.env.POD_NAME ?? hostname();
    const why = invalidShardName(name);
    if (why)
      throw new ManagerError(
        `the shard name ${JSON.stringify(name)}${sharding.shardName === undefined ? (process.env.POD_NAME === undefined ? ' (the hostname)' : ' (POD_NAME)') : ''} cannot name a shard: ${why}; set sharding.shardName, or POD_NAME`,
      );
    return new ShardGate(sharding.ring, name, client, sharding.labelPrefix);
  }

  /**
   * The cache scope of a sharded manager: the primary and owned kinds of its sharded controllers (those that need
   * the Lease) cached only as labelled for this shard, joined with the user's own selector of the kind.
   */
  private shardScope(shard: ShardGate, scope: ManagerCacheOptions = {}): ManagerCacheOptions {
    const kinds = new Map<string, { apiVersion: string; kind: string }>();
    for (const c of this.controllers) {
      if (!c.needLeaderElection) continue;
      for (const w of c.watchSpecs)
        if (
          w.enqueue === undefined ||
          w.enqueue === 'self' ||
          (typeof w.enqueue === 'object' && 'ownerKind' in w.enqueue)
        )
          kinds.set(`${w.apiVersion}/${w.kind}`, { apiVersion: w.apiVersion, kind: w.kind });
    }
    const byObject = [...(scope.byObject ?? [])];
    for (const k of kinds.values()) {
      const i = byObject.findIndex((o) => o.apiVersion === k.apiVersion && o.kind === k.kind);
      const own = i >= 0 ? byObject[i] : undefined;
      const user = own ? own.labelSelector : scope.defaultLabelSelector;
      const entry = { ...k, ...own, labelSelector: user?.trim() ? `${user},${shard.selector}` : shard.selector };
      if (i >= 0) byObject[i] = entry;
      else byObject.push(entry);
    }
    return { ...scope, byObject };
  }

  /**
   * A controller's warm-up as a runnable: its sources start and sync on the standby; the runnable is up at once
   * (nothing waits for it). Stopped before the leader's runnables: a controller that never got to lead is stopped
   * here, one that leads is left to the leader group.
   */
  private warmupRunnable(c: Controller): ReportingRunnable {
    return {
      name: `warmup of controller ${c.name}`,
      start: async (signal, up) => {
        up();
        const deps = this.controllerDeps!;
        try {
          await c.warmup({ ...deps, ...this.fencing, signal: AbortSignal.any([deps.signal, signal]) });
        } catch (err) {
          throw new ManagerError((err as Error).message, { cause: err });
        }
        await aborted(signal);
        if (!c.isStarted) await c.stop(this.stopBudgetLeft());
      },
    };
  }

  /** A controller as a runnable: up once its caches synced and its workers run. */
  private controllerRunnable(c: Controller): ReportingRunnable {
    return {
      name: `controller ${c.name}`,
      start: async (signal, up) => {
        const deps = this.controllerDeps!;
        try {
          // only the leader's controllers are fenced by the lease: the others reconcile on every replica
          await c.start({
            ...deps,
            ...(c.needLeaderElection ? this.fencing : {}),
            signal: AbortSignal.any([deps.signal, signal]),
          });
        } catch (err) {
          throw new ManagerError((err as Error).message, { cause: err });
        }
        if (signal.aborted || deps.signal.aborted) {
          await c.stop(this.stopBudgetLeft());
          return;
        }
        up();
        await aborted(signal);
        if (!(await c.stop(this.stopBudgetLeft())))
          this.log.warn('some reconciles did not finish within the graceful shutdown timeout', { controller: c.name });
      },
    };
  }

  private async checkApi(client: KubeClient, signal: AbortSignal): Promise<void> {
    const server = this._restConfig!.server;
    let res;
    try {
      res = await client.raw('GET', '/version', {
        timeoutMs: this.opts.apiCheckTimeoutMs ?? 10_000,
        retry: { steps: 3, baseMs: 300, factor: 2, jitter: 0.2 },
        signal,
      });
    } catch (err) {
      if (signal.aborted) return;
      const msg = err instanceof KubeApiError ? err.message : String(err);
      throw new ManagerError(
        `cannot reach the Kubernetes API at ${server}: ${msg} (check --kubeconfig and that the API server is running)`,
      );
    }
    if (res.status === 401) {
      throw new ManagerError(
        `the Kubernetes API at ${server} rejected the manager's credentials (401 Unauthorized): check the token or client certificate in the kubeconfig`,
      );
    }
    if (res.status >= 500) {
      throw new ManagerError(`the Kubernetes API at ${server} is not healthy: GET /version answered ${res.status}`);
    }
  }

  /** What is left of the shutdown budget, in ms. */
  private stopBudgetLeft(): number {
    if (this.leaseLost) return 0;
    return this.stopDeadline === undefined
      ? (this.opts.gracefulShutdownTimeoutMs ?? 30_000)
      : Math.max(100, this.stopDeadline - Date.now());
  }

  /**
   * Stops the groups in the reverse of their start, as controller-runtime: every-replica runnables, the leader's
   * (controllers), the caches, then the lease is released, then webhooks, then the HTTP servers (metrics last, so
   * the final state of the counters can still be scraped while the rest drains). Resolves false when a group did
   * not end within the budget.
   */
  private async stopComponents(): Promise<boolean> {
    // a lost lease stops at once, as controller-runtime (grace 0): another replica may already be leading
    const budget = this.leaseLost ? 0 : (this.opts.gracefulShutdownTimeoutMs ?? 30_000);
    this.stopDeadline = Date.now() + budget;
    const left = () => this.stopBudgetLeft();
    let inTime = true;
    if (this.groups.warmup.isStarted) inTime = (await this.groups.warmup.stop(left())) && inTime;
    if (this.groups.others.isStarted) {
      this.log.info('Stopping and waiting for non leader election runnables');
      inTime = (await this.groups.others.stop(left())) && inTime;
    }
    this.log.info('Stopping and waiting for controllers');
    inTime = (await this.groups.leaderElection.stop(left())) && inTime;
    // events the controllers recorded last are still written (bounded), as controller-runtime's broadcaster drains
    await Promise.all([this.events?.shutdown(Math.min(2000, left())), this.eventsV1?.shutdown(Math.min(2000, left()))]);
    this.log.info('Stopping and waiting for caches');
    inTime = (await this.groups.caches.stop(left())) && inTime;
    if (this.elector) {
      this.log.info('Stopping and waiting for leader election runnables');
      this.electorStop?.abort();
      await this.renewing;
      await this.elector.release();
    }
    if (this.groups.webhooks.isStarted) {
      this.log.info('Stopping and waiting for webhooks');
      inTime = (await this.groups.webhooks.stop(left())) && inTime;
    }
    this.log.info('Stopping and waiting for HTTP servers');
    inTime = (await this.groups.httpServers.stop(left())) && inTime;
    this._client?.close();
    this.log.info('Wait completed, proceeding to shutdown the manager');
    return inTime || this.leaseLost;
  }
}

/** Resolves when `signal` aborts. */
function aborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/**
 * The Lease namespace as controller-runtime decides it: the option when given, else the namespace of the pod's
 * service account (`namespaceFile`), else a {@link ManagerError} with controller-runtime's message.
 */
/** The objects a shard's informers hold under its shard label, by collection. */
function cachedShare(informers: InformerSet, shard: ShardGate): CachedObjects[] {
  const out = new Map<string, CachedObjects>();
  for (const i of informers.all()) {
    if (!i.labelSelector?.split(',').includes(shard.selector)) continue;
    const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)(?:\/namespaces\/[^/]+)?\/([^/]+)$/.exec(i.path);
    if (!m) continue;
    const group = m[1] ?? '';
    const key = `${group}/${m[2]}`;
    const c = out.get(key) ?? { ring: shard.ring, shard: shard.shard, group, resource: m[2], count: 0 };
    c.count += i.size;
    out.set(key, c);
  }
  return [...out.values()];
}

export async function leaderElectionNamespace(
  option: string | undefined,
  namespaceFile = IN_CLUSTER_NAMESPACE_FILE,
): Promise<string> {
  if (option) return option;
  let fromPod = '';
  try {
    const { readFile } = await import('node:fs/promises');
    fromPod = (await readFile(namespaceFile, 'utf8')).trim();
  } catch {
    // not in a pod
  }
  if (fromPod) return fromPod;
  throw new ManagerError(
    'unable to find leader election namespace: not running in-cluster, please specify LeaderElectionNamespace ' +
      '(the leaderElectionNamespace option; --leader-election-namespace in the generated manager)',
  );
}

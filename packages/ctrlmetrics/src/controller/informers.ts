/**
 * A set of informers shared by the controllers of one manager: watches of the same collection and selectors
 * share one list/watch and one cache (like controller-runtime's cache).
 */
import { Informer, type InformerObject, type InformerOptions } from '../kube/informer.js';
import type { IndexExtractor } from '../kube/field-index.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../util/log.js';
import { collectionPath } from './handlers.js';
import { NoKindMatchError, type RESTMapper } from '../kube/restmapper.js';
import { NotCachedError } from './not-cached.js';
import { after } from '../util/timers.js';
import type { KubeObject, WatchSpec } from './types.js';
import { CtrlmetricsError } from '../util/errors.js';

/** Tuning shared by every informer of a manager (see {@link InformerOptions}). */
export type InformerTuning = Omit<
  InformerOptions,
  'path' | 'labelSelector' | 'fieldSelector' | 'logger' | 'notFoundHint'
>;

/**
 * What to do when the API does not serve a watched kind (controller-runtime: install a CRD before Start); the
 * resource is named once discovery gave it (a CRD deleted after the watch started).
 */
export function notFoundHint(spec: Pick<WatchSpec, 'apiVersion' | 'kind' | 'resource'>): string {
  const what = `${spec.kind} (${spec.apiVersion}${spec.resource ? `, resource ${spec.resource}` : ''})`;
  return spec.apiVersion.includes('/') && !BUILTIN_GROUP.test(spec.apiVersion)
    ? `the API server does not serve ${what}: install the CRD of ${spec.kind} before starting the manager (in a scaffolded project: kubectl apply -k config/crd), or correct the watch's apiVersion or kind`
    : `the API server does not serve ${what}: correct the watch's apiVersion or kind (if ${spec.kind} is a custom resource, install its CRD first)`;
}

/** How often a watch of a kind the API does not serve (yet) asks discovery again. */
const RESOLVE_RETRY_MS = 1_000;

/** API groups of Kubernetes itself (`apps/v1`, `rbac.authorization.k8s.io/v1`, …): no CRD to install there. */
const BUILTIN_GROUP = /^([a-z0-9-]+|[a-z0-9.-]+\.k8s\.io)\//;

/**
 * What a manager's cache holds (controller-runtime's `cache.Options`): only some namespaces, only objects matching
 * selectors — by default for every kind, or per kind. A watch is narrowed to it: its selectors are combined with the
 * cache's, a watch over all namespaces of a namespaced kind becomes one list/watch per cached namespace.
 */
export interface CacheScope {
  /** Namespaces cached (controller-runtime's `DefaultNamespaces`); unset: all. */
  defaultNamespaces?: string[];
  /** Label selector every watch is narrowed by (`DefaultLabelSelector`). */
  defaultLabelSelector?: string;
  /** Field selector every watch is narrowed by (`DefaultFieldSelector`). */
  defaultFieldSelector?: string;
  /**
   * Changes every object before it is cached (`DefaultTransform`), e.g. `transforms.stripManagedFields`; the same
   * as `informers.transform` of the manager, which only one of the two may set. It gets the decoded object the
   * cache owns and returns what to keep.
   */
  defaultTransform?: CacheTransform;
  /** Per kind, instead of the defaults (`ByObject`); a setting left out there falls back to the default. */
  byObject?: CacheByObject[];
}

/** Changes an object before it is cached (controller-runtime's `toolscache.TransformFunc`). */
export type CacheTransform = (obj: KubeObject) => KubeObject;

/** The cache options of one kind (an entry of controller-runtime's `ByObject`). */
export interface CacheByObject {
  apiVersion: string;
  kind: string;
  /** Namespaces cached for this kind instead of `defaultNamespaces`. */
  namespaces?: string[];
  /** Instead of `defaultLabelSelector`. */
  labelSelector?: string;
  /** Instead of `defaultFieldSelector`. */
  fieldSelector?: string;
  /** Cache only metadata (PartialObjectMetadata) of this kind. */
  metadataOnly?: boolean;
  /** Instead of `defaultTransform`. */
  transform?: CacheTransform;
}

/** What the controllers read of a watch: one informer, or one per namespace of a namespace-scoped cache. */
export type WatchCache = Pick<
  Informer<KubeObject>,
  'path' | 'synced' | 'addHandler' | 'waitForSync' | 'get' | 'list' | 'byIndex' | 'lastFailure'
>;

/** Two selectors that must both hold (the API reads `a,b` as a and b). */
function both(a: string | undefined, b: string | undefined): string | undefined {
  const parts = [a, b].filter((x): x is string => !!x && x.trim() !== '');
  return parts.length ? parts.join(',') : undefined;
}

/** The informers of one watch over several namespaces, seen as one cache. */
class NamespacesCache implements WatchCache {
  constructor(
    readonly path: string,
    private readonly byNamespace: Map<string, Informer<KubeObject>>,
  ) {}

  get synced(): boolean {
    return [...this.byNamespace.values()].every((i) => i.synced);
  }

  addHandler(h: Parameters<Informer<KubeObject>['addHandler']>[0]): () => void {
    const removers = [...this.byNamespace.values()].map((i) => i.addHandler(h));
    return () => removers.forEach((r) => r());
  }

  async waitForSync(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return (await Promise.all([...this.byNamespace.values()].map((i) => i.waitForSync(timeoutMs, signal)))).every(
      Boolean,
    );
  }

  get(key: string): KubeObject | undefined {
    const slash = key.indexOf('/');
    return slash < 0 ? undefined : this.byNamespace.get(key.slice(0, slash))?.get(key);
  }

  list(): KubeObject[] {
    return [...this.byNamespace.values()].flatMap((i) => i.list());
  }

  byIndex(name: string, value: string, namespace?: string): KubeObject[] {
    if (namespace !== undefined) return this.byNamespace.get(namespace)?.byIndex(name, value, namespace) ?? [];
    return [...this.byNamespace.values()].flatMap((i) => i.byIndex(name, value));
  }

  get lastFailure(): string | undefined {
    return [...this.byNamespace.values()].map((i) => i.lastFailure).find((f) => f !== undefined);
  }
}

/** Creates and shares informers; starts each on first use. */
export class InformerSet {
  private readonly informers = new Map<string, Informer<KubeObject>>();
  /** The informers that cache a whole collection (no label or field selector), by collection path. */
  private readonly whole = new Map<string, Informer<KubeObject>>();

  private readonly specs = new Map<string, WatchSpec>();
  private readonly indexes: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    extract: IndexExtractor<KubeObject>;
  }> = [];

  constructor(
    private readonly client: KubeClient,
    private readonly tuning: InformerTuning = {},
    private readonly logger?: Logger,
    private readonly scope: CacheScope = {},
  ) {
    for (const o of scope.byObject ?? []) {
      if (!o?.apiVersion || !o.kind) throw new TypeError('cache.byObject: each entry needs apiVersion and kind');
      if (o.transform !== undefined && typeof o.transform !== 'function')
        throw new TypeError(`cache.byObject ${o.kind}: transform must be a function`);
    }
    if (scope.defaultTransform !== undefined && typeof scope.defaultTransform !== 'function')
      throw new TypeError('cache.defaultTransform must be a function');
    if (scope.defaultTransform && tuning.transform) {
      throw new TypeError(
        'cache.defaultTransform and informers.transform both set: they are the same setting, keep one',
      );
    }
    for (const ns of [
      ...(scope.defaultNamespaces ?? []),
      ...(scope.byObject ?? []).flatMap((o) => o.namespaces ?? []),
    ]) {
      if (typeof ns !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns))
        throw new TypeError(`cache namespaces: ${JSON.stringify(ns)} is not a namespace name`);
    }
  }

  /** Set by {@link stop}: no informer starts after it. */
  private stopped = false;

  /**
   * The synced informer caching a whole collection (`/api/v1/namespaces/ns/configmaps`) for a client's read, as
   * controller-runtime's cache does on the first Get or List of a kind: when no informer caches it, one is started
   * for the kind — scoped as every watch is (`defaultNamespaces`, `byObject`) — unless `start` is false
   * (`cache.readerFailOnMissingInformer`), which throws a {@link NotCachedError}; the read waits for its first
   * list, at most `timeoutMs` (then an Error with the list's last failure). Undefined when the collection cannot
   * be cached whole (a resource without list and watch, the cache's selectors, a namespace outside the cache,
   * `signal` aborted, the set stopped): the read goes to the API server then.
   */
  async informerForRead(
    collection: string,
    namespace: string | undefined,
    mapper: RESTMapper,
    opts: { start: boolean; timeoutMs: number; signal?: AbortSignal },
  ): Promise<Informer<KubeObject> | undefined> {
    const existing =
      this.whole.get(collection) ??
      (namespace === undefined
        ? undefined
        : this.whole.get(collection.replace(`/namespaces/${encodeURIComponent(namespace)}/`, '/')));
    let cache: WatchCache | undefined = existing;
    if (!cache) {
      const m = /^\/(?:api\/(v1)|apis\/([^/]+\/[^/]+))(?:\/namespaces\/[^/]+)?\/([^/]+)$/.exec(collection);
      if (!m || this.stopped) return undefined;
      const apiVersion = m[1] ?? m[2];
      const mapping = await mapper.mappingForResource(apiVersion, m[3]);
      if (!mapping || !mapping.verbs.includes('list') || !mapping.verbs.includes('watch')) return undefined;
      // the cache's selectors or metadata-only setting for the kind: an informer of it could never answer a read
      const own = this.scope.byObject?.find((o) => o.apiVersion === apiVersion && o.kind === mapping.kind);
      const selectors = own
        ? [own.labelSelector, own.fieldSelector]
        : [this.scope.defaultLabelSelector, this.scope.defaultFieldSelector];
      if (own?.metadataOnly || selectors.some((x) => x !== undefined && x.trim() !== '')) return undefined;
      if (!opts.start) {
        throw new NotCachedError(
          `${mapping.kind} (${apiVersion}) is not cached: the manager's cache.readerFailOnMissingInformer is set and nothing watches it; watch it, or read it with apiReader`,
        );
      }
      if (this.stopped) return undefined;
      cache = this.cacheFor({
        apiVersion,
        kind: mapping.kind,
        resource: mapping.resource,
        clusterScoped: !mapping.namespaced,
      });
    }
    if (!(await cache.waitForSync(opts.timeoutMs, opts.signal))) {
      if (opts.signal?.aborted || this.stopped) return undefined;
      throw new Error(
        `timed out after ${opts.timeoutMs} ms waiting for the cache of ${cache.path} to sync for a read: ${cache.lastFailure ?? 'no list answered yet'}`,
      );
    }
    return this.wholeCollection(collection, namespace);
  }

  /** Watches waiting for discovery to serve their kind, with the last answer (see {@link resolve}). */
  private readonly resolving = new Set<{ what: string; lastFailure: string }>();

  /**
   * A watch spec with its resource and scope from discovery (controller-runtime's RESTMapper), never a guessed
   * plural. A kind the API does not serve (yet: a CRD installed after the manager started) or a discovery that
   * fails is asked again every second until `deadline` (an Error naming the kind and what to do) or until
   * `signal` aborts (undefined). A `resource` or `clusterScoped` in the spec that contradicts discovery is an
   * error at once.
   */
  async resolve(
    spec: WatchSpec,
    mapper: RESTMapper,
    deadline: number,
    signal: AbortSignal,
  ): Promise<WatchSpec | undefined> {
    const what = `${spec.kind} (${spec.apiVersion})`;
    const entry = { what, lastFailure: 'discovery not answered yet' };
    this.resolving.add(entry);
    try {
      for (;;) {
        if (signal.aborted) return undefined;
        try {
          const m = await mapper.mappingFor(spec.apiVersion, spec.kind);
          if (spec.resource !== undefined && spec.resource !== m.resource) {
            throw new WatchSpecError(
              `watch of ${what}: resource ${JSON.stringify(spec.resource)} is not the API's resource of the kind, ${JSON.stringify(m.resource)}: drop the option (discovery names it)`,
            );
          }
          if (spec.clusterScoped !== undefined && spec.clusterScoped === m.namespaced) {
            throw new WatchSpecError(
              `watch of ${what}: clusterScoped is ${spec.clusterScoped}, but the API serves ${spec.kind} as ${m.namespaced ? 'namespaced' : 'cluster-scoped'}: drop the option (discovery says it)`,
            );
          }
          return { ...spec, resource: m.resource, clusterScoped: !m.namespaced };
        } catch (err) {
          if (err instanceof WatchSpecError) throw err;
          const failure =
            err instanceof NoKindMatchError
              ? notFoundHint(spec)
              : `discovery of ${spec.apiVersion} failed: ${(err as Error).message}`;
          if (failure !== entry.lastFailure)
            this.logger?.error('watch not started: its kind is not resolved', {
              apiVersion: spec.apiVersion,
              kind: spec.kind,
              error: failure,
            });
          entry.lastFailure = failure;
        }
        if (signal.aborted) return undefined;
        const wait = Math.min(RESOLVE_RETRY_MS, deadline - Date.now());
        if (wait <= 0) throw new Error(`${what}: ${entry.lastFailure}`);
        await new Promise<void>((resolve) => {
          const done = () => {
            cancel();
            signal.removeEventListener('abort', done);
            resolve();
          };
          const cancel = after(wait, done);
          signal.addEventListener('abort', done, { once: true });
        });
      }
    } finally {
      this.resolving.delete(entry);
    }
  }

  /**
   * What keeps the caches from being synced: watches whose kind is not resolved yet (with why), and informers whose
   * first list has not completed (their paths).
   */
  unsynced(): string[] {
    return [
      ...[...this.resolving].map((r) => `${r.what} (${r.lastFailure})`),
      ...this.all()
        .filter((i) => !i.synced)
        .map((i) => i.path),
    ];
  }

  /** The cache for a watch spec, narrowed to the cache's scope (started). */
  cacheFor(spec: WatchSpec): WatchCache {
    const own = this.scope.byObject?.find((o) => o.apiVersion === spec.apiVersion && o.kind === spec.kind);
    const namespaces = spec.clusterScoped
      ? undefined
      : ((own ? own.namespaces : undefined) ?? this.scope.defaultNamespaces);
    const narrowed: WatchSpec = {
      ...spec,
      ...(own?.metadataOnly ? { metadataOnly: true } : {}),
      labelSelector: both(spec.labelSelector, own ? own.labelSelector : this.scope.defaultLabelSelector),
      fieldSelector: both(spec.fieldSelector, own ? own.fieldSelector : this.scope.defaultFieldSelector),
    };
    if (!namespaces?.length) return this.informerFor(narrowed);
    if (spec.namespace !== undefined) {
      if (!namespaces.includes(spec.namespace)) {
        throw new Error(
          `cannot watch ${spec.kind} in namespace ${spec.namespace}: the manager's cache holds only namespaces ${namespaces.join(', ')} (cache.${own?.namespaces ? 'byObject' : 'defaultNamespaces'})`,
        );
      }
      return this.informerFor(narrowed);
    }
    if (namespaces.length === 1) return this.informerFor({ ...narrowed, namespace: namespaces[0] });
    const byNamespace = new Map(
      namespaces.map((ns) => [ns, this.informerFor({ ...narrowed, namespace: ns })] as const),
    );
    return new NamespacesCache(`${collectionPath(narrowed)} (namespaces ${namespaces.join(', ')})`, byNamespace);
  }

  /** The transform of a kind's cache: its own (`byObject`), else the default. */
  private transformFor(spec: Pick<WatchSpec, 'apiVersion' | 'kind'>): CacheTransform | undefined {
    const own = this.scope.byObject?.find((o) => o.apiVersion === spec.apiVersion && o.kind === spec.kind);
    return (own?.transform ?? this.scope.defaultTransform ?? this.tuning.transform) as CacheTransform | undefined;
  }

  /** The (started) informer for a watch spec, exactly as given (no cache scope but the kind's transform). */
  informerFor(spec: WatchSpec): Informer<KubeObject> {
    const path = collectionPath(spec);
    const key = `${path}?l=${spec.labelSelector ?? ''}&f=${spec.fieldSelector ?? ''}${spec.metadataOnly ? '&m' : ''}`;
    let inf = this.informers.get(key);
    if (!inf) {
      inf = new Informer<KubeObject>(this.client, {
        ...this.tuning,
        transform: this.transformFor(spec) as ((obj: InformerObject) => InformerObject) | undefined,
        path,
        labelSelector: spec.labelSelector,
        fieldSelector: spec.fieldSelector,
        metadataOnly: spec.metadataOnly,
        notFoundHint: notFoundHint(spec),
        logger: this.logger,
      });
      this.informers.set(key, inf);
      this.specs.set(key, spec);
      // a metadata-only cache cannot answer a read of the whole object
      if (!spec.labelSelector && !spec.fieldSelector && !spec.metadataOnly) this.whole.set(path, inf);
      for (const i of this.indexes)
        if (i.apiVersion === spec.apiVersion && i.kind === spec.kind) inf.addIndex(i.name, i.extract);
      inf.start();
    }
    return inf;
  }

  /**
   * The synced informer that caches every object of a collection path (e.g. `/api/v1/namespaces/ns/configmaps`):
   * one for exactly that path, or for the same resource in all namespaces. None when only selector-filtered
   * informers (or none) watch it: a cache miss there would not mean "not found".
   */
  wholeCollection(path: string, namespace: string | undefined): Informer<KubeObject> | undefined {
    const candidates = [this.whole.get(path)];
    if (namespace !== undefined)
      candidates.push(this.whole.get(path.replace(`/namespaces/${encodeURIComponent(namespace)}/`, '/')));
    return candidates.find((i) => i?.synced);
  }

  /** Indexes the objects of a kind in every informer of it, those made so far and later ones. */
  addIndex(target: { apiVersion: string; kind: string }, name: string, extract: IndexExtractor<KubeObject>): void {
    this.indexes.push({ apiVersion: target.apiVersion, kind: target.kind, name, extract });
    for (const [key, inf] of this.informers)
      if (this.specs.get(key)?.apiVersion === target.apiVersion && this.specs.get(key)?.kind === target.kind)
        inf.addIndex(name, extract);
  }

  /** Every informer created so far. */
  all(): Informer<KubeObject>[] {
    return [...this.informers.values()];
  }

  /** True when every informer has completed its first list. */
  allSynced(): boolean {
    return this.all().every((i) => i.synced);
  }

  /** Stops every informer. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.all().map((i) => i.stop()));
  }
}

/** A watch spec that contradicts what discovery says of its kind: no retry fixes it. */
export class WatchSpecError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_WATCH_SPEC';
  override name = 'WatchSpecError';
}

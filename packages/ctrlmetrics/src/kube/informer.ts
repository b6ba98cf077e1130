/**
 * A list/watch informer over {@link KubeClient.watch}, written for robustness (the `@kubernetes/client-node`
 * informer stops silently on errors):
 * - lists, then watches from the list's resourceVersion with bookmarks, as client-go's reflector: the first list
 *   with `resourceVersion=0` (served from the API server's watch cache), a re-list from the last synced
 *   resourceVersion (unpaginated), or a consistent list (`""`, paginated) after the watch expired;
 * - re-opens a watch that ended (server timeout, dropped stream) from the last resourceVersion seen, after backoff
 *   when it failed with 429 or could not connect;
 * - re-lists only when it must: `410 Gone` (HTTP status or ERROR event) or another error answer of the watch
 *   (client-go's rules); a periodic re-list (`relistMs`) is off by default;
 * - a re-list hands every object that did not change to the handlers as an update (client-go's sync events);
 * - reconnects after any failure with full-jitter exponential backoff;
 * - re-delivers every cached object as an update every `resyncMs`, with no API call (controller-runtime's
 *   SyncPeriod: 10 h, jittered ±10 % per informer);
 * - exposes `synced` (first list done) and a health signal: unhealthy when no list or watch has succeeded for
 *   `stuckAfterMs`, or when a watch stays open past its own timeout (a half-open connection is then cut).
 */
import { KubeApiError, type KubeClient, type WatchEvent } from './client.js';
import { FieldIndex, type IndexExtractor } from './field-index.js';
import type { Logger } from '../util/log.js';
import { after } from '../util/timers.js';
import { CtrlmetricsError } from '../util/errors.js';

/** The object metadata an informer needs. */
export interface InformerObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

/** Callbacks of one event handler. */
export interface InformerHandler<T> {
  /** `isInInitialList`: the object came with the informer's first list (or was cached when the handler was added). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** An object changed (or a re-list or resync handed it over again unchanged). */
  onUpdate?(oldObj: T, newObj: T): void;
  /** An object is gone (its last cached state). */
  onDelete?(obj: T): void;
}

/** Options of an {@link Informer}. */
export interface InformerOptions {
  /** Collection path, e.g. `/api/v1/configmaps` or `/api/v1/namespaces/ns/configmaps`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of lists (default 500). */
  pageSize?: number;
  /** Server-side watch timeout in s; a random value in [t, 2t) is used per watch like client-go (default 300). */
  watchTimeoutSeconds?: number;
  /** Full re-list period in ms (default 0 = never, as client-go: re-lists happen on 410 Gone and watch errors). */
  relistMs?: number;
  /**
   * Resync period in ms: every cached object is re-delivered as an update, from the cache (default: 10 h × a random
   * factor in [0.9, 1.1), controller-runtime's SyncPeriod; 0 = never).
   */
  resyncMs?: number;
  /** Backoff after failures: first ceiling and cap in ms (defaults 800 and 30 000), full jitter. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How long past its server-side timeout a silent watch is kept before it is cut as half-open (default 30 000 ms). */
  watchGraceMs?: number;
  /** No successful list/watch for this long = stuck (default 2 × watch timeout + 60 s). */
  stuckAfterMs?: number;
  /** Timeout of one list page request (default 60 s). */
  listTimeoutMs?: number;
  /**
   * Said after the error when the API answers 404 for the collection (the resource is not served), e.g. "install
   * the CRD of Memcached (cache.example.com/v1alpha1) before starting the manager".
   */
  notFoundHint?: string;
  /**
   * Applied to every object before it enters the cache (and reaches the handlers), as controller-runtime's cache
   * transforms: drop what the manager never reads to keep the cache small, e.g. `transforms.stripManagedFields`. It gets
   * the object as decoded from the API (no other reference to it exists) and returns what to keep.
   */
  transform?: (obj: InformerObject) => InformerObject;
  /**
   * Cache only the objects' metadata (controller-runtime's metadata-only watches): the API is asked for
   * PartialObjectMetadata, and each object is kept as `{ apiVersion: 'meta.k8s.io/v1', kind:
   * 'PartialObjectMetadata', metadata }` — for kinds an operator only needs to find or count.
   */
  metadataOnly?: boolean;
  logger?: Logger;
}

/** client-go's metadata client's Accept headers: PartialObjectMetadata[List], plain JSON as the fallback. */
const PARTIAL_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const PARTIAL_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

/** An object reduced to its metadata, as a metadata-only informer caches it (whatever the server answered). */
function metadataOf<T extends InformerObject>(o: T): T {
  return { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: o.metadata } as unknown as T;
}

/**
 * Gives list items the apiVersion and kind of their list when they lack them: kube-apiserver leaves them out of the
 * items of a built-in kind's list (a `ConfigMapList`'s ConfigMaps), while watch events carry them. Without this, an
 * object cached from the first list would differ from one cached from a watch, and a reconcile that writes back
 * what it read (`ctx.client.update`) could not tell its type.
 */
function typeOfItems(list: { apiVersion?: string; kind?: string }): <T extends InformerObject>(item: T) => T {
  const kind = list.kind?.endsWith('List') && list.kind !== 'List' ? list.kind.slice(0, -'List'.length) : undefined;
  const apiVersion = list.apiVersion;
  if (!kind || !apiVersion) return (item) => item;
  return (item) => {
    const o = item as InformerObject & { apiVersion?: string; kind?: string };
    if (o && typeof o === 'object' && (o.apiVersion === undefined || o.kind === undefined)) {
      o.apiVersion ??= apiVersion;
      o.kind ??= kind;
    }
    return item;
  };
}

/** Health of an informer. */
export interface InformerHealth {
  healthy: boolean;
  /** Why it is unhealthy. */
  reason?: string;
}

class GoneError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_GONE';
}

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: InformerObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns ? `${ns}/${name}` : name;
}

/** A list/watch cache of one collection that calls handlers on changes. */
export class Informer<T extends InformerObject = InformerObject> {
  readonly path: string;
  private readonly store = new Map<string, T>();
  private readonly handlers = new Set<InformerHandler<T>>();
  private readonly opts: Required<
    Omit<
      InformerOptions,
      'labelSelector' | 'fieldSelector' | 'logger' | 'path' | 'notFoundHint' | 'transform' | 'metadataOnly'
    >
  >;
  private readonly transform: ((obj: T) => T) | undefined;
  private readonly log: Logger | undefined;
  private resourceVersion = '';
  private _synced = false;
  private syncWaiters: Array<() => void> = [];
  private stopped = true;
  private abort = new AbortController();
  private currentWatch: { stop(): void } | undefined;
  private watchOpenedAt = 0;
  private watchDeadline = 0;
  /** Set when the watchdog cut the current watch: its end is then a failure, not a success. */
  private watchCut = false;
  private lastSuccess = 0;
  private lastError: string | undefined;
  private loop: Promise<void> | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  /** Counters, for tests and diagnostics. */
  readonly stats = {
    lists: 0,
    listPages: 0,
    watches: 0,
    relistsOnGone: 0,
    relistsOnError: 0,
    failures: 0,
    events: 0,
    stuckWatches: 0,
  };
  /** The resourceVersion of the last list cannot be listed from (the watch expired): re-list with `""`. */
  private lastSyncUnavailable = false;

  constructor(
    private readonly client: KubeClient,
    private readonly options: InformerOptions,
  ) {
    this.path = options.path;
    const watchTimeoutSeconds = options.watchTimeoutSeconds ?? 300;
    this.opts = {
      pageSize: options.pageSize ?? 500,
      watchTimeoutSeconds,
      relistMs: options.relistMs ?? 0,
      resyncMs: options.resyncMs ?? Math.round(10 * 3600_000 * (0.9 + 0.2 * Math.random())),
      backoffBaseMs: options.backoffBaseMs ?? 800,
      backoffMaxMs: options.backoffMaxMs ?? 30_000,
      watchGraceMs: options.watchGraceMs ?? 30_000,
      stuckAfterMs: options.stuckAfterMs ?? 2 * watchTimeoutSeconds * 1000 + 60_000,
      listTimeoutMs: options.listTimeoutMs ?? 60_000,
    };
    this.log = options.logger?.child('informer', { path: options.path });
    this.transform = options.transform as ((obj: T) => T) | undefined;
  }

  private readonly indexes = new Map<string, FieldIndex<T>>();

  /** Stores an object, keeping the field indexes in step. */
  private put(key: string, obj: T): void {
    this.store.set(key, obj);
    for (const idx of this.indexes.values()) idx.set(key, obj, obj.metadata?.namespace ?? '');
  }

  /** Removes an object, keeping the field indexes in step. */
  private drop(key: string): void {
    this.store.delete(key);
    for (const idx of this.indexes.values()) idx.delete(key);
  }

  /**
   * Adds a field index (controller-runtime's `IndexField`): `extract` gives an object's values for it. Objects
   * already cached are indexed at once; the index follows every change after.
   */
  addIndex(name: string, extract: IndexExtractor<T>): void {
    if (this.indexes.has(name))
      throw new Error(`indexer conflict: an index named ${JSON.stringify(name)} already exists for ${this.path}`);
    const idx = new FieldIndex<T>(name, extract);
    for (const [key, obj] of this.store) idx.set(key, obj, obj.metadata?.namespace ?? '');
    this.indexes.set(name, idx);
  }

  /** The cached objects whose index `name` holds `value` (in `namespace`, when given). */
  byIndex(name: string, value: string, namespace?: string): T[] {
    const idx = this.indexes.get(name);
    if (!idx)
      throw new Error(
        `index with name field:${name} does not exist (add it with mgr.indexField before the manager starts)`,
      );
    return idx
      .keys(value, namespace)
      .map((k) => this.store.get(k)!)
      .filter((o) => o !== undefined);
  }

  /** True once the first full list has been delivered to the handlers. */
  /** The number of objects cached. */
  get size(): number {
    return this.store.size;
  }

  /** The label selector the collection is listed and watched with. */
  get labelSelector(): string | undefined {
    return this.options.labelSelector;
  }

  get synced(): boolean {
    return this._synced;
  }

  /** Adds a handler; objects already cached are delivered to it as adds. Returns a function removing it. */
  addHandler(h: InformerHandler<T>): () => void {
    this.handlers.add(h);
    if (h.onAdd) for (const obj of this.store.values()) this.safe(() => h.onAdd!(obj, true));
    return () => this.handlers.delete(h);
  }

  /** The cached object with this key (`namespace/name` or `name`). */
  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.store.values()];
  }

  /** Starts the list/watch loop (idempotent). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    this.lastSuccess = Date.now();
    this.loop = this.run();
    if (this.opts.resyncMs > 0) {
      this.resyncTimer = setInterval(() => this.resync(), this.opts.resyncMs);
      this.resyncTimer.unref();
    }
    const every = Math.min(this.opts.watchTimeoutSeconds * 250, this.opts.watchGraceMs / 2);
    this.watchdog = setInterval(() => this.checkWatch(), Math.min(5000, Math.max(100, every)));
    this.watchdog.unref();
  }

  /** Stops the loop and resolves once it has ended. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    this.currentWatch?.stop();
    clearInterval(this.resyncTimer);
    clearInterval(this.watchdog);
    for (const w of this.syncWaiters.splice(0)) w();
    await this.loop;
  }

  /** Resolves true once synced, false after `timeoutMs`, when `signal` aborts or when stopped first. */
  waitForSync(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this._synced) return Promise.resolve(true);
    if (this.stopped || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = () => {
        cancel();
        signal?.removeEventListener('abort', settle);
        const i = this.syncWaiters.indexOf(settle);
        if (i >= 0) this.syncWaiters.splice(i, 1);
        resolve(this._synced);
      };
      const cancel = after(timeoutMs, settle);
      signal?.addEventListener('abort', settle, { once: true });
      this.syncWaiters.push(settle);
    });
  }

  /** The last list or watch error (with the not-found hint when the resource is not served), or undefined. */
  get lastFailure(): string | undefined {
    return this.lastError;
  }

  /** Healthy unless the loop has not managed a list or watch for `stuckAfterMs`, or a watch outlived its timeout. */
  health(): InformerHealth {
    if (this.stopped) return { healthy: true };
    const now = Date.now();
    if (now - this.lastSuccess > this.opts.stuckAfterMs) {
      return {
        healthy: false,
        reason:
          `no successful list or watch of ${this.path} for ${Math.round((now - this.lastSuccess) / 1000)}s` +
          (this.lastError ? ` (last error: ${this.lastError})` : ''),
      };
    }
    if (this.currentWatch && this.watchDeadline > 0 && now > this.watchDeadline) {
      return {
        healthy: false,
        reason: `watch of ${this.path} is stuck: open for ${Math.round((now - this.watchOpenedAt) / 1000)}s past its timeout`,
      };
    }
    return { healthy: true };
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.relist();
        failures = 0;
        const listedAt = Date.now();
        // watch until it is time to re-list, a 410 forces one, or we stop
        while (!this.stopped && (this.opts.relistMs <= 0 || Date.now() - listedAt < this.opts.relistMs)) {
          try {
            await this.watchOnce(listedAt);
            failures = 0;
          } catch (err) {
            if (err instanceof GoneError) throw err;
            if (this.stopped) return;
            failures++;
            this.noteFailure(err);
            await this.backoff(failures);
            // client-go: an error answer to the watch (other than 429) ends ListAndWatch, so the next round
            // re-lists; a stream that could not connect or dropped is re-watched from the last resourceVersion
            if (err instanceof KubeApiError && err.status >= 400 && err.status !== 429) {
              this.stats.relistsOnError++;
              break;
            }
          }
        }
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof GoneError) {
          this.stats.relistsOnGone++;
          this.lastSyncUnavailable = true;
          this.log?.info('watch expired (410 Gone): re-listing', { resourceVersion: this.resourceVersion });
          continue;
        }
        failures++;
        this.noteFailure(err);
        await this.backoff(failures);
      }
    }
  }

  private noteFailure(err: unknown): void {
    this.stats.failures++;
    this.lastError = err instanceof Error ? err.message : String(err);
    if (err instanceof KubeApiError && err.status === 404 && this.options.notFoundHint)
      this.lastError += `: ${this.options.notFoundHint}`;
    this.log?.warn('list/watch failed; retrying with backoff', { error: this.lastError });
  }

  /** Full jitter: a random sleep in [0, min(cap, base × 2^(n−1))). */
  private backoff(failures: number): Promise<void> {
    const ceiling = Math.min(this.opts.backoffMaxMs, this.opts.backoffBaseMs * 2 ** Math.min(failures - 1, 30));
    const ms = Math.random() * ceiling;
    const signal = this.abort.signal;
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        signal.removeEventListener('abort', done);
        resolve();
      };
      const cancel = after(ms, done, undefined, true);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * The resourceVersion to list from, as client-go's reflector: "0" the first time (the API server's watch cache,
   * possibly a little stale), then the last synced one, or "" (a consistent read) once that one is unavailable.
   */
  private listResourceVersion(): string {
    if (this.lastSyncUnavailable) return '';
    return this.resourceVersion || '0';
  }

  private async relist(): Promise<void> {
    try {
      await this.listFrom(this.listResourceVersion());
    } catch (err) {
      // 410 Expired, or a resourceVersion the server has not reached: at once again, as a consistent read
      const tooOld = err instanceof GoneError;
      const tooLarge =
        err instanceof KubeApiError && err.status === 504 && /too large resource version/i.test(err.message);
      if (!(tooOld || tooLarge) || this.listResourceVersion() === '') throw err;
      this.lastSyncUnavailable = true;
      await this.listFrom('');
    }
  }

  private async listFrom(resourceVersion: string): Promise<void> {
    const fresh = new Map<string, T>();
    let cont: string | undefined;
    let rv = '';
    // client-go pages only the lists the watch cache would not serve whole ("" and "0")
    const paged = resourceVersion === '' || resourceVersion === '0';
    const first = !this._synced;
    do {
      const page = await this.client
        .get<{
          apiVersion?: string;
          kind?: string;
          metadata?: { resourceVersion?: string; continue?: string };
          items?: T[];
        }>(this.path, {
          query: {
            labelSelector: this.options.labelSelector,
            fieldSelector: this.options.fieldSelector,
            resourceVersion: cont ? undefined : resourceVersion || undefined,
            limit: paged ? this.opts.pageSize : undefined,
            continue: cont,
          },
          timeoutMs: this.opts.listTimeoutMs,
          signal: this.abort.signal,
          ...(this.options.metadataOnly ? { headers: { Accept: PARTIAL_LIST_ACCEPT } } : {}),
        })
        .catch((err: unknown) => {
          // an expired continue token or resourceVersion: start over
          if (err instanceof KubeApiError && err.status === 410) throw new GoneError(err.message);
          throw err;
        });
      this.stats.listPages++;
      const typed = typeOfItems(page);
      for (const raw of page.items ?? []) {
        const item = this.options.metadataOnly ? metadataOf(raw) : typed(raw);
        fresh.set(objectKey(item), this.transform ? this.transform(item) : item);
      }
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
    } while (cont && !this.stopped);
    if (this.stopped) return;
    this.stats.lists++;
    this.resourceVersion = rv;
    this.lastSyncUnavailable = false;
    this.lastSuccess = Date.now();
    // replace the cache, emitting the differences
    for (const [key, old] of this.store) {
      if (!fresh.has(key)) {
        this.drop(key);
        this.emit('delete', old);
      }
    }
    for (const [key, obj] of fresh) {
      const old = this.store.get(key);
      this.put(key, obj);
      if (!old) this.emit('add', obj, undefined, first);
      // an unchanged object is a sync event on a re-list (client-go's Replace): an update with the same version
      else if (!first || old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.emit('update', obj, old);
    }
    if (!this._synced) {
      this._synced = true;
      this.log?.debug('informer synced', { objects: this.store.size });
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private async watchOnce(listedAt: number): Promise<void> {
    const t = this.opts.watchTimeoutSeconds;
    let timeoutSeconds = Math.floor(t * (1 + Math.random()));
    if (this.opts.relistMs > 0) {
      const untilRelist = Math.ceil((this.opts.relistMs - (Date.now() - listedAt)) / 1000);
      timeoutSeconds = Math.max(1, Math.min(timeoutSeconds, untilRelist));
    }
    let gone: GoneError | undefined;
    const handle = this.client.watch<T>(
      this.path,
      {
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
        resourceVersion: this.resourceVersion || undefined,
        allowWatchBookmarks: true,
        timeoutSeconds,
      },
      (ev) => {
        this.lastSuccess = Date.now();
        const event =
          this.options.metadataOnly &&
          ev.object &&
          (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED')
            ? { ...ev, object: metadataOf(ev.object) }
            : ev;
        this.onEvent(event, (e) => (gone = e));
        if (gone) throw gone;
      },
      this.options.metadataOnly ? { accept: PARTIAL_ACCEPT } : {},
    );
    this.currentWatch = handle;
    this.watchCut = false;
    this.watchOpenedAt = Date.now();
    this.watchDeadline = this.watchOpenedAt + timeoutSeconds * 1000 + this.opts.watchGraceMs;
    this.stats.watches++;
    try {
      await handle.done;
      if (this.watchCut)
        throw new Error(
          `watch of ${this.path} stayed silent past its ${timeoutSeconds}s timeout (half-open connection?): cut it`,
        );
      this.lastSuccess = Date.now();
    } catch (err) {
      if (gone || err instanceof GoneError) throw gone ?? err;
      if (err instanceof KubeApiError && err.status === 410) throw new GoneError(err.message);
      throw err;
    } finally {
      this.currentWatch = undefined;
      this.watchDeadline = 0;
    }
  }

  private onEvent(ev: WatchEvent<T>, onGone: (e: GoneError) => void): void {
    this.stats.events++;
    const obj = ev.object;
    if (ev.type === 'ERROR') {
      const status = obj as unknown as { code?: number; reason?: string; message?: string };
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') {
        onGone(new GoneError(status.message ?? 'resource version too old'));
        return;
      }
      throw new KubeApiError(status.code ?? 0, status.reason ?? 'WatchError', status.message ?? 'watch error event');
    }
    const rv = obj?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (ev.type === 'BOOKMARK') return;
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (ev.type === 'DELETED') {
      this.drop(key);
      this.emit('delete', old ?? (this.transform ? this.transform(obj) : obj));
      return;
    }
    const kept = this.transform ? this.transform(obj) : obj;
    this.put(key, kept);
    if (old) this.emit('update', kept, old);
    else this.emit('add', kept);
  }

  /** Cuts a watch that outlived its server-side timeout (half-open connection); the loop then reconnects. */
  private checkWatch(): void {
    if (this.currentWatch && this.watchDeadline > 0 && Date.now() > this.watchDeadline) {
      this.log?.warn('watch outlived its timeout: reconnecting');
      this.stats.stuckWatches++;
      this.watchCut = true;
      this.currentWatch.stop();
    }
  }

  private resync(): void {
    for (const obj of this.store.values()) this.emit('update', obj, obj);
  }

  private emit(type: 'add' | 'update' | 'delete', obj: T, old?: T, initial = false): void {
    for (const h of this.handlers) {
      this.safe(() => {
        if (type === 'add') h.onAdd?.(obj, initial);
        else if (type === 'update') h.onUpdate?.(old ?? obj, obj);
        else h.onDelete?.(obj);
      });
    }
  }

  private safe(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log?.error('event handler failed', { error: err instanceof Error ? err.message : String(err) });
    }
  }
}

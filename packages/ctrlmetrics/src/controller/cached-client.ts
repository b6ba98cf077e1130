/**
 * The reconcile context's client, as controller-runtime's delegating client: reads of objects and whole
 * collections come from the manager's informers; a kind no informer caches yet gets one, started on its first read
 * (scoped as every watch is) — controller-runtime's cache does the same — unless the manager's
 * `cache.readerFailOnMissingInformer` is set, which makes such a read a `NotCachedError`. Writes, subresources,
 * selector-filtered lists and kinds that cannot be cached whole go to the API.
 */
import { KubeApiError, type KubeClient, type RequestOptions } from '../kube/client.js';
import type { InformerSet } from './informers.js';
import type { RESTMapper } from '../kube/restmapper.js';
import { deepFreeze } from '../kube/freeze.js';
import { copyJson } from '../util/json-copy.js';

/** `/api/v1[/namespaces/NS]/RESOURCE[/NAME]` or `/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME]`. */
const OBJECT_PATH = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?$/;

/** A read the cache can answer: the collection path, the namespace and the name (none for a list). */
function cacheable(
  path: string,
  opts: RequestOptions | undefined,
): { collection: string; namespace?: string; name?: string } | undefined {
  // a query (selectors, resourceVersion, pagination) asks for something the cache does not answer as the API would
  if (opts?.query && Object.values(opts.query).some((v) => v !== undefined)) return undefined;
  const m = OBJECT_PATH.exec(path);
  if (!m) return undefined;
  const [, prefix, ns, resource, name] = m as unknown as [
    string,
    string,
    string | undefined,
    string,
    string | undefined,
  ];
  const namespace = ns === undefined ? undefined : decodeURIComponent(ns);
  const collection = `${prefix}${ns === undefined ? '' : `/namespaces/${ns}`}/${resource}`;
  return { collection, namespace, name: name === undefined ? undefined : decodeURIComponent(name) };
}

/** Options of {@link cachedReadClient}. */
export interface CachedReadOptions {
  /**
   * Hand out the cached objects themselves, frozen, instead of deep copies (controller-runtime's
   * `UnsafeDisableDeepCopy`): no copy per read, and a write to what was read throws. Copy before changing.
   */
  unsafeDisableDeepCopy?: boolean;
  /**
   * Start an informer for a kind on its first read when none caches it (with the mapper that finds the kind of a
   * path); without a mapper, such reads go to the API server.
   */
  mapper?: RESTMapper;
  /** With a mapper: such a read throws a `NotCachedError` instead of starting an informer. */
  readerFailOnMissingInformer?: boolean;
  /** With a mapper: how long a read waits for a new informer's first list (default 30 000 ms). */
  syncTimeoutMs?: number;
}

/** Default of {@link CachedReadOptions.syncTimeoutMs}. */
const READ_SYNC_TIMEOUT_MS = 30_000;

/**
 * `client` with `get` answered from `informers` (or those a getter returns at each read, none before they exist)
 * where they cache the whole collection: an object as a deep copy
 * (reconcilers may change what they read) or, with `unsafeDisableDeepCopy`, frozen as cached; a missing one as the
 * API's 404; a collection as a List.
 */
export function cachedReadClient(
  client: KubeClient,
  informers: InformerSet | (() => InformerSet | undefined),
  opts: CachedReadOptions = {},
): KubeClient {
  const handOut = opts.unsafeDisableDeepCopy ? <T>(v: T): T => deepFreeze(v) : copyJson;
  // a getter: the manager's client exists before its informers do (they are made by start())
  const current = typeof informers === 'function' ? informers : () => informers;
  const { mapper, readerFailOnMissingInformer = false, syncTimeoutMs = READ_SYNC_TIMEOUT_MS } = opts;
  const get = async <T>(path: string, opts?: RequestOptions): Promise<T> => {
    const read = cacheable(path, opts);
    const set = read && current();
    let inf = set?.wholeCollection(read!.collection, read!.namespace);
    if (set && !inf && mapper) {
      inf = await set.informerForRead(read.collection, read.namespace, mapper, {
        start: !readerFailOnMissingInformer,
        timeoutMs: syncTimeoutMs,
        signal: opts?.signal,
      });
    }
    if (!read || !inf) return client.get<T>(path, opts);
    if (read.name === undefined) {
      const items = inf.list().filter((o) => read.namespace === undefined || o.metadata?.namespace === read.namespace);
      return { kind: 'List', apiVersion: 'v1', metadata: {}, items: items.map((o) => handOut(o)) } as T;
    }
    const obj = inf.get(read.namespace ? `${read.namespace}/${read.name}` : read.name);
    if (!obj) {
      const resource = read.collection.slice(read.collection.lastIndexOf('/') + 1);
      throw new KubeApiError(404, 'NotFound', `${resource} "${read.name}" not found`);
    }
    return handOut(obj) as T;
  };
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'get') return get;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

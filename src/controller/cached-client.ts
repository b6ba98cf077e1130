/**
 * The reconcile context's client, as controller-runtime's delegating client: reads of objects the manager's
 * informers already cache come from the cache (no API call, so a reconcile loop is not held to the client's
 * rate limit); writes, subresources, selector-filtered lists and kinds no informer caches whole go to the API.
 *
 * Unlike controller-runtime, a read of a kind nobody watches does not start a new informer: it goes to the API
 * server (an informer per looked-up kind would cache every object of that kind in memory, a common trap).
 */
import { KubeApiError, type KubeClient, type RequestOptions } from '../kube/client.js';
import type { InformerSet } from './informers.js';
import { deepFreeze } from '../kube/freeze.js';

/** `/api/v1[/namespaces/NS]/RESOURCE[/NAME]` or `/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME]`. */
const OBJECT_PATH = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?$/;

/** A read the cache can answer: the collection path, the namespace and the name (none for a list). */
function cacheable(path: string, opts: RequestOptions | undefined): { collection: string; namespace?: string; name?: string } | undefined {
  // a query (selectors, resourceVersion, pagination) asks for something the cache does not answer as the API would
  if (opts?.query && Object.values(opts.query).some((v) => v !== undefined)) return undefined;
  const m = OBJECT_PATH.exec(path);
  if (!m) return undefined;
  const [, prefix, ns, resource, name] = m as unknown as [string, string, string | undefined, string, string | undefined];
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
}

/**
 * `client` with `get` answered from `informers` (or those a getter returns at each read, none before they exist)
 * where they cache the whole collection: an object as a deep copy
 * (reconcilers may change what they read) or, with `unsafeDisableDeepCopy`, frozen as cached; a missing one as the
 * API's 404; a collection as a List.
 */
export function cachedReadClient(client: KubeClient, informers: InformerSet | (() => InformerSet | undefined), opts: CachedReadOptions = {}): KubeClient {
  const handOut = opts.unsafeDisableDeepCopy ? <T>(v: T): T => deepFreeze(v) : <T>(v: T): T => structuredClone(v);
  // a getter: the manager's client exists before its informers do (they are made by start())
  const current = typeof informers === 'function' ? informers : () => informers;
  const get = <T>(path: string, opts?: RequestOptions): Promise<T> => {
    const read = cacheable(path, opts);
    const inf = read && current()?.wholeCollection(read.collection, read.namespace);
    if (!read || !inf) return client.get<T>(path, opts);
    if (read.name === undefined) {
      const items = inf.list().filter((o) => read.namespace === undefined || o.metadata?.namespace === read.namespace);
      return Promise.resolve({ kind: 'List', apiVersion: 'v1', metadata: {}, items: items.map((o) => handOut(o)) } as T);
    }
    const obj = inf.get(read.namespace ? `${read.namespace}/${read.name}` : read.name);
    if (!obj) {
      const resource = read.collection.slice(read.collection.lastIndexOf('/') + 1);
      return Promise.reject(new KubeApiError(404, 'NotFound', `${resource} "${read.name}" not found`));
    }
    return Promise.resolve(handOut(obj) as T);
  };
  return new Proxy(client, {
    get(target, prop) {
      if (prop === 'get') return get;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

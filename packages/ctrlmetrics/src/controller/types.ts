/**
 * Types shared by controllers, event handlers and the manager.
 */
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../util/log.js';
import type { KubeObject } from '../kube/objects.js';
import type { ObjectClient } from '../kube/object-client.js';
import type { EventRecorder } from '../kube/events.js';

export type { KubeObject, ObjectLike, ObjectMeta, OwnerReference } from '../kube/objects.js';

/** A request to reconcile one object, identified by namespace (absent for cluster-scoped objects) and name. */
export interface Request {
  namespace?: string;
  name: string;
}

/** What a reconciler asks for when it succeeds. Returning nothing (or `{}`) means done. */
export interface Result {
  /** Re-queue with the rate limiter's backoff. */
  requeue?: boolean;
  /** Re-queue after this many ms (wins over `requeue`). */
  requeueAfterMs?: number;
  /** The priority of the re-queue (priority queue only; default: the priority the request was handed out with). */
  priority?: number;
}

/** The kinds of event an informer delivers. */
export type EventType = 'add' | 'update' | 'delete';

/** Read access to the objects a controller watches, from its informers' caches (no API call). */
export interface CacheReader {
  /**
   * The cached object of a watched kind — named as in the watch (`'ConfigMap'`) or with its apiVersion
   * (`{ apiVersion: 'v1', kind: 'ConfigMap' }`, needed when the controller watches the kind name in two groups) — or
   * undefined when the watched collection does not hold it. A kind the controller does not watch throws a
   * `NotCachedError` (not a not-found: the cache cannot say whether it exists).
   */
  get<T extends object = KubeObject>(
    kind: string | { apiVersion: string; kind: string },
    namespace: string | undefined,
    name: string,
  ): T | undefined;
  /**
   * The cached objects of a watched kind: all, those of a namespace, or those a field index (`mgr.indexField`) lists
   * for one value (`matchingFields: { [field]: value }`; an index that does not exist is an error naming the field).
   * Watches of one kind with other namespaces or selectors are read together. Unwatched: a `NotCachedError`.
   */
  list<T extends object = KubeObject>(
    kind: string | { apiVersion: string; kind: string },
    opts?: CacheListOptions,
  ): T[];
}

/** Options of {@link CacheReader.list}. */
export interface CacheListOptions {
  namespace?: string;
  /** One field and its value, answered from the index `mgr.indexField` made for that field. */
  matchingFields?: Record<string, string>;
}

/** What a reconciler gets besides the request. */
export interface ReconcileContext {
  /** The controller's name. */
  controller: string;
  /**
   * The client (controller-runtime's `client.Client`), acting as the manager's identity: objects in, objects out,
   * paths from discovery — `get`, `list`, `create`, `update`, `patch`, `apply` (server-side), `delete`,
   * `deleteAllOf`, `status()` and `subResource()`. Reads of an object (or a whole collection) that the manager's
   * informers cache without a selector are answered from the cache, as copies (a missing one as a 404), and lists
   * with `matchingFields` from this controller's field indexes; everything else, and every write, goes to the API
   * server.
   */
  client: ObjectClient;
  /** The same client without the cache: reads straight from the API server (controller-runtime's `GetAPIReader`). */
  apiReader: ObjectClient;
  /**
   * The raw client taking API paths (`/api/v1/namespaces/x/configmaps/y`) instead of objects, for what the object
   * client does not cover (another content type, a path of an aggregated API): every call goes to the API server.
   */
  pathClient: KubeClient;
  /** Records core/v1 Events about objects with this controller as their source (`kubectl describe` shows them). */
  recorder: EventRecorder;
  /** A logger carrying the controller name, the request and the reconcile ID. */
  log: Logger;
  /**
   * This reconcile's ID, a random UUID as controller-runtime's `ReconcileIDFromContext`: in every line of `log`,
   * and a handy exemplar label (`counter.addWithExemplar(1, { reconcile_id: ctx.reconcileID })`).
   */
  readonly reconcileID: string;
  /**
   * Aborted when the manager shuts down, or when the controller's `reconciliationTimeoutMs` has passed (its
   * reason then is a `ReconcileTimeoutError` (`ctrlmetrics/controller`)). The reconcile is not cut short: honour the signal.
   */
  signal: AbortSignal;
  /** The cached objects of this controller's watches. */
  cache: CacheReader;
}

/** A reconcile function. Throw to retry with backoff; throw a TerminalError to give up. */
export type Reconciler = (req: Request, ctx: ReconcileContext) => Promise<Result | void>;

/** Which requests an event enqueues. */
export type EnqueueMode =
  /** The object itself (default). */
  | 'self'
  /** The owner with `controller: true` in `ownerReferences`, when its kind is `ownerKind`. */
  | { ownerKind: string; ownerApiVersion?: string }
  /** Any mapping. */
  | ((obj: KubeObject, event: EventType) => Request[]);

/** One watched collection and how its events map to requests. */
export interface WatchSpec {
  /** `v1`, `apps/v1`, … */
  apiVersion: string;
  /** `ConfigMap`, `Secret`, … */
  kind: string;
  /**
   * The plural resource name. Not needed: the watch takes it from the API's discovery when it starts (`endpoints`,
   * `ingresses`, a CRD's own plural); one given here that discovery contradicts fails the start.
   */
  resource?: string;
  /** Limit to one namespace (default: all namespaces, or the cluster for cluster-scoped kinds). */
  namespace?: string;
  /**
   * Whether the kind is cluster-scoped (Namespace, ClusterRole, …). Not needed: discovery says it when the watch
   * starts; a value here that discovery contradicts fails the start.
   */
  clusterScoped?: boolean;
  /** Server-side label selector, e.g. `ctrlmetrics.dev/managed=true`. */
  labelSelector?: string;
  /** Server-side field selector. */
  fieldSelector?: string;
  /**
   * Cache only metadata (controller-runtime's metadata-only watch): the objects come as PartialObjectMetadata
   * (`{ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata }`), for kinds only found or counted.
   */
  metadataOnly?: boolean;
  /** How events become requests (default `'self'`). */
  enqueue?: EnqueueMode;
  /** Drop events for which this returns false. */
  predicate?: (obj: KubeObject, event: EventType, old?: KubeObject) => boolean;
}

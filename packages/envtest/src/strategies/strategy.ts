/**
 * What a resource's strategy is, as kube-apiserver's registry gives each resource one: what its objects get at
 * decoding, how they are validated, the defaults and server-set fields of a write (`PrepareForCreate`,
 * `PrepareForUpdate`), and what the controllers of a cluster do after a write. The store (objects.ts) runs every
 * verb the same way and asks the resource's strategy (strategies/index.ts) at each step.
 */
import type { FieldCause } from '../status.js';
import type { Store } from '../store.js';
import type { ResourceRegistry } from '../resources.js';
import type { KubeObject, StoredObject } from '../types.js';

/** What a strategy may use of the authority. */
export interface StrategyContext {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  /** The authority's CA (a namespace's `kube-root-ca.crt`, a token Secret's `ca.crt`). */
  readonly caPem: string;
  /** Issues the token of a `kubernetes.io/service-account-token` Secret (kube's token controller). */
  readonly issueLegacyToken?: (p: { namespace: string; name: string; uid: string; secretName: string }) => string;
  /** The next free Service cluster IP. */
  allocateIP(): string;
  /** Creates an object of a core v1 resource unless one of its name exists (what a controller would make). */
  ensure(resource: string, o: KubeObject): void;
  /** Hands a namespace marked Terminating to the namespace controller, which purges it. */
  purgeNamespace(name: string, uid: string): void;
}

/** One resource's strategy; every step is optional. */
export interface Strategy {
  /** Normalizes an object as kube's decoding does, before it is validated (a Secret's stringData into data). */
  decode?(o: KubeObject): void;
  /** A create keeps the status its request carries (the status subresource writes it otherwise). */
  createKeepsStatus?: boolean;
  /** Causes an update is checked for before anything else (immutable data). */
  validateUpdateFirst?(o: KubeObject, old: KubeObject): FieldCause[];
  /** The resource's own validation, after the metadata's. */
  validate?(o: KubeObject, old: KubeObject | undefined): FieldCause[];
  /** An update's own checks against the stored object, once the object itself is valid (immutable references). */
  validateUpdate?(o: KubeObject, old: KubeObject): FieldCause[];
  /** Defaults and server-set fields of a create (`old` undefined) or an update, after the built-in defaults. */
  prepare?(o: KubeObject, old: KubeObject | undefined, ctx: StrategyContext): void;
  /** What the admission plugins of a vanilla kube-apiserver add to a new object, after the defaults. */
  admitCreate?(o: KubeObject, ctx: StrategyContext): void;
  /**
   * A delete that leaves the object in place, marked for a controller to finish (a namespace turns Terminating):
   * answers the marked object to store, or throws to refuse the delete. Without it, a delete removes the object
   * (or marks it deleting while it has finalizers).
   */
  markForDeletion?(old: StoredObject): StoredObject;
  /** After the object `markForDeletion` marked was stored (the namespace controller takes it over). */
  afterMarked?(stored: StoredObject, ctx: StrategyContext): void;
  /** A delete is answered with the object (as deleted), not a Success Status. */
  deleteAnswersObject?: boolean;
  /** Before an object is removed from the store (what goes with it). */
  beforeRemove?(old: KubeObject, ctx: StrategyContext): void;
  /** What a cluster's controllers do once an object was created, updated (`now`, `old`) or removed (`now` undefined). */
  afterWrite?(now: KubeObject | undefined, old: KubeObject | undefined, ctx: StrategyContext): void;
}

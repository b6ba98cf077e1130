/**
 * The shapes of Kubernetes objects the library reads: typed `metadata`, and an object type loose enough for plain
 * JSON yet strict where the runtime looks. {@link ObjectLike} has no index signature, so `@kubernetes/client-node`
 * model classes (`V1Deployment`) and users' own interfaces fit wherever the library takes an object.
 */

/** An owner reference (`metadata.ownerReferences[]`). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * `metav1.ObjectMeta`, the fields the API server maintains typed as it serves them. Timestamps are RFC 3339
 * strings on the wire; `Date` is accepted so that client-node's models (which decode them) fit.
 */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | Date;
  /** Set by the API server when a DELETE found finalizers; the object goes once they are all removed. */
  deletionTimestamp?: string | Date;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
  selfLink?: string;
}

/** What the library needs of an object: type and metadata. Any object type with these fields fits. */
export interface ObjectLike {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** A Kubernetes object as plain JSON: typed metadata, anything else as `unknown`. */
export interface KubeObject extends ObjectLike {
  [k: string]: unknown;
}

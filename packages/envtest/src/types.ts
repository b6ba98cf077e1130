/**
 * The authority's shared types — objects, resource types, CRD schemas — in a module that imports no other module of
 * the authority, so every module can use them without importing the modules that build or check them.
 */
import type { BuiltinResource } from 'ctrlmetrics/internal';
import type { ObjectMeta as ServedMeta } from 'ctrlmetrics/client';

/** An owner reference (`metadata.ownerReferences[]`), the runtime's. */
export type { OwnerReference } from 'ctrlmetrics/client';

/**
 * `metav1.ObjectMeta` as the authority holds it: the runtime's typed metadata, with timestamps as the RFC 3339
 * strings the server stores and serves. A request's metadata is checked against these types before it is stored
 * (object-checks.ts).
 */
export interface ObjectMeta extends Omit<ServedMeta, 'creationTimestamp' | 'deletionTimestamp'> {
  creationTimestamp?: string;
  deletionTimestamp?: string;
}

/** A Kubernetes object as plain JSON: typed type and metadata, any other field `unknown` until narrowed. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

/**
 * An object as the store holds it: the write path gave it metadata with a name (and a namespace when its type is
 * namespaced) before it was stored.
 */
export interface StoredObject extends KubeObject {
  metadata: ObjectMeta & { name: string };
}

/** How object names of a type are validated. */
export type NameRule = 'subdomain' | 'label' | 'label1035' | 'path';

/** A CRD's `subresources.scale`: simple JSON paths such as `.spec.replicas`. */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** One served resource (group/version/resource) and what it supports. */
export interface ResourceType {
  group: string;
  version: string;
  /** Plural resource name, e.g. `configmaps`. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs: string[];
  /** Virtual "review" resources: create only, nothing stored. */
  virtual?: boolean;
  nameRule: NameRule;
  /** `metadata.generation` is maintained (bumped on spec changes). */
  generation?: boolean;
  /** Has a `status` subresource: updates of the main resource keep the stored status. */
  statusSubresource?: boolean;
  /** For custom resources: the CRD's additional printer columns. */
  printerColumns?: Array<{
    name: string;
    type: string;
    jsonPath: string;
    description?: string;
    priority?: number;
    format?: string;
  }>;
  /** Set for custom resources. */
  crd?: string;
  /** For custom resources with a scale subresource: where the replicas and the selector are. */
  scale?: ScalePaths;
  /** For custom resources: the version's structural schema (`schema.openAPIV3Schema`). */
  schema?: StructuralSchema;
  /** For a deprecated custom resource version: the warning every request to it gets. */
  deprecationWarning?: string;
  /** For built-in kinds: the hash discovery lists (what storage migration compares). */
  storageVersionHash?: string;
  /** For built-in kinds: the subresources discovery lists (`status`, `scale`, `token`, …). */
  subresources?: BuiltinResource['subresources'];
  /** A built-in kind with an `autoscaling/v1 Scale` at `/scale` (`spec.replicas`, a label selector). */
  builtinScale?: boolean;
  /**
   * A built-in view of another resource's objects, stored once and seen in two shapes (events.k8s.io/v1 Events are
   * core v1 Events): where they are stored, and the conversions between the stored shape and this one.
   */
  view?: BuiltinView;
}

/** How a view type reads and writes the objects of the resource that stores them. */
export interface BuiltinView {
  storage: { group: string; version: string; resource: string };
  /** A stored object as this type shows it. */
  read: (stored: KubeObject) => KubeObject;
  /** A request's object (whole or partial, as an apply configuration) in the stored shape. */
  write: (body: KubeObject) => KubeObject;
}

/** An OpenAPI v3 schema node of a CRD (`openAPIV3Schema` and below). */
export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  default?: unknown;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: ValidationRule[];
}

/** One entry of `x-kubernetes-validations`. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/**
 * Objects in the key order kube-apiserver writes them. A real server decodes a built-in object into its Go type and
 * encodes it with Go's `encoding/json`: `kind`, `apiVersion`, `metadata` first, ObjectMeta's fields in the type's
 * order, and every map field (`data`, `labels`, `annotations`, `matchLabels`, a Service's `selector`, …) with its
 * keys sorted. A custom resource is an unstructured map, so all its keys are sorted. Clients that compare objects
 * as text see the same answers from the authority as from a cluster.
 */
import type { KubeObject, ObjectMeta, ResourceType } from './types.js';

/** ObjectMeta's fields in the Go type's order. */
const OBJECT_META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

/**
 * The names of map fields in the built-in types (read from the recorded OpenAPI documents: the properties with
 * `additionalProperties`). Some names are also a struct or a list in another type (a Deployment's `selector`, a
 * LimitRange's `limits`): a field is sorted only when its value is an object whose values are all scalars or lists
 * of strings, which no struct of those names is.
 */
const MAP_FIELDS = new Set([
  'allocatable',
  'allocatedResources',
  'annotations',
  'attachmentMetadata',
  'binaryData',
  'capacity',
  'data',
  'default',
  'defaultRequest',
  'deprecatedTopology',
  'disruptedPods',
  'extra',
  'hard',
  'labels',
  'limits',
  'matchLabels',
  'max',
  'maxLimitRequestRatio',
  'min',
  'nodeSelector',
  'options',
  'overhead',
  'parameters',
  'podFixed',
  'requests',
  'selector',
  'stringData',
  'used',
  'volumeAttributes',
]);

type Json = unknown;

const isPlainObject = (v: Json): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function sortedKeys(o: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k];
  return out;
}

/** Go's encoding of `map[string]interface{}`: every object's keys sorted, at every depth. */
function sortDeep(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (!isPlainObject(v)) return v;
  const out: Record<string, Json> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortDeep(v[k]);
  return out;
}

function isMapValue(v: Json): v is Record<string, Json> {
  if (!isPlainObject(v)) return false;
  return Object.values(v).every(
    (x) => x === null || typeof x !== 'object' || (Array.isArray(x) && x.every((s) => typeof s === 'string')),
  );
}

/** A built-in object's fields below the top: map fields sorted, the rest as written. */
function sortMaps(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortMaps);
  if (!isPlainObject(v)) return v;
  const out: Record<string, Json> = {};
  for (const [k, x] of Object.entries(v)) out[k] = MAP_FIELDS.has(k) && isMapValue(x) ? sortedKeys(x) : sortMaps(x);
  return out;
}

function orderMeta(m: ObjectMeta | undefined): ObjectMeta | undefined {
  if (!isPlainObject(m)) return m;
  const out: Record<string, Json> = {};
  for (const k of OBJECT_META_ORDER)
    if (k in m)
      out[k] =
        k === 'labels' || k === 'annotations'
          ? isPlainObject(m[k])
            ? sortedKeys(m[k])
            : m[k]
          : k === 'managedFields'
            ? sortDeepInFields(m[k])
            : sortMaps(m[k]);
  for (const k of Object.keys(m)) if (!(k in out)) out[k] = m[k];
  // the same fields with the same values, in kube's order
  return out;
}

/** managedFields entries keep their struct order; their `fieldsV1` is a set written with sorted keys. */
function sortDeepInFields(v: Json): Json {
  if (!Array.isArray(v)) return v;
  const entries: unknown[] = v;
  return entries.map((e) =>
    isPlainObject(e) && isPlainObject(e.fieldsV1) ? { ...e, fieldsV1: sortDeep(e.fieldsV1) } : e,
  );
}

/**
 * The object with its keys in the order kube-apiserver writes them (a new object; values are shared, not copied,
 * except the objects whose keys are reordered).
 */
export function kubeEncoded(t: ResourceType, o: KubeObject): KubeObject {
  if (t.crd) return sortDeep(o) as KubeObject;
  const out: KubeObject = {};
  if ('kind' in o) out.kind = o.kind;
  if ('apiVersion' in o) out.apiVersion = o.apiVersion;
  if ('metadata' in o) out.metadata = orderMeta(o.metadata);
  for (const k of Object.keys(o))
    if (k !== 'status' && !(k in out))
      out[k] = MAP_FIELDS.has(k) && isMapValue(o[k]) ? sortedKeys(o[k]) : sortMaps(o[k]);
  if ('status' in o) out.status = sortMaps(o.status);
  return out;
}

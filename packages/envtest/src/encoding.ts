/**
 * Objects in the key order kube-apiserver writes them. A real server decodes a built-in object into its Go type and
 * encodes it with Go's `encoding/json`: a struct's fields in the type's order (`kind`, `apiVersion`, `metadata`,
 * `spec`, `status`; a container's `name`, `image`, `command`, …) and every map (`data`, `labels`, `annotations`,
 * `matchLabels`, a Service's `selector`, …) with its keys sorted. The types' field order and which fields are maps
 * come from the built-in types (`builtin-openapi.ts`); a struct whose order is not known there keeps its fields as
 * written. A custom resource is an unstructured map, so all its keys are sorted. Clients that compare objects as
 * text see the same answers from the authority as from a cluster.
 */
import { builtinTypes, type FieldShape } from './builtin-openapi.js';
import { isRecord } from './json.js';
import type { KubeObject, ResourceType } from './types.js';

type Json = unknown;
type Struct = Record<string, FieldShape>;

const FIELDS_V1 = 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1';
const SCHEMA = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
/** A CRD schema's `items`, `additionalProperties` and `dependencies` values: a schema, or a list or a scalar. */
const SCHEMA_OR = new Set(['OrArray', 'OrBool', 'OrStringArray'].map((or) => `${SCHEMA}${or}`));
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

let unordered: ReadonlySet<string> | undefined;

/**
 * Sets `out[k]` as an own field: a body's `__proto__` key (JSON.parse makes it an own field) assigned plainly would
 * set the new object's prototype instead, and the field would be lost.
 */
function put(out: Record<string, Json>, k: string, v: Json): void {
  if (k === '__proto__')
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

/** Go's encoding of `map[string]interface{}`: every object's keys sorted, at every depth. */
function sortDeep(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (!isRecord(v)) return v;
  const out: Record<string, Json> = {};
  for (const k of Object.keys(v).sort()) put(out, k, sortDeep(v[k]));
  return out;
}

/** The fields of a named type if it is a struct (a map's shape is `{'': shape}`). */
const structOf = (t: Struct | FieldShape | undefined): Struct | undefined =>
  typeof t === 'object' && !Array.isArray(t) && !('' in t) ? t : undefined;

/** `v` encoded as a value of `shape`: structs in their fields' order, maps sorted; what does not fit, as it is. */
function encode(v: Json, shape: FieldShape): Json {
  if (Array.isArray(shape)) return Array.isArray(v) ? v.map((x) => encode(x, shape[0])) : v;
  if (typeof shape === 'object') {
    if (!isRecord(v)) return v;
    const out: Record<string, Json> = {};
    for (const k of Object.keys(v).sort()) put(out, k, encode(v[k], shape['']));
    return out;
  }
  // a managed-fields entry's set is written with its keys sorted
  if (shape === FIELDS_V1) return sortDeep(v);
  if (SCHEMA_OR.has(shape)) return Array.isArray(v) ? v.map((x) => encode(x, SCHEMA)) : encode(v, SCHEMA);
  const named = builtinTypes().types[shape];
  const type = structOf(named);
  if (!type) return named === undefined ? v : encode(v, named as FieldShape);
  if (!isRecord(v)) return v;
  unordered ??= new Set(builtinTypes().unordered);
  const out: Record<string, Json> = {};
  if (unordered.has(shape)) {
    for (const [k, x] of Object.entries(v)) put(out, k, Object.hasOwn(type, k) ? encode(x, type[k]) : x);
    return out;
  }
  for (const k of Object.keys(type)) if (Object.hasOwn(v, k)) put(out, k, encode(v[k], type[k]));
  // fields the type does not have (the decoder dropped them before a write) stay, after its own
  for (const k of Object.keys(v)) if (!Object.hasOwn(out, k)) put(out, k, v[k]);
  return out;
}

/**
 * The object with its keys in the order kube-apiserver writes them (a new object; values are shared, not copied,
 * except the objects whose keys are reordered).
 */
export function kubeEncoded(t: ResourceType, o: KubeObject): KubeObject {
  if (t.crd) return sortDeep(o) as KubeObject;
  const type = builtinTypes().kinds[`${t.group}/${t.version}/${t.kind}`];
  if (type) return encode(o, type) as KubeObject;
  // a kind without a type in the documents: Go's TypeMeta and ObjectMeta first, the rest as written
  const out: Record<string, Json> = {};
  for (const k of ['kind', 'apiVersion', 'metadata'])
    if (Object.hasOwn(o, k)) out[k] = k === 'metadata' ? encode(o.metadata, OBJECT_META) : o[k];
  for (const k of Object.keys(o)) if (!Object.hasOwn(out, k)) put(out, k, o[k]);
  return out;
}

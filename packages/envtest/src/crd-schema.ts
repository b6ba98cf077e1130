/**
 * Custom resources against their CRD's structural schema, as kube-apiserver 1.32 treats them: pruning of unknown
 * fields (reported under `fieldValidation`), the dropping of nulls, defaulting, and validation with kube-openapi's
 * error texts and paths (`spec.items[0].name`, no leading dot).
 *
 * Hand-written rather than built on a JSON Schema validator: the structural subset is small, and what matters here
 * is kube's own semantics around it (nullable, int-or-string, list types, embedded resources, pruning, defaulting,
 * ratcheting) and its exact messages, which a generic validator's error objects do not carry.
 * CEL rules (`x-kubernetes-validations`) are evaluated in crd-cel.ts once the rest of the schema holds.
 */
import { isDeepStrictEqual } from 'node:util';
import { isIPv4, isIPv6 } from 'node:net';
import type { FieldCause } from './status.js';
import type { ListShape, ListShapes } from './managed-fields.js';
import { evaluateRules } from './crd-cel.js';
import type { StructuralSchema } from './types.js';
import { validateLabels } from './validation.js';

type Json = unknown;

const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
// in any key order: a stored object's keys are in kube's encoding order, a new one's as its writer wrote them
const same = (a: Json, b: Json) => isDeepStrictEqual(a, b);

/** The fields of ObjectMeta: anything else under a `metadata` is pruned. */
const OBJECT_META = new Set([
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
]);

const child = (path: string, key: string) => (path ? `${path}.${key}` : key);

function additional(s: StructuralSchema): StructuralSchema | undefined {
  return isObj(s.additionalProperties) ? s.additionalProperties : undefined;
}

// ---- pruning and nulls ----

/**
 * Removes, in place, what the schema does not declare (and non-nullable nulls without a default, silently).
 * Returns the removed paths, sorted, as `fieldValidation` reports them (`spec.foo`, `metadata.bar`).
 */
export function pruneCustomResource(o: Json, schema: StructuralSchema): string[] {
  const out: string[] = [];
  if (!isObj(o)) return out;
  pruneObject(o, schema, '', out, true);
  return out.sort();
}

function pruneMeta(meta: Json, path: string, out: string[]): void {
  if (!isObj(meta)) return;
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META.has(k)) {
      delete meta[k];
      out.push(child(path, k));
    }
  }
}

/**
 * The schema of a named property, own properties only: the names come from request bodies, and `constructor` or
 * `toString` must find no schema rather than Object.prototype's members.
 */
function ownField(props: Record<string, StructuralSchema> | undefined, key: string): StructuralSchema | undefined {
  return props && Object.hasOwn(props, key) ? props[key] : undefined;
}

function pruneObject(
  o: Record<string, Json>,
  s: StructuralSchema,
  path: string,
  out: string[],
  resource: boolean,
): void {
  const props = s.properties ?? {};
  const extra = additional(s);
  const keep = s['x-kubernetes-preserve-unknown-fields'] === true;
  for (const k of Object.keys(o)) {
    const v = o[k];
    if (resource && (k === 'apiVersion' || k === 'kind')) continue;
    if (resource && k === 'metadata') {
      pruneMeta(v, child(path, k), out);
      continue;
    }
    const ps = ownField(props, k) ?? extra;
    if (!ps) {
      if (!keep) {
        delete o[k];
        out.push(child(path, k));
      }
      continue;
    }
    if (v === null) {
      if (!ps.nullable && ps.default === undefined) delete o[k];
      continue;
    }
    pruneValue(v, ps, child(path, k), out);
  }
}

function pruneValue(v: Json, s: StructuralSchema, path: string, out: string[]): void {
  if (Array.isArray(v)) {
    if (s.items) v.forEach((x, i) => x !== null && pruneValue(x, s.items!, `${path}[${i}]`, out));
    return;
  }
  if (isObj(v) && (s.properties || additional(s) || s['x-kubernetes-embedded-resource'] || s.type === 'object')) {
    pruneObject(v, s, path, out, s['x-kubernetes-embedded-resource'] === true);
  }
}

// ---- defaulting ----

/** Applies the schema's defaults, in place: absent keys, and nulls of non-nullable fields, in objects that exist. */
export function defaultCustomResource(o: Json, schema: StructuralSchema): void {
  defaultValue(o, schema);
}

function defaultValue(v: Json, s: StructuralSchema): void {
  if (Array.isArray(v)) {
    if (s.items) for (const x of v) defaultValue(x, s.items);
    return;
  }
  if (!isObj(v)) return;
  for (const [k, ps] of Object.entries(s.properties ?? {})) {
    if (ps.default !== undefined && (!Object.hasOwn(v, k) || (v[k] === null && !ps.nullable)))
      v[k] = structuredClone(ps.default);
    if (Object.hasOwn(v, k)) defaultValue(v[k], ps);
  }
  const extra = additional(s);
  if (extra) for (const k of Object.keys(v)) if (!ownField(s.properties, k)) defaultValue(v[k], extra);
}

// ---- validation ----

/** Go's rendering of a value in a field error: strings quoted, numbers and booleans bare. */
function shown(v: Json): string {
  if (v === null || v === undefined) return '"null"';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return goValue(v);
}

/** Go's `%#v` of a decoded JSON value (`map[string]interface {}{"name":"a"}`). */
function goValue(v: Json): string {
  if (v === null) return '<nil>';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goValue).join(', ')}}`;
  if (!isObj(v)) return String(v);
  return `map[string]interface {}{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${goValue(v[k])}`)
    .join(', ')}}`;
}

function typeName(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: Json, s: StructuralSchema): boolean {
  const t = typeName(v);
  if (s['x-kubernetes-int-or-string']) return t === 'integer' || t === 'string';
  if (!s.type) return true;
  if (s.type === 'number') return t === 'integer' || t === 'number';
  return t === s.type;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const FORMATS: Record<string, (v: string) => boolean> = {
  ipv4: (v) => isIPv4(v),
  ipv6: (v) => isIPv6(v),
  cidr: (v) => {
    const [ip, bits, ...rest] = v.split('/');
    if (rest.length || bits === undefined || !/^\d{1,3}$/.test(bits)) return false;
    return (isIPv4(ip) && Number(bits) <= 32) || (isIPv6(ip) && Number(bits) <= 128);
  },
  hostname: (v) =>
    v.length <= 255 &&
    /^[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/.test(v),
  email: (v) => /^[^\s@]+@[^\s@]+$/.test(v),
  uri: (v) => {
    try {
      return !!new URL(v).protocol;
    } catch {
      return v.startsWith('/');
    }
  },
  mac: (v) => /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(v),
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid3: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  uuid4: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  uuid5: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(v),
  date: (v) => DATE.test(v) && !Number.isNaN(Date.parse(v)),
  'date-time': (v) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v) &&
    !Number.isNaN(Date.parse(v.replace(' ', 'T'))),
  duration: (v) =>
    /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+$/.test(v.replace(/\s+/g, '')) ||
    /^\d+\s*(nanoseconds?|microseconds?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$/.test(v),
  byte: (v) => /^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
};

/** Rules to evaluate once the structural checks are done: where, on what, with which old value. */
interface PendingRules {
  value: Json;
  schema: StructuralSchema;
  field: string;
  old: Json;
}

/** Errors after which kube does not evaluate CEL rules. */
const CEL_BLOCKERS = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

interface Ctx {
  causes: FieldCause[];
  rules: PendingRules[];
  /** Put before each field path (a /status write validates `status` alone: its texts' paths are relative to it). */
  prefix: string;
}

const RULES = new WeakMap<StructuralSchema, boolean>();

/** Whether a schema has `x-kubernetes-validations` at any depth. */
function hasRules(s: StructuralSchema | undefined): boolean {
  if (!s || typeof s !== 'object') return false;
  const known = RULES.get(s);
  if (known !== undefined) return known;
  RULES.set(s, false); // a cycle cannot add rules
  const children: Array<StructuralSchema | undefined> = [
    ...Object.values(s.properties ?? {}),
    s.items,
    typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined,
  ];
  const found = !!s['x-kubernetes-validations']?.length || children.some((c) => hasRules(c));
  RULES.set(s, found);
  return found;
}

function push(ctx: Ctx, field: string, message: string, reason = 'FieldValueInvalid'): void {
  ctx.causes.push({ field: `${ctx.prefix}${field}`, message, reason });
}

/**
 * The schema errors of a custom resource, as kube-apiserver reports them (its 422 causes). `old` is the stored
 * object on an update: errors in values it already had are not reported (kube's validation ratcheting). A write to
 * the status subresource validates `status` against its own schema: fields read `status.x`, texts `x in body`.
 */
export function validateCustomResource(
  o: Json,
  schema: StructuralSchema,
  old?: Json,
  statusOnly = false,
): FieldCause[] {
  const ctx: Ctx = { causes: [], rules: [], prefix: '' };
  if (!isObj(o)) return ctx.causes;
  const statusSchema = schema.properties?.status;
  if (statusOnly && statusSchema) {
    if (o.status !== undefined && isObj(o.status)) {
      const sub: Ctx = { ...ctx, prefix: 'status.' };
      const oldStatus = isObj(old) && isObj(old.status) ? old.status : undefined;
      if (statusSchema['x-kubernetes-validations']?.length)
        ctx.rules.push({ value: o.status, schema: statusSchema, field: 'status', old: oldStatus });
      validateObject(o.status, statusSchema, '', sub, oldStatus, false);
    }
  } else {
    if (schema['x-kubernetes-validations']?.length) ctx.rules.push({ value: o, schema, field: '', old });
    validateObject(o, schema, '', ctx, isObj(old) ? old : undefined, true);
  }
  // kube runs its CEL validator when the schema has rules anywhere, present in this object or not
  if (hasRules(statusOnly && statusSchema ? statusSchema : schema)) {
    if (ctx.causes.some((c) => CEL_BLOCKERS.has(c.reason ?? ''))) {
      push(
        ctx,
        '<nil>',
        'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      );
    } else for (const r of ctx.rules) ctx.causes.push(...evaluateRules(r.value, r.schema, r.field, r.old));
  }
  return ctx.causes;
}

function validateValue(v: Json, s: StructuralSchema, path: string, ctx: Ctx, old: Json): void {
  if (old !== undefined && same(v, old)) return;
  if (v === null) {
    if (s.nullable) return;
    const want = s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type;
    if (want)
      push(
        ctx,
        path,
        `Invalid value: "null": ${path} in body must be of type ${want}: "null"`,
        'FieldValueTypeInvalid',
      );
    return;
  }
  if (!typeMatches(v, s)) {
    const want = s['x-kubernetes-int-or-string'] ? 'integer,string' : s.type;
    push(
      ctx,
      path,
      `Invalid value: "${typeName(v)}": ${path} in body must be of type ${want}: "${typeName(v)}"`,
      'FieldValueTypeInvalid',
    );
    return;
  }
  if (s['x-kubernetes-validations']?.length)
    ctx.rules.push({ value: v, schema: s, field: `${ctx.prefix}${path}`, old });
  if (s.enum && !s.enum.some((e) => same(e, v))) {
    push(
      ctx,
      path,
      `Unsupported value: ${shown(v)}: supported values: ${s.enum.map(shown).join(', ')}`,
      'FieldValueNotSupported',
    );
  }
  if (typeof v === 'string') validateString(v, s, path, ctx);
  else if (typeof v === 'number') validateNumber(v, s, path, ctx);
  else if (Array.isArray(v)) validateArray(v, s, path, ctx, Array.isArray(old) ? old : undefined);
  else if (isObj(v))
    validateObject(v, s, path, ctx, isObj(old) ? old : undefined, s['x-kubernetes-embedded-resource'] === true);
}

function validateString(v: string, s: StructuralSchema, path: string, ctx: Ctx): void {
  validateStringBounds(v, s, path, ctx);
  const check = s.format ? FORMATS[s.format] : undefined;
  if (check && !check(v))
    push(ctx, path, `Invalid value: ${shown(v)}: ${path} in body must be of type ${s.format}: ${shown(v)}`);
}

/** maxLength, minLength, pattern: the first that fails is the only one reported (kube-openapi's string validator). */
function validateStringBounds(v: string, s: StructuralSchema, path: string, ctx: Ctx): void {
  const chars = [...v].length;
  if (s.maxLength !== undefined && chars > s.maxLength)
    return push(ctx, path, `Too long: may not be more than ${s.maxLength} bytes`, 'FieldValueTooLong');
  if (s.minLength !== undefined && chars < s.minLength)
    return push(ctx, path, `Invalid value: ${shown(v)}: ${path} in body should be at least ${s.minLength} chars long`);
  if (s.pattern !== undefined) {
    let re: RegExp | undefined;
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      re = undefined;
    }
    if (re && !re.test(v)) push(ctx, path, `Invalid value: ${shown(v)}: ${path} in body should match '${s.pattern}'`);
  }
}

function validateNumber(v: number, s: StructuralSchema, path: string, ctx: Ctx): void {
  const bad = (why: string) => push(ctx, path, `Invalid value: ${v}: ${path} in body ${why}`);
  if (s.minimum !== undefined) {
    if (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)
      bad(`should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`);
  }
  if (s.maximum !== undefined) {
    if (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)
      bad(`should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`);
  }
  if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf))
    bad(`should be a multiple of ${s.multipleOf}`);
}

function validateArray(v: Json[], s: StructuralSchema, path: string, ctx: Ctx, old: Json[] | undefined): void {
  if (s.maxItems !== undefined && v.length > s.maxItems)
    push(ctx, path, `Too many: ${v.length}: must have at most ${s.maxItems} items`, 'FieldValueTooMany');
  if (s.minItems !== undefined && v.length < s.minItems)
    push(ctx, path, `Invalid value: ${v.length}: ${path} in body should have at least ${s.minItems} items`);
  if (s.items) v.forEach((x, i) => validateValue(x, s.items!, `${path}[${i}]`, ctx, old?.[i]));
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const k = JSON.stringify(x);
      if (seen.has(k)) push(ctx, `${path}[${i}]`, `Duplicate value: ${shown(x)}`, 'FieldValueDuplicate');
      seen.add(k);
    });
  } else if (listType === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    v.forEach((x, i) => {
      if (!isObj(x)) {
        push(ctx, `${path}[${i}]`, `Invalid value: ${shown(x)}: must be an object for an array of list-type map`);
        return;
      }
      const key: Record<string, Json> = {};
      for (const k of keys) if (k in x) key[k] = x[k];
      const id = JSON.stringify(key);
      if (seen.has(id)) push(ctx, `${path}[${i}]`, `Duplicate value: ${goValue(key)}`, 'FieldValueDuplicate');
      seen.add(id);
    });
  }
}

function validateObject(
  v: Record<string, Json>,
  s: StructuralSchema,
  path: string,
  ctx: Ctx,
  old: Record<string, Json> | undefined,
  resource: boolean,
): void {
  const props = s.properties ?? {};
  const extra = additional(s);
  for (const [k, x] of Object.entries(v)) {
    if (resource && path === '' && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
    const ps = ownField(props, k) ?? extra;
    if (ps) validateValue(x, ps, child(path, k), ctx, old?.[k]);
  }
  for (const r of s.required ?? [])
    if (!(r in v) || v[r] === undefined) push(ctx, child(path, r), 'Required value', 'FieldValueRequired');
  const n = Object.keys(v).length;
  if (s.maxProperties !== undefined && n > s.maxProperties)
    push(ctx, path, `Too many: ${n}: must have at most ${s.maxProperties} items`, 'FieldValueTooMany');
  if (s.minProperties !== undefined && n < s.minProperties)
    push(ctx, path, `Invalid value: ${n}: ${path} in body should have at least ${s.minProperties} properties`);
  if (resource && path !== '') {
    for (const k of ['apiVersion', 'kind']) {
      if (v[k] === undefined || v[k] === '')
        push(ctx, child(path, k), 'Required value: must not be empty', 'FieldValueRequired');
      else if (typeof v[k] !== 'string') push(ctx, child(path, k), `Invalid value: ${shown(v[k])}: must be a string`);
    }
    // an embedded object's metadata is an ObjectMeta: its labels follow the label rules
    if (isObj(v.metadata))
      for (const e of validateLabels(v.metadata.labels)) push(ctx, child(path, e.field), e.message);
  }
}

// ---- list shapes for field ownership ----

/** The schema node at a FieldsV1 path (undefined where the schema does not say). */
function schemaAt(schema: StructuralSchema, path: string[]): StructuralSchema | undefined {
  let s: StructuralSchema | undefined = schema;
  for (const k of path) {
    if (!s) return undefined;
    if (k.startsWith('f:')) s = ownField(s.properties, k.slice(2)) ?? additional(s);
    else s = s.items;
  }
  return s;
}

/** How a custom resource's lists are keyed for field ownership: their `x-kubernetes-list-type` (atomic if unset). */
export function schemaListShapes(schema: StructuralSchema): ListShapes {
  return (path): ListShape => {
    const s = schemaAt(schema, path);
    const type = s?.['x-kubernetes-list-type'];
    if (type === 'map') return { type: 'map', keys: s?.['x-kubernetes-list-map-keys'] ?? [] };
    if (type === 'set') return { type: 'set' };
    return { type: 'atomic' };
  };
}

/**
 * A stored custom resource as a read returns it: kube decodes what it reads from storage as it decodes requests, so
 * a schema changed after the object was written prunes and defaults it on the way out. Returns `o` itself when the
 * schema changes nothing, else a changed copy.
 */
export function readCustomResource<T>(o: T, schema: StructuralSchema | undefined): T {
  if (!schema || !isObj(o)) return o;
  const out = structuredClone(o);
  pruneCustomResource(out, schema);
  defaultCustomResource(out, schema);
  return same(out, o) ? o : out;
}

// ---- the CRD's own schema ----

type Level = 'root' | 'field' | 'item';

const EMPTY_TYPE: Record<Level, string> = {
  root: 'must not be empty at the root',
  field: 'must not be empty for specified object fields',
  item: 'must not be empty for specified array items',
};

/**
 * Why a CRD version's `openAPIV3Schema` is not structural, as kube-apiserver refuses a v1 CRD: every node typed
 * (unless int-or-string or preserving unknown fields), `object` at the root and for embedded resources, no
 * `properties` beside `additionalProperties`, no `uniqueItems`. `path` is the schema's field path.
 */
export function structuralSchemaCauses(schema: unknown, path: string): FieldCause[] {
  const out: FieldCause[] = [];
  const walk = (s: unknown, at: string, level: Level) => {
    if (!isObj(s)) return;
    const node = s as StructuralSchema & { uniqueItems?: boolean };
    const type = typeof node.type === 'string' ? node.type : '';
    if (node['x-kubernetes-embedded-resource'] && type !== 'object') {
      if (!type)
        out.push({
          field: `${at}.type`,
          message: 'Required value: must be object if x-kubernetes-embedded-resource is true',
          reason: 'FieldValueRequired',
        });
      else
        out.push({
          field: `${at}.type`,
          message: `Invalid value: ${JSON.stringify(type)}: must be object if x-kubernetes-embedded-resource is true`,
        });
    } else if (!type && !node['x-kubernetes-int-or-string'] && !node['x-kubernetes-preserve-unknown-fields']) {
      out.push({ field: `${at}.type`, message: `Required value: ${EMPTY_TYPE[level]}`, reason: 'FieldValueRequired' });
    }
    if (level === 'root' && type && type !== 'object')
      out.push({ field: `${at}.type`, message: `Invalid value: ${JSON.stringify(type)}: must be object at the root` });
    if (node.properties && node.additionalProperties !== undefined) {
      out.push({
        field: `${at}.additionalProperties`,
        message: 'Forbidden: additionalProperties and properties are mutual exclusive',
        reason: 'FieldValueForbidden',
      });
    }
    if (node.uniqueItems === true) {
      out.push({
        field: `${at}.uniqueItems`,
        message: 'Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
        reason: 'FieldValueForbidden',
      });
    }
    if (isObj(node.properties))
      for (const [k, v] of Object.entries(node.properties)) walk(v, `${at}.properties[${k}]`, 'field');
    if (isObj(node.additionalProperties)) walk(node.additionalProperties, `${at}.additionalProperties`, 'field');
    if (isObj(node.items)) walk(node.items, `${at}.items`, 'item');
  };
  walk(schema, path, 'root');
  return out;
}

/**
 * The errors of a structural schema's defaults, as apiextensions-apiserver checks them when a CRD is written: each
 * `default` (in properties and list items; none may sit under additionalProperties) must validate against the
 * schema it stands in, and must have no field that schema would prune (`must not have unknown fields`). Errors
 * are named by the default's path (`<path>.properties[spec].properties[size].default`), with the schema
 * validator's texts for the default itself. CEL rules do not apply to defaults here.
 */
export function defaultCauses(schema: unknown, path: string): FieldCause[] {
  const out: FieldCause[] = [];
  const walk = (s: unknown, at: string) => {
    if (!isObj(s)) return;
    const node = s as StructuralSchema;
    if (node.default !== undefined) {
      const field = `${at}.default`;
      const pruned = structuredClone(node.default);
      if (isObj(pruned) || Array.isArray(pruned)) pruneValue(pruned, node, '', []);
      if (!same(pruned, node.default))
        out.push({
          field,
          message: `Invalid value: ${shown(node.default)}: must not have unknown fields`,
          reason: 'FieldValueInvalid',
        });
      else {
        const ctx: Ctx = { causes: [], rules: [], prefix: '' };
        validateValue(node.default, node, '', ctx, undefined);
        for (const c of ctx.causes) out.push({ ...c, field: c.field ? `${field}.${c.field}` : field });
      }
    }
    if (isObj(node.properties)) for (const [k, v] of Object.entries(node.properties)) walk(v, `${at}.properties[${k}]`);
    if (isObj(node.items)) walk(node.items, `${at}.items`);
  };
  walk(schema, path);
  return out;
}

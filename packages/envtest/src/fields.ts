/**
 * Unknown fields of built-in objects, for the `fieldValidation` query parameter (kubectl sends `Strict`; kube's
 * default is `Warn`) and for decoding: kube-apiserver decodes a built-in object into its Go type, so a field the
 * type does not have — a typo such as `imagePullPolice:` at any depth — is refused (Strict, 400), reported in a
 * `Warning` header (Warn) or silently dropped (Ignore), and never stored. The fields of every built-in type come
 * from the real server's OpenAPI documents (builtin-openapi.ts). A value of the wrong JSON type is refused as Go's
 * decoder refuses it. Custom resources are checked against their CRD's schema instead (crd-schema.ts).
 */
import { badRequest } from './status.js';
import { builtinTypes, type FieldShape } from './builtin-openapi.js';
import type { KubeObject, ResourceType } from './types.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Walks `v` along `shape`, calling `unknown(parent, key, path)` for each field its type does not have. `$…` keys
 * are strategic-merge-patch directives, not fields.
 */
function walk(
  v: unknown,
  shape: FieldShape,
  path: string,
  unknown: (parent: Record<string, unknown>, key: string, path: string) => void,
): void {
  const { types } = builtinTypes();
  if (typeof shape === 'string') {
    const type = types[shape];
    if (type === undefined) return; // a scalar, '*' or a free-form object
    if (typeof type === 'string' || Array.isArray(type) || '' in type)
      return walk(v, type as FieldShape, path, unknown);
    if (!isObj(v)) return; // a wrong JSON type is a decoding error of its own, not an unknown field
    for (const [k, x] of Object.entries(v)) {
      if (k.startsWith('$')) continue;
      const at = path ? `${path}.${k}` : k;
      const field = type[k];
      if (field === undefined) unknown(v, k, at);
      else walk(x, field, at, unknown);
    }
    return;
  }
  if (Array.isArray(shape)) {
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, shape[0], `${path}[${i}]`, unknown));
    return;
  }
  if (isObj(v)) for (const [k, x] of Object.entries(v)) walk(x, shape[''], `${path}.${k}`, unknown);
}

/** The type name of a built-in kind, or undefined (custom resources, kinds the documents do not have). */
function typeOfKind(t: ResourceType): string | undefined {
  return t.crd ? undefined : builtinTypes().kinds[`${t.group}/${t.version}/${t.kind}`];
}

/** Unknown field paths of an object body of a built-in kind (`[]` for custom resources and non-objects). */
export function unknownFields(t: ResourceType, body: unknown): string[] {
  const type = typeOfKind(t);
  if (!type || !isObj(body)) return [];
  const out: string[] = [];
  walk(body, type, '', (_parent, _key, path) => out.push(path));
  return out;
}

/** Drops the fields of a built-in object its type does not have, in place, as kube's decoding into the type does. */
export function pruneUnknownFields(t: ResourceType, o: KubeObject): void {
  const type = typeOfKind(t);
  if (type) walk(o, type, '', (parent, key) => delete parent[key]);
}

/**
 * Applies the `fieldValidation` directive: `Strict` → 400 naming the unknown fields; `Warn` (the default) → the
 * `Warning` header values to send; `Ignore` → nothing. An unknown directive is a 400, as in kube.
 */
export function checkFields(t: ResourceType, body: unknown, directive: string | null): string[] {
  const mode = directive || 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(mode)) {
    throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got ${JSON.stringify(mode)}`);
  }
  if (mode === 'Ignore') return [];
  const unknown = unknownFields(t, body);
  if (!unknown.length) return [];
  const list = unknown.map((f) => `unknown field ${JSON.stringify(f)}`);
  if (mode === 'Strict') {
    throw badRequest(
      `${t.kind} in version ${JSON.stringify(t.version)} cannot be handled as a ${t.kind}: strict decoding error: ${list.join(', ')}`,
    );
  }
  return list.map((w) => `299 - ${JSON.stringify(w)}`);
}

/** Go's name of a field's type, as its JSON decoder names it in an error (`int32`, `[]v1.Container`, `v1.PodSpec`). */
function goTypeName(shape: FieldShape): string {
  if (Array.isArray(shape)) return `[]${goTypeName(shape[0])}`;
  if (typeof shape !== 'string') return `map[string]${goTypeName(shape[''])}`;
  const scalar: Record<string, string> = { s: 'string', i32: 'int32', i64: 'int64', f64: 'float64', b: 'bool' };
  if (scalar[shape]) return scalar[shape];
  const parts = shape.split('.');
  return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}

/** The JSON kind of a value as Go's decoder names it (`string`, `number`, `number 1.5`, `bool`, `array`, `object`). */
function jsonKind(v: unknown, forInteger: boolean): string {
  if (typeof v === 'number') return forInteger && !Number.isInteger(v) ? `number ${v}` : 'number';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  return Array.isArray(v) ? 'array' : 'object';
}

/** Whether `v` decodes into a field of this shape (null decodes into anything). */
function fits(v: unknown, shape: FieldShape): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(shape)) return Array.isArray(v);
  if (typeof shape !== 'string') return isObj(v);
  switch (shape) {
    case 's':
      return typeof v === 'string';
    case 'b':
      return typeof v === 'boolean';
    case 'f64':
      return typeof v === 'number';
    case 'i32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31;
    case 'i64':
      return typeof v === 'number' && Number.isSafeInteger(v);
    case 'q':
    case '*':
      return true; // decoded by their own rules (quantities, int-or-string, raw JSON)
    case 'o':
      return isObj(v);
  }
  const type = builtinTypes().types[shape];
  if (type === undefined) return true;
  if (typeof type === 'string' || Array.isArray(type) || '' in type) return fits(v, type as FieldShape);
  return isObj(v);
}

/**
 * The first value of a built-in object's body whose JSON type its Go field cannot take, as kube's decoder reports
 * it (`json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`): the struct
 * holding the field, the field's JSON path without list indices or map keys, the field's Go type.
 */
function firstTypeError(body: Record<string, unknown>, rootType: string): string | undefined {
  const { types } = builtinTypes();
  const visit = (v: unknown, shape: FieldShape, struct: string, path: string): string | undefined => {
    if (v === null || v === undefined) return undefined;
    if (!fits(v, shape)) {
      const resolved =
        typeof shape === 'string' && typeof types[shape] === 'string' ? (types[shape] as FieldShape) : shape;
      const integer = resolved === 'i32' || resolved === 'i64';
      return `json: cannot unmarshal ${jsonKind(v, integer)} into Go struct field ${struct}.${path} of type ${goTypeName(resolved)}`;
    }
    if (Array.isArray(shape)) {
      for (const x of v as unknown[]) {
        const e = visit(x, shape[0], struct, path);
        if (e) return e;
      }
      return undefined;
    }
    if (typeof shape !== 'string') {
      for (const x of Object.values(v as Record<string, unknown>)) {
        const e = visit(x, shape[''], struct, path);
        if (e) return e;
      }
      return undefined;
    }
    const type = types[shape];
    if (type === undefined || typeof type === 'string') return undefined;
    if (Array.isArray(type) || '' in type) return visit(v, type as FieldShape, struct, path);
    return visitStruct(v as Record<string, unknown>, shape, path);
  };
  const visitStruct = (o: Record<string, unknown>, typeName: string, path: string): string | undefined => {
    const fields = types[typeName] as Record<string, FieldShape>;
    const struct = typeName.slice(typeName.lastIndexOf('.') + 1);
    for (const [k, x] of Object.entries(o)) {
      const field = fields[k];
      if (field === undefined) continue;
      const e = visit(x, field, struct, path ? `${path}.${k}` : k);
      if (e) return e;
    }
    return undefined;
  };
  // the top-level metadata's shape is checked with the object (objects.ts, in kube's words for it)
  const { metadata: _metadata, ...rest } = body;
  return visitStruct(rest, rootType, '');
}

/**
 * Refuses a create or update body of a built-in kind that has a value of the wrong JSON type, with kube's 400
 * (`Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal …`).
 */
export function checkTypes(t: ResourceType, body: unknown): void {
  const type = typeOfKind(t);
  if (!type || !isObj(body)) return;
  const error = firstTypeError(body, type);
  if (error)
    throw badRequest(`${t.kind} in version ${JSON.stringify(t.version)} cannot be handled as a ${t.kind}: ${error}`);
}

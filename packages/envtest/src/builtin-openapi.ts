/**
 * The OpenAPI documents of the built-in API, as the real kube-apiserver the authority stands for serves them
 * (`data/openapi-v3.json.br`, `data/openapi-v2.json.br`, written by `scripts/gen-builtin-api.mjs`): every built-in
 * type's schema with its descriptions, group-version-kind, defaults, required fields and list and map types, so that
 * `kubectl explain` and kubectl's client-side validation work on the authority as on a cluster.
 *
 * The documents are read and decompressed on first use (about 25 ms), not at start: most runs never ask. The fields
 * of each type, which every write of a built-in object needs, are a small file of their own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';

type Json = Record<string, unknown>;

/** `/openapi/v3`'s index (`paths` → `serverRelativeURL` with the document's hash) and the documents by path. */
export interface BuiltinOpenAPIv3 {
  index: { paths: Record<string, { serverRelativeURL: string }> };
  documents: Record<string, Json>;
}

const DATA = join(import.meta.dirname, 'data');

/**
 * A field's shape in a built-in type: a type's name, a scalar (`s` string, `i32` or `i64` integer, `f64` number,
 * `b` boolean, `q` int-or-string or quantity), `*` (any JSON), `o` (a free-form object), `[shape]` (a list) or
 * `{'': shape}` (a map).
 */
export type FieldShape = string | [FieldShape] | { '': FieldShape };

/** Every built-in type's fields (`{field: shape}`, or a shape for types that are not structs) and each kind's type. */
export interface BuiltinTypes {
  /** `group/version/Kind` → type name. */
  kinds: Record<string, string>;
  /** Each struct's fields in the Go type's order (the order kube-apiserver writes them), each with its shape. */
  types: Record<string, Record<string, FieldShape> | FieldShape>;
  /** The structs whose Go field order is not known: their fields are listed sorted. */
  unordered: string[];
}

let v3: BuiltinOpenAPIv3 | undefined;
let v2: Buffer | undefined;
let fields: BuiltinTypes | undefined;

/**
 * The built-in types' fields (`data/builtin-types.json.br`, 11 KB, read from the same documents): loaded on first
 * use, as the authority decodes its first built-in object.
 */
export function builtinTypes(): BuiltinTypes {
  if (!fields) {
    // every record without a prototype: fields are looked up by the keys of request bodies, and a body's
    // `valueOf` or `constructor` must find no field rather than Object.prototype's
    fields = JSON.parse(
      brotliDecompressSync(readFileSync(join(DATA, 'builtin-types.json.br'))).toString('utf8'),
      (_key, value: unknown) =>
        typeof value === 'object' && value !== null && !Array.isArray(value)
          ? Object.assign(Object.create(null) as object, value)
          : value,
    ) as BuiltinTypes;
    for (const [type, extra] of Object.entries(NEWER_FIELDS)) Object.assign(fields.types[type] as object, extra);
  }
  return fields;
}

/**
 * Fields newer than the recorded 1.25 types that the authority implements (it answers as 1.32 where behaviour
 * changed), so that they are not dropped as unknown: a CEL rule's `messageExpression` (1.27), `reason` and
 * `fieldPath` (1.28) and `optionalOldSelf` (1.29).
 */
const NEWER_FIELDS: Record<string, Record<string, FieldShape>> = {
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ValidationRule': {
    messageExpression: 's',
    reason: 's',
    fieldPath: 's',
    optionalOldSelf: 'b',
  },
};

/** The built-in OpenAPI v3 documents (shared: never change them). */
export function builtinOpenAPIv3(): BuiltinOpenAPIv3 {
  v3 ??= JSON.parse(
    brotliDecompressSync(readFileSync(join(DATA, 'openapi-v3.json.br'))).toString('utf8'),
  ) as BuiltinOpenAPIv3;
  return v3;
}

/** The built-in `/openapi/v2` document as JSON text. */
export function builtinOpenAPIv2Text(): Buffer {
  v2 ??= brotliDecompressSync(readFileSync(join(DATA, 'openapi-v2.json.br')));
  return v2;
}

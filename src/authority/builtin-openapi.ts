/**
 * The OpenAPI documents of the built-in API, as the real kube-apiserver the authority stands for serves them
 * (`data/openapi-v3.json.br`, `data/openapi-v2.json.br`, written by `scripts/gen-builtin-api.mjs`): every built-in
 * type's schema with its descriptions, group-version-kind, defaults, required fields and list and map types, so that
 * `kubectl explain` and kubectl's client-side validation work on the authority as on a cluster.
 *
 * Read and decompressed on first use (about 25 ms), not at start: most runs never ask.
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

let v3: BuiltinOpenAPIv3 | undefined;
let v2: Buffer | undefined;

/** The built-in OpenAPI v3 documents (shared: never change them). */
export function builtinOpenAPIv3(): BuiltinOpenAPIv3 {
  v3 ??= JSON.parse(brotliDecompressSync(readFileSync(join(DATA, 'openapi-v3.json.br'))).toString('utf8')) as BuiltinOpenAPIv3;
  return v3;
}

/** The built-in `/openapi/v2` document as JSON text. */
export function builtinOpenAPIv2Text(): Buffer {
  v2 ??= brotliDecompressSync(readFileSync(join(DATA, 'openapi-v2.json.br')));
  return v2;
}

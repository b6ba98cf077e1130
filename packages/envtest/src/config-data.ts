/**
 * The rules kube-apiserver (1.32, `pkg/apis/core/validation`) applies to the data of ConfigMaps and Secrets: key
 * syntax, the 1 MiB total, `immutable: true`, and a Secret's type being fixed. Each returns field causes in the
 * order the real server reports them; `objects.ts` aggregates them with the metadata checks into one 422.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from './types.js';
import type { FieldCause } from './status.js';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
/** The message kube's `RegexError` builds for config keys (the double spaces are the real server's). */
const CONFIG_KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const MAX_KEY_LENGTH = 253;
/** `MaxSecretSize`, which ConfigMaps share. */
export const MAX_DATA_BYTES = 1024 * 1024;
const IMMUTABLE = 'Forbidden: field is immutable when `immutable` is set';

/** Moves a Secret's `stringData` into `data` (base64), as kube does before validating and storing it. */
export function mergeStringData(o: KubeObject): void {
  if (!o.stringData || typeof o.stringData !== 'object') return;
  const data: Record<string, unknown> = { ...(o.data ?? {}) };
  for (const [k, v] of Object.entries(o.stringData)) data[k] = Buffer.from(String(v)).toString('base64');
  o.data = data;
  delete o.stringData;
}

/** kube's `IsConfigMapKey`: what is wrong with a data key (empty when it is valid). */
export function configKeyProblems(key: string): string[] {
  const out: string[] = [];
  if (key.length > MAX_KEY_LENGTH) out.push(`must be no more than ${MAX_KEY_LENGTH} characters`);
  if (!CONFIG_KEY.test(key)) out.push(CONFIG_KEY_MESSAGE);
  if (key === '.') out.push("must not be '.'");
  else if (key === '..') out.push("must not be '..'");
  else if (key.startsWith('..')) out.push("must not start with '..'");
  return out;
}

function keyCauses(field: string, map: unknown): FieldCause[] {
  const out: FieldCause[] = [];
  if (!map || typeof map !== 'object') return out;
  for (const k of Object.keys(map)) {
    for (const p of configKeyProblems(k))
      out.push({ field: `${field}[${k}]`, message: `Invalid value: ${JSON.stringify(k)}: ${p}` });
  }
  return out;
}

/** Bytes of a map's values: as stored for `data` of a ConfigMap, base64-decoded for Secret data and `binaryData`. */
function valueBytes(map: unknown, base64: boolean): number {
  if (!map || typeof map !== 'object') return 0;
  let n = 0;
  for (const v of Object.values(map as Record<string, unknown>)) {
    const s = typeof v === 'string' ? v : '';
    n += base64 ? Buffer.from(s, 'base64').length : Buffer.byteLength(s, 'utf8');
  }
  return n;
}

/** ConfigMap: `data` and `binaryData` keys, a key in both, and the total size. */
export function configMapCauses(o: KubeObject): FieldCause[] {
  const out = keyCauses('data', o.data);
  if (o.binaryData && typeof o.binaryData === 'object') {
    for (const k of Object.keys(o.binaryData)) {
      for (const p of configKeyProblems(k))
        out.push({ field: `binaryData[${k}]`, message: `Invalid value: ${JSON.stringify(k)}: ${p}` });
      if (o.data && typeof o.data === 'object' && Object.hasOwn(o.data, k)) {
        out.push({
          field: `data[${k}]`,
          message: `Invalid value: ${JSON.stringify(k)}: duplicate of key present in binaryData`,
        });
      }
    }
  }
  if (valueBytes(o.data, false) + valueBytes(o.binaryData, true) > MAX_DATA_BYTES) {
    out.push({
      field: '[]',
      message: `Too long: may not be more than ${MAX_DATA_BYTES} bytes`,
      reason: 'FieldValueTooLong',
    });
  }
  return out;
}

/** Secret (its `stringData` already merged into `data`): `data` keys and the total size. */
export function secretCauses(o: KubeObject): FieldCause[] {
  const out = keyCauses('data', o.data);
  if (valueBytes(o.data, true) > MAX_DATA_BYTES) {
    out.push({
      field: 'data',
      message: `Too long: may not be more than ${MAX_DATA_BYTES} bytes`,
      reason: 'FieldValueTooLong',
    });
  }
  return out;
}

/**
 * An update of a ConfigMap or Secret against the stored `old`: a Secret's type never changes; with `old.immutable`
 * true, `immutable` must stay true and the data (and a ConfigMap's binaryData) stay as they are. Labels and
 * annotations stay mutable, and false → true is allowed.
 */
export function immutabilityCauses(kind: 'ConfigMap' | 'Secret', old: KubeObject, next: KubeObject): FieldCause[] {
  const out: FieldCause[] = [];
  if (kind === 'Secret' && (next.type ?? 'Opaque') !== (old.type ?? 'Opaque')) {
    out.push({ field: 'type', message: `Invalid value: ${JSON.stringify(next.type ?? 'Opaque')}: field is immutable` });
  }
  if (old.immutable !== true) return out;
  if (next.immutable !== true) out.push({ field: 'immutable', message: IMMUTABLE, reason: 'FieldValueForbidden' });
  if (!isDeepStrictEqual(old.data ?? {}, next.data ?? {}))
    out.push({ field: 'data', message: IMMUTABLE, reason: 'FieldValueForbidden' });
  if (kind === 'ConfigMap' && !isDeepStrictEqual(old.binaryData ?? {}, next.binaryData ?? {})) {
    out.push({ field: 'binaryData', message: IMMUTABLE, reason: 'FieldValueForbidden' });
  }
  return out;
}

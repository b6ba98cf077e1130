/**
 * Field ownership for server-side apply, simplified: each apply manager's last applied field set is kept in
 * `metadata.managedFields` (`operation: Apply`, `fieldsType: FieldsV1`), and when a manager applies again, the
 * fields it applied before but no longer applies are removed from the object unless another apply manager also
 * applies them. That is what makes `kubectl apply --server-side` drop a key deleted from the manifest, as in a
 * cluster. Not modelled: conflicts with other managers (every apply behaves as `--force-conflicts`) and ownership
 * by non-apply (update) managers.
 *
 * Field sets use the FieldsV1 key shapes: `f:<field>` for object fields, `k:{"<mergeKey>":<value>}` for elements of
 * lists merged by key; any other list is one atomic field. A leaf is `{}`.
 */
import { mergeKeyFor } from './patch.js';
import type { KubeObject } from './resources.js';

/** A FieldsV1 set. */
export type FieldSet = { [key: string]: FieldSet };

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function setOf(v: Record<string, Json>): FieldSet {
  const out: FieldSet = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    if (isObj(x)) out[`f:${k}`] = setOf(x);
    else if (Array.isArray(x)) {
      const key = x.length && x.every(isObj) ? mergeKeyFor(k, x) : undefined;
      if (!key) out[`f:${k}`] = {};
      else {
        const els: FieldSet = {};
        for (const el of x) els[`k:${JSON.stringify({ [key]: el[key] })}`] = setOf(el);
        out[`f:${k}`] = els;
      }
    } else out[`f:${k}`] = {};
  }
  return out;
}

/** The fields an applied configuration sets (metadata: labels and annotations only; never status). */
export function appliedFields(config: KubeObject): FieldSet {
  const { apiVersion: _a, kind: _k, metadata, status: _s, ...rest } = config;
  const out = setOf(rest);
  const meta: Record<string, Json> = {};
  if (isObj(metadata)) {
    if (isObj(metadata.labels)) meta.labels = metadata.labels;
    if (isObj(metadata.annotations)) meta.annotations = metadata.annotations;
  }
  if (Object.keys(meta).length) out['f:metadata'] = setOf(meta);
  return out;
}

function child(container: Json, key: string): { value: Json; remove: () => void } | undefined {
  if (key.startsWith('f:') && isObj(container)) {
    const f = key.slice(2);
    if (!(f in container)) return undefined;
    return { value: container[f], remove: () => delete container[f] };
  }
  if (key.startsWith('k:') && Array.isArray(container)) {
    let want: Record<string, Json>;
    try {
      want = JSON.parse(key.slice(2)) as Record<string, Json>;
    } catch {
      return undefined;
    }
    const i = container.findIndex((el) => isObj(el) && Object.entries(want).every(([k, v]) => el[k] === v));
    if (i < 0) return undefined;
    return { value: container[i], remove: () => container.splice(i, 1) };
  }
  return undefined;
}

const isLeaf = (s: FieldSet | undefined) => !s || Object.keys(s).length === 0;

/**
 * Removes from `obj` (in place) the fields in `before` that are not in `after`, except those in one of `others`.
 * Where both sets go deeper, it recurses.
 */
export function removeUnapplied(obj: Json, before: FieldSet, after: FieldSet, others: FieldSet[]): void {
  for (const [key, sub] of Object.entries(before)) {
    const c = child(obj, key);
    if (!c) continue;
    const still = after[key];
    const otherSubs = others.map((o) => o[key]).filter((x): x is FieldSet => x !== undefined);
    if (still === undefined) {
      // a list element the manager no longer applies goes as a whole; a leaf too
      if (key.startsWith('k:') || isLeaf(sub)) {
        if (otherSubs.length === 0) c.remove();
        continue;
      }
      // an object field: only the fields this manager owned inside it go (others, e.g. set by updates, stay)
      if (otherSubs.some(isLeaf)) continue;
      removeUnapplied(c.value, sub, {}, otherSubs);
      if (isObj(c.value) && Object.keys(c.value).length === 0) c.remove();
      continue;
    }
    if (!isLeaf(sub) && !isLeaf(still)) removeUnapplied(c.value, sub, still, otherSubs.filter((o) => !isLeaf(o)));
  }
}

/** One `metadata.managedFields` entry of an apply. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldSet;
  subresource?: string;
}

/** The apply entries of an object (others are ignored). */
export function applyEntries(o: KubeObject | undefined): ManagedFieldsEntry[] {
  const mf = o?.metadata?.managedFields;
  return Array.isArray(mf) ? (mf.filter((e) => isObj(e) && e.operation === 'Apply' && typeof e.manager === 'string' && isObj(e.fieldsV1)) as ManagedFieldsEntry[]) : [];
}

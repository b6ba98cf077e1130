/**
 * Field ownership as kube-apiserver tracks it in `metadata.managedFields` (server-side apply):
 *
 * - an apply records the fields its configuration sets under `(manager, Apply)`; a field another manager owns with a
 *   different value is a conflict (409) unless the apply is forced, which moves the field to the applier; an equal
 *   value is co-owned; a field the manager applied before and omits now is removed unless someone else owns it;
 * - every other write (create, update, patches) takes the fields it adds or changes into `(manager, apiVersion,
 *   Update)` and out of every other manager's set, and removed fields leave every set.
 *
 * Field sets are sets of paths whose elements are FieldsV1 keys: `f:<field>`, `k:<JSON of the key fields>` (lists
 * merged by key), `v:<JSON value>` (lists of sets), `i:<n>`; any other list is one atomic field. Which lists are
 * keyed or sets comes from a {@link ListShapes} resolver: the built-in kinds' merge keys, or a CRD's schema.
 */
import { isDeepStrictEqual } from 'node:util';
import { mergeKeyFor } from './patch.js';
import type { KubeObject } from './types.js';
import { list, record, type JsonObject } from './json.js';

/** A FieldsV1 trie as stored in `managedFields[].fieldsV1`. */
export type FieldSet = { [key: string]: FieldSet };

/** One path: FieldsV1 keys from the object's root. */
export type FieldPath = string[];

type Json = unknown;

const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How the elements of a list are told apart. */
export type ListShape = { type: 'map'; keys: string[] } | { type: 'set' } | { type: 'atomic' };

/** Resolves the shape of the list at `path` (its FieldsV1 keys; the last one is `f:<field>`). */
export type ListShapes = (path: FieldPath, items: Json[]) => ListShape;

/** The built-in kinds' lists: keyed by their strategic merge key, `finalizers` a set, any other list atomic. */
export const builtinListShapes: ListShapes = (path, items) => {
  const last = path[path.length - 1] ?? '';
  const field = last.startsWith('f:') ? last.slice(2) : '';
  if (field === 'finalizers' && path.length === 2 && path[0] === 'f:metadata') return { type: 'set' };
  if (!items.length || !items.every(isObj)) return { type: 'atomic' };
  const key = mergeKeyFor(field, items);
  return key ? { type: 'map', keys: [key] } : { type: 'atomic' };
};

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldSet;
  subresource?: string;
}

// ---- paths ----

const SEP = '\u0000';
const encode = (p: FieldPath) => p.join(SEP);
const decode = (s: string): FieldPath => (s === '' ? [] : s.split(SEP));

/** A set of field paths. */
export class PathSet {
  private readonly paths = new Set<string>();

  constructor(paths: Iterable<FieldPath> = []) {
    for (const p of paths) this.add(p);
  }

  add(p: FieldPath): void {
    this.paths.add(encode(p));
  }
  has(p: FieldPath): boolean {
    return this.paths.has(encode(p));
  }
  delete(p: FieldPath): void {
    this.paths.delete(encode(p));
  }
  get size(): number {
    return this.paths.size;
  }
  *[Symbol.iterator](): IterableIterator<FieldPath> {
    for (const s of this.paths) yield decode(s);
  }
  /** A copy without the paths in `other`. */
  minus(other: PathSet): PathSet {
    return new PathSet([...this].filter((p) => !other.has(p)));
  }

  /** Parses a FieldsV1 trie (`".": {}` marks the node itself; an empty node is a leaf). */
  static fromFieldsV1(v: unknown): PathSet {
    const out = new PathSet();
    const walk = (node: Json, prefix: FieldPath) => {
      if (!isObj(node)) return;
      for (const [k, sub] of Object.entries(node)) {
        if (k === '.') out.add(prefix);
        else if (!isObj(sub) || Object.keys(sub).length === 0) out.add([...prefix, k]);
        else walk(sub, [...prefix, k]);
      }
    };
    walk(v, []);
    return out;
  }

  /** The FieldsV1 trie: a member with members below it gets `".": {}`; keys in FieldsV1's order. */
  toFieldsV1(): FieldSet {
    const root: FieldSet = {};
    const members = new Set<string>();
    for (const p of this) {
      let node = root;
      for (const k of p) node = node[k] ??= {};
      members.add(encode(p));
    }
    const order = (k: string) => (k === '.' ? 0 : 'fkvi'.indexOf(k[0]) + 1);
    const finish = (node: FieldSet, prefix: FieldPath): FieldSet => {
      const keys = Object.keys(node);
      if (keys.length && members.has(encode(prefix)) && prefix.length) node['.'] = {};
      const out: FieldSet = {};
      for (const k of Object.keys(node).sort((a, b) => order(a) - order(b) || (a < b ? -1 : a > b ? 1 : 0))) {
        out[k] = k === '.' ? {} : finish(node[k], [...prefix, k]);
      }
      return out;
    };
    return finish(root, []);
  }
}

/** The key of a list element: `k:{…}` for keyed lists, `v:…` for sets, else `i:<n>`. */
function elementKey(shape: ListShape, el: Json, i: number): string {
  if (shape.type === 'map' && isObj(el)) {
    const key: Record<string, Json> = {};
    for (const k of [...shape.keys].sort()) if (k in el) key[k] = el[k];
    return `k:${JSON.stringify(key)}`;
  }
  if (shape.type === 'set') return `v:${JSON.stringify(el)}`;
  return `i:${i}`;
}

/** The value at a path (undefined when absent). */
export function valueAt(obj: Json, path: FieldPath, shapes: ListShapes = builtinListShapes): Json {
  let cur = obj;
  const at: FieldPath = [];
  for (const k of path) {
    if (k.startsWith('f:')) {
      if (!isObj(cur) || !(k.slice(2) in cur)) return undefined;
      cur = cur[k.slice(2)];
    } else {
      if (!Array.isArray(cur)) return undefined;
      const shape = shapes(at, cur);
      const list: Json[] = cur;
      const i = list.findIndex((el, n) => elementKey(shape, el, n) === k);
      if (i < 0) return undefined;
      cur = list[i];
    }
    at.push(k);
  }
  return cur;
}

/**
 * The part of an object a set of paths covers: each path's value, with the objects and list elements above it (a
 * keyed element with its key fields). A manager's fields as an object, to show them in another version.
 */
export function pick(obj: Json, set: PathSet, shapes: ListShapes = builtinListShapes): JsonObject {
  const out: JsonObject = {};
  for (const path of set) {
    if (valueAt(obj, path, shapes) === undefined) continue;
    // the path was found: every step above its end is an object (a field) or a list (an element), in the copy too
    let src: Json = obj;
    let dst: Json = out;
    for (let i = 0; i < path.length; i++) {
      const k = path[i];
      const last = i === path.length - 1;
      if (k.startsWith('f:')) {
        const name = k.slice(2);
        const from = record(src) ?? {};
        const into = record(dst) ?? {};
        const v = from[name];
        if (last) into[name] = structuredClone(v);
        else into[name] ??= Array.isArray(v) ? [] : {};
        src = v;
        dst = into[name];
        continue;
      }
      const from = list(src);
      const into: Json[] = Array.isArray(dst) ? dst : [];
      const shape = shapes(path.slice(0, i), from);
      const el = from.find((x, n) => elementKey(shape, x, n) === k);
      let mine = into.find((x, n) => elementKey(shape, x, n) === k);
      if (mine === undefined) {
        mine =
          shape.type === 'map' && isObj(el)
            ? Object.fromEntries(shape.keys.filter((f) => f in el).map((f) => [f, structuredClone(el[f])]))
            : structuredClone(el);
        into.push(mine);
      }
      src = el;
      dst = mine;
    }
  }
  return out;
}

/** Removes the value at a path; an object left empty by it goes too (up to, not including, the root). */
function removeAt(obj: Json, path: FieldPath, shapes: ListShapes): void {
  // chain[i] is the value at path[0..i)
  const chain: Json[] = [obj];
  for (let i = 0; i < path.length; i++) {
    const v = valueAt(chain[i], [path[i]], (q, items) => shapes([...path.slice(0, i), ...q], items));
    if (v === undefined) return;
    chain.push(v);
  }
  for (let n = path.length - 1; n >= 0; n--) {
    const container = chain[n];
    const key = path[n];
    if (key.startsWith('f:')) {
      const fields = record(container);
      if (fields) delete fields[key.slice(2)];
    } else if (Array.isArray(container)) {
      const shape = shapes(path.slice(0, n), container);
      const i = container.findIndex((el, j) => elementKey(shape, el, j) === key);
      if (i >= 0) container.splice(i, 1);
    }
    if (n === 0 || !(isObj(container) && Object.keys(container).length === 0)) break;
  }
}

/**
 * Calls `visit` with each top-level field ownership tracks (within `only`) and its path: not `apiVersion` or `kind`,
 * and of `metadata` only the given fields.
 */
function forEachTracked(
  o: KubeObject,
  only: Scope,
  metadataFields: string[],
  visit: (v: Json, path: FieldPath) => void,
): void {
  if (!isObj(o)) return;
  for (const [k, v] of Object.entries(o)) {
    if (k === 'apiVersion' || k === 'kind' || k.startsWith('$')) continue;
    if (only === 'status' && k !== 'status') continue;
    if (only === 'no-status' && k === 'status') continue;
    if (k !== 'metadata') visit(v, [`f:${k}`]);
    else if (isObj(v))
      for (const m of metadataFields)
        if (m in v && v[m] !== null && v[m] !== undefined) visit(v[m], ['f:metadata', `f:${m}`]);
  }
}

/**
 * The paths of the non-empty objects an object holds (not the root, not `metadata` itself): the maps an Update
 * that adds them owns as such (`".": {}`).
 */
function objectsOf(o: KubeObject, shapes: ListShapes, only: Scope): FieldPath[] {
  const out: FieldPath[] = [];
  const walk = (v: Json, path: FieldPath) => {
    if (isObj(v)) {
      const keys = Object.keys(v).filter((k) => !k.startsWith('$'));
      if (keys.length && path.length) out.push(path);
      for (const k of keys) walk(v[k], [...path, `f:${k}`]);
    } else if (Array.isArray(v)) {
      const shape = shapes(path, v);
      if (shape.type === 'map')
        v.forEach(
          (el, i) =>
            isObj(el) && Object.keys(el).forEach((k) => walk(el[k], [...path, elementKey(shape, el, i), `f:${k}`])),
        );
    }
  };
  forEachTracked(o, only, ['labels', 'annotations'], walk);
  return out;
}

/**
 * Fields of the built-in kinds that are Go structs (not pointers, not maps): the zero object kube compares a create
 * with already has them, so an Update never owns them as such. Custom resources have none (they are unstructured).
 */
const BUILTIN_STRUCTS = new Set(['f:spec', 'f:status', 'f:template', 'f:strategy', 'f:metadata', 'f:resources']);

/** Whether the object at a path is a Go struct of a built-in kind (see {@link BUILTIN_STRUCTS}). */
export const builtinStructs = (path: FieldPath): boolean => BUILTIN_STRUCTS.has(path[path.length - 1] ?? '');

/**
 * The paths an object sets: every leaf (scalar, atomic list, empty object) and every element of a keyed or set
 * list. `apiVersion`, `kind` and `metadata` (but for labels, annotations, finalizers and ownerReferences) are never
 * tracked.
 */
export function fieldsOf(
  o: KubeObject,
  shapes: ListShapes = builtinListShapes,
  only?: 'status' | 'no-status',
): PathSet {
  const out = new PathSet();
  const walk = (v: Json, path: FieldPath) => {
    if (isObj(v)) {
      const keys = Object.keys(v).filter((k) => !k.startsWith('$'));
      if (!keys.length && path.length) out.add(path);
      for (const k of keys) walk(v[k], [...path, `f:${k}`]);
      return;
    }
    if (Array.isArray(v)) {
      const shape = shapes(path, v);
      if (shape.type === 'atomic') out.add(path);
      else
        v.forEach((el, i) => {
          const p = [...path, elementKey(shape, el, i)];
          out.add(p);
          if (shape.type === 'map' && isObj(el)) for (const k of Object.keys(el)) walk(el[k], [...p, `f:${k}`]);
        });
      return;
    }
    out.add(path);
  };
  forEachTracked(o, only, ['labels', 'annotations', 'finalizers', 'ownerReferences'], walk);
  return out;
}

// in any key order: a stored object's keys are in kube's encoding order, an applied one's as its writer wrote them
const same = (a: Json, b: Json) => isDeepStrictEqual(a, b);
const isElement = (p: FieldPath) => /^[kvi]:/.test(p[p.length - 1] ?? '');

/** Whether the value at `p` differs between two objects (a list element: whether it is present in both). */
function differs(a: Json, b: Json, p: FieldPath, shapes: ListShapes): boolean {
  const x = valueAt(a, p, shapes);
  const y = valueAt(b, p, shapes);
  if (isElement(p)) return (x === undefined) !== (y === undefined);
  return !same(x, y);
}

/** The SMD text of a path, as conflict messages print it: `.spec.containers[name="c"].image`. */
export function pathText(p: FieldPath): string {
  return p
    .map((k) => {
      if (k.startsWith('f:')) return `.${k.slice(2)}`;
      if (k.startsWith('i:')) return `[${k.slice(2)}]`;
      if (k.startsWith('v:')) return `[=${k.slice(2)}]`;
      const key = JSON.parse(k.slice(2)) as Record<string, Json>;
      return `[${Object.keys(key)
        .sort()
        .map((n) => `${n}=${JSON.stringify(key[n])}`)
        .join(',')}]`;
    })
    .join('');
}

/** The entries of an object's `metadata.managedFields` that are well-formed. */
export function entriesOf(o: KubeObject | undefined): ManagedFieldsEntry[] {
  return entriesIn(o?.metadata?.managedFields);
}

/** The well-formed entries of a `metadata.managedFields` value as a request sent it (any other value: none). */
export function entriesIn(mf: unknown): ManagedFieldsEntry[] {
  if (!Array.isArray(mf)) return [];
  return mf.filter(
    (e) => isObj(e) && (e.operation === 'Apply' || e.operation === 'Update') && typeof e.manager === 'string',
  ) as ManagedFieldsEntry[];
}

/** kube's order: Apply before Update, then by time, manager, apiVersion, subresource. */
function sortEntries(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  const cmp = (a?: string, b?: string) => ((a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0);
  return [...entries].sort(
    (a, b) =>
      (a.operation === b.operation ? 0 : a.operation === 'Apply' ? -1 : 1) ||
      cmp(a.time, b.time) ||
      cmp(a.manager, b.manager) ||
      cmp(a.apiVersion, b.apiVersion) ||
      cmp(a.subresource, b.subresource),
  );
}

/** At most this many Update entries are kept; the oldest are merged per apiVersion into `ancient-changes`. */
const MAX_UPDATE_ENTRIES = 10;

function capUpdates(entries: ManagedFieldsEntry[]): ManagedFieldsEntry[] {
  const updates = entries.filter((e) => e.operation === 'Update');
  if (updates.length <= MAX_UPDATE_ENTRIES) return entries;
  const oldest = sortEntries(updates).slice(0, updates.length - MAX_UPDATE_ENTRIES + 1);
  const merged = new Map<string, ManagedFieldsEntry>();
  for (const e of oldest) {
    const m = merged.get(e.apiVersion);
    const set = PathSet.fromFieldsV1(e.fieldsV1);
    if (m) for (const p of PathSet.fromFieldsV1(m.fieldsV1)) set.add(p);
    merged.set(e.apiVersion, {
      ...e,
      manager: 'ancient-changes',
      time: m && m.time > e.time ? m.time : e.time,
      fieldsV1: set.toFieldsV1(),
    });
  }
  return [...entries.filter((e) => !oldest.includes(e)), ...merged.values()];
}

/** Working state: the entries with their parsed sets. */
interface Owned {
  entry: ManagedFieldsEntry;
  set: PathSet;
}

function finish(owned: Owned[]): ManagedFieldsEntry[] {
  const out = owned.filter((o) => o.set.size > 0).map((o) => ({ ...o.entry, fieldsV1: o.set.toFieldsV1() }));
  return sortEntries(capUpdates(out));
}

/** Which part of an object a write owns: the status subresource, or the main resource of a kind with one. */
export type Scope = 'status' | 'no-status' | undefined;

/**
 * The managed fields after a non-apply write: what it added or changed moves to `(manager, apiVersion, Update)`;
 * what it removed leaves every set. `time` is the write's; the entry keeps its old time when it took nothing.
 */
export function afterUpdate(p: {
  old: KubeObject | undefined;
  next: KubeObject;
  entries: ManagedFieldsEntry[];
  manager: string;
  apiVersion: string;
  subresource?: string;
  scope: Scope;
  time: string;
  shapes?: ListShapes;
  /** Which objects are structs rather than maps (default: the built-in kinds'); `() => false` for custom resources. */
  structs?: (path: FieldPath) => boolean;
  /**
   * The old and new object in another version the object is served in (a view's), or undefined for a version it
   * cannot be shown in: a manager's entry recorded in that version loses the fields the write changed as that version
   * shows them, as structured-merge-diff compares each manager's set in its own version.
   */
  otherVersion?: (apiVersion: string) => { old: KubeObject | undefined; next: KubeObject } | undefined;
}): ManagedFieldsEntry[] {
  const shapes = p.shapes ?? builtinListShapes;
  const structs = p.structs ?? builtinStructs;
  const now = fieldsOf(p.next, shapes, p.scope);
  const changed = new PathSet([...now].filter((path) => !p.old || differs(p.old, p.next, path, shapes)));
  // a map the write added is owned as such too (FieldsV1 `".": {}`), as kube compares against the old object
  for (const path of objectsOf(p.next, shapes, p.scope)) {
    if (!structs(path) && (!p.old || valueAt(p.old, path, shapes) === undefined)) changed.add(path);
  }
  const owned: Owned[] = p.entries.map((entry) => ({ entry, set: PathSet.fromFieldsV1(entry.fieldsV1) }));
  const mine = (e: ManagedFieldsEntry) =>
    e.operation === 'Update' &&
    e.manager === p.manager &&
    e.apiVersion === p.apiVersion &&
    (e.subresource ?? '') === (p.subresource ?? '');
  let self = owned.find((o) => mine(o.entry));
  const changedIn = new Map<string, { changed: PathSet; next: KubeObject } | undefined>();
  for (const o of owned) {
    if (o === self) continue;
    let view: { changed: PathSet; next: KubeObject } | undefined;
    if (o.entry.apiVersion !== p.apiVersion && p.otherVersion) {
      if (!changedIn.has(o.entry.apiVersion)) {
        const other = p.otherVersion(o.entry.apiVersion);
        changedIn.set(
          o.entry.apiVersion,
          other && {
            next: other.next,
            changed: new PathSet(
              [...fieldsOf(other.next, shapes, p.scope)].filter(
                (path) => !other.old || differs(other.old, other.next, path, shapes),
              ),
            ),
          },
        );
      }
      view = changedIn.get(o.entry.apiVersion);
    }
    const [changedHere, nextHere] = view ? [view.changed, view.next] : [changed, p.next];
    for (const path of [...o.set])
      if (changedHere.has(path) || valueAt(nextHere, path, shapes) === undefined) o.set.delete(path);
  }
  if (self) for (const path of [...self.set]) if (valueAt(p.next, path, shapes) === undefined) self.set.delete(path);
  if (changed.size) {
    if (!self) {
      self = {
        entry: {
          manager: p.manager,
          operation: 'Update',
          apiVersion: p.apiVersion,
          time: p.time,
          fieldsType: 'FieldsV1',
          fieldsV1: {},
          ...(p.subresource ? { subresource: p.subresource } : {}),
        },
        set: new PathSet(),
      };
      owned.push(self);
    }
    self.entry = { ...self.entry, time: p.time };
    for (const path of changed) self.set.add(path);
  }
  return finish(owned);
}

/** One conflict of an apply: a path and the manager that owns it with another value. */
export interface FieldConflict {
  path: FieldPath;
  entry: ManagedFieldsEntry;
}

/** The conflict text of a manager: `"name"` for an applier, `"name" using <apiVersion>` for an updater. */
export function managerText(e: ManagedFieldsEntry): string {
  const sub = e.subresource ? ` with subresource ${JSON.stringify(e.subresource)}` : '';
  return e.operation === 'Apply'
    ? `${JSON.stringify(e.manager)}${sub}`
    : `${JSON.stringify(e.manager)}${sub} using ${e.apiVersion}`;
}

/** kube's message for a failed apply. */
export function conflictMessage(conflicts: FieldConflict[]): string {
  if (conflicts.length === 1)
    return `Apply failed with 1 conflict: conflict with ${managerText(conflicts[0].entry)}: ${pathText(conflicts[0].path)}`;
  const by = new Map<string, string[]>();
  for (const c of conflicts) {
    const m = managerText(c.entry);
    by.set(m, [...(by.get(m) ?? []), pathText(c.path)]);
  }
  const parts = [...by.keys()]
    .sort()
    .map((m) => [`conflicts with ${m}:`, ...by.get(m)!.map((p) => `- ${p}`)].join('\n'));
  return `Apply failed with ${conflicts.length} conflicts: ${parts.join('\n')}`;
}

/** An object of one version shown in another (`to`) and back (`from`): a view's conversions. */
export interface VersionConversion {
  to(o: KubeObject): KubeObject;
  from(o: KubeObject): KubeObject;
}

/** The value `f` returns, or undefined when it throws (a conversion of a malformed object). */
function attempt<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** What an apply computes: the paths to prune from the live object, the conflicts, and the managed fields after it. */
export interface ApplyPlan {
  conflicts: FieldConflict[];
  /** Paths the manager applied before and no longer applies, owned by no one else: remove them from the object. */
  prune: FieldPath[];
  /** The managed fields once the apply is done (with `force`, or when there are no conflicts). */
  entries: ManagedFieldsEntry[];
}

/**
 * Plans an apply of `config` by `manager` over `live` (undefined: the apply creates the object). The entries are
 * those of a forced apply: the caller fails with the conflicts unless the apply is forced.
 */
export function planApply(p: {
  live: KubeObject | undefined;
  config: KubeObject;
  entries: ManagedFieldsEntry[];
  manager: string;
  apiVersion: string;
  subresource?: string;
  scope: Scope;
  time: string;
  shapes?: ListShapes;
  /**
   * How an object in the apply's version shows in another version it is served in (a view's), and back; undefined
   * for a version it cannot be shown in. Another version's manager is checked for conflicts in its own version, as
   * structured-merge-diff compares each manager's set in its version; a previous apply in another version is read
   * in this one.
   */
  otherVersion?: (apiVersion: string) => VersionConversion | undefined;
}): ApplyPlan {
  const shapes = p.shapes ?? builtinListShapes;
  const applied = fieldsOf(p.config, shapes, p.scope);
  const owned: Owned[] = p.entries.map((entry) => ({ entry, set: PathSet.fromFieldsV1(entry.fieldsV1) }));
  const isSelf = (e: ManagedFieldsEntry) =>
    e.operation === 'Apply' && e.manager === p.manager && (e.subresource ?? '') === (p.subresource ?? '');
  const selfIndex = owned.findIndex((o) => isSelf(o.entry));
  const previous = selfIndex >= 0 ? owned.splice(selfIndex, 1)[0] : undefined;
  const convert = (apiVersion: string) =>
    apiVersion !== p.apiVersion && p.otherVersion ? p.otherVersion(apiVersion) : undefined;
  if (previous && p.live && previous.entry.apiVersion !== p.apiVersion) {
    // the manager's last apply, in its version's fields, as this version shows them (what is not set now goes)
    const c = convert(previous.entry.apiVersion);
    const shownThere = c && attempt(() => c.from(pick(c.to(p.live!), previous.set, shapes)));
    const present = fieldsOf(p.live, shapes, p.scope);
    previous.set = shownThere
      ? new PathSet([...fieldsOf(shownThere, shapes, p.scope)].filter((x) => present.has(x)))
      : new PathSet();
  }
  // each other version's view of the object before and after the merge (no pruning yet: kube compares that)
  const views = new Map<string, { live: KubeObject; merged: KubeObject; changed: PathSet } | undefined>();
  const viewIn = (apiVersion: string) => {
    if (!views.has(apiVersion)) {
      const c = convert(apiVersion);
      const v =
        c &&
        p.live &&
        attempt(() => {
          const live = c.to(p.live!);
          const merged = c.to(mergeApplied(structuredClone(p.live), p.config, shapes) as KubeObject);
          return {
            live,
            merged,
            changed: new PathSet(
              [...fieldsOf(merged, shapes, p.scope)].filter((x) => differs(live, merged, x, shapes)),
            ),
          };
        });
      views.set(apiVersion, v);
    }
    return views.get(apiVersion);
  };
  const conflicts: FieldConflict[] = [];
  if (p.live) {
    for (const o of owned) {
      const view = o.entry.apiVersion !== p.apiVersion ? viewIn(o.entry.apiVersion) : undefined;
      if (view) {
        for (const path of o.set) if (view.changed.has(path)) conflicts.push({ path, entry: o.entry });
        continue;
      }
      for (const path of applied)
        if (o.set.has(path) && differs(p.live, p.config, path, shapes)) conflicts.push({ path, entry: o.entry });
    }
  }
  // a forced apply takes the conflicting fields from their owners
  for (const c of conflicts) owned.find((o) => o.entry === c.entry)!.set.delete(c.path);
  // a field another version's manager owns stays: removing it would change what that manager owns there
  const ownedElsewhere = (path: FieldPath) =>
    owned.some((o) => {
      if (o.entry.apiVersion === p.apiVersion || !o.set.size) return false;
      const c = convert(o.entry.apiVersion);
      const view = viewIn(o.entry.apiVersion);
      if (!c || !view || !p.live) return false;
      const without: KubeObject = structuredClone(p.live);
      removeAt(without, path, shapes);
      const shown = attempt(() => c.to(without));
      return !shown || [...o.set].some((x) => differs(view.live, shown, x, shapes));
    });
  const prune: FieldPath[] = [];
  if (previous && p.live) {
    // what someone still owns stays, and so does everything above it (kube removes the previous set, then adds back
    // what any manager owns)
    const kept = [...applied, ...owned.flatMap((o) => [...o.set])];
    const above = (q: FieldPath, p: FieldPath) => q.length < p.length && q.every((k, i) => p[i] === k);
    for (const path of previous.set) {
      if (applied.has(path) || owned.some((o) => o.set.has(path))) continue;
      if (kept.some((k) => above(path, k))) continue;
      // an element that goes takes its fields with it: skip paths below another pruned path
      if (prune.some((q) => q.length < path.length && q.every((k, i) => path[i] === k))) continue;
      if (ownedElsewhere(path)) continue;
      prune.push(path);
    }
  }
  const sameSet =
    previous &&
    previous.entry.apiVersion === p.apiVersion &&
    previous.set.size === applied.size &&
    [...applied].every((x) => previous.set.has(x));
  const entry: ManagedFieldsEntry = {
    manager: p.manager,
    operation: 'Apply',
    apiVersion: p.apiVersion,
    time: sameSet && previous ? previous.entry.time : p.time,
    fieldsType: 'FieldsV1',
    fieldsV1: {},
    ...(p.subresource ? { subresource: p.subresource } : {}),
  };
  owned.push({ entry, set: applied });
  return { conflicts, prune: prune.sort((a, b) => b.length - a.length), entries: finish(owned) };
}

/** Removes the planned paths from an object (in place). */
export function prunePaths(obj: KubeObject, paths: FieldPath[], shapes: ListShapes = builtinListShapes): void {
  for (const p of paths) removeAt(obj, p, shapes);
}

/**
 * An applied configuration merged into the live object: objects field by field, keyed lists element by element (new
 * elements appended), sets as a union, atomic lists and scalars replaced; a null removes the field.
 */
export function mergeApplied(
  live: Json,
  config: Json,
  shapes: ListShapes = builtinListShapes,
  path: FieldPath = [],
): Json {
  if (isObj(config)) {
    const out: Record<string, Json> = isObj(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(config)) {
      if (v === undefined) continue;
      if (v === null) delete out[k];
      else out[k] = mergeApplied(out[k], v, shapes, [...path, `f:${k}`]);
    }
    return out;
  }
  if (Array.isArray(config)) {
    const shape = shapes(path, config);
    if (shape.type === 'atomic' || !Array.isArray(live)) return structuredClone(config);
    const out: Json[] = [...list(live)];
    config.forEach((el, i) => {
      const key = elementKey(shape, el, i);
      const j = out.findIndex((x, n) => elementKey(shape, x, n) === key);
      if (j < 0) out.push(structuredClone(el));
      else if (shape.type === 'map') out[j] = mergeApplied(out[j], el, shapes, [...path, key]);
    });
    return out;
  }
  return config;
}

/**
 * The patch formats kube-apiserver accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge
 * patch (the subset of directives and merge keys kubectl sends for `label`, `annotate`, `apply`, `edit`, `scale`).
 */
import { badRequest, ApiError } from './status.js';
import type { KubeObject } from './types.js';
import { list } from './json.js';

type Json = unknown;

const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386 JSON merge patch. */
export function jsonMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return patch;
  const out: Record<string, Json> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

/** Merge keys of list fields with `patchStrategy: merge` in the built-in types (by field name). */
const MERGE_KEYS: Record<string, string | ((items: Json[]) => string)> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  env: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  ownerReferences: 'uid',
  conditions: 'type',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
  ports: (items) => (items.some((i) => isObj(i) && 'containerPort' in i) ? 'containerPort' : 'port'),
};
/** Primitive lists merged as sets. */
const MERGE_PRIMITIVE = new Set(['finalizers']);

/** The merge key of a list field with `patchStrategy: merge` (undefined: the list is atomic). */
export function mergeKeyFor(field: string, items: Json[]): string | undefined {
  const k = MERGE_KEYS[field];
  return typeof k === 'function' ? k(items) : k;
}

/** Strategic merge patch (kubectl's two-way and three-way patches for built-in kinds). */
export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return patch;
  if (patch.$patch === 'replace') {
    const { $patch: _p, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, Json> = isObj(target) ? { ...target } : {};
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set<string>(patch.$retainKeys);
    for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[field]) && Array.isArray(v)) out[field] = out[field].filter((x: Json) => !v.includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
    } else if (Array.isArray(v)) {
      const merged = mergeList(k, out[k], v);
      // kube stores built-in objects typed, and their lists are `omitempty` (but `containers`): a list a
      // `$patch: delete` emptied is absent from the result, not `[]`
      if (merged.length === 0 && k !== 'containers' && v.some((p) => isObj(p) && p.$patch === 'delete')) delete out[k];
      else out[k] = merged;
    } else if (isObj(v)) {
      const merged = strategicMergePatch(out[k], v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else {
      out[k] = v;
    }
  }
  return out;
}

function mergeList(field: string, current: Json, patch: Json[]): Json[] {
  if (patch.some((p) => isObj(p) && p.$patch === 'replace')) {
    return patch.filter((p) => !(isObj(p) && p.$patch === 'replace')).map(stripDirectives);
  }
  const cur: Json[] = [...list(current)];
  if (MERGE_PRIMITIVE.has(field)) {
    for (const p of patch) if (!cur.includes(p)) cur.push(p);
    return cur;
  }
  const key = mergeKeyFor(field, [...cur, ...patch]);
  if (!key || !patch.every(isObj)) return patch.map(stripDirectives);
  for (const p of patch) {
    const idx = cur.findIndex((c) => isObj(c) && c[key] === p[key]);
    if (p.$patch === 'delete') {
      if (idx >= 0) cur.splice(idx, 1);
    } else if (idx >= 0) {
      cur[idx] = strategicMergePatch(cur[idx], p);
    } else {
      cur.push(stripDirectives(p));
    }
  }
  return cur;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObj(v)) return v;
  const out: Record<string, Json> = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw badRequest(`the json patch path ${JSON.stringify(path)} must start with '/'`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function getAt(doc: Json, parts: string[]): Json {
  let cur = doc;
  for (const p of parts) {
    if (Array.isArray(cur)) cur = cur[Number(p)];
    else if (isObj(cur)) cur = cur[p];
    else return undefined;
  }
  return cur;
}

function parentOf(doc: Json, parts: string[], op: string): { parent: Json[] | Record<string, Json>; key: string } {
  const parent = getAt(doc, parts.slice(0, -1));
  if (!Array.isArray(parent) && !isObj(parent)) {
    throw patchFailed(`jsonpatch ${op} operation does not apply: doc is missing path: "/${parts.join('/')}"`);
  }
  return { parent, key: parts[parts.length - 1] };
}

/**
 * A JSON patch that does not apply (a failed `test`, a missing path): kube-apiserver answers its generic 422 with
 * neither causes nor the patch library's own text; `detail` says why (what kube-apiserver shows when a webhook's
 * patch fails).
 */
function patchFailed(detail: string): ApiError {
  return Object.assign(new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request'), {
    detail,
  });
}

/** RFC 6902 JSON patch. */
export function jsonPatch(doc: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('a JSON patch must be an array of operations');
  let root = structuredClone(doc);
  for (const op of ops) {
    if (!isObj(op) || typeof op.op !== 'string' || typeof op.path !== 'string')
      throw badRequest('each JSON patch operation needs "op" and "path"');
    // checked above; the closures below see the strings, not the operation's fields
    const name: string = op.op;
    const path: string = op.path;
    const parts = pointer(path);
    const put = (value: Json, insert: boolean) => {
      if (parts.length === 0) {
        root = value;
        return;
      }
      const { parent, key } = parentOf(root, parts, name);
      if (Array.isArray(parent)) {
        const i = key === '-' ? parent.length : Number(key);
        if (!Number.isInteger(i) || i < 0 || i > parent.length)
          throw patchFailed(`jsonpatch ${name}: index ${key} out of range`);
        if (insert) parent.splice(i, 0, value);
        else parent[i] = value;
      } else {
        if (!insert && !(key in parent))
          throw patchFailed(`jsonpatch replace operation does not apply: doc is missing key: ${path}`);
        parent[key] = value;
      }
    };
    const remove = (): Json => {
      const { parent, key } = parentOf(root, parts, name);
      if (Array.isArray(parent)) {
        const i = Number(key);
        if (!Number.isInteger(i) || i < 0 || i >= parent.length)
          throw patchFailed(`jsonpatch remove operation does not apply: doc is missing path: ${path}`);
        return parent.splice(i, 1)[0];
      }
      if (!(key in parent))
        throw patchFailed(`jsonpatch remove operation does not apply: doc is missing path: ${path}`);
      const v = parent[key];
      delete parent[key];
      return v;
    };
    switch (op.op) {
      case 'add':
        put(structuredClone(op.value), true);
        break;
      case 'replace':
        put(structuredClone(op.value), false);
        break;
      case 'remove':
        remove();
        break;
      case 'test':
        if (JSON.stringify(getAt(root, parts)) !== JSON.stringify(op.value))
          throw patchFailed(`testing value ${op.path} failed: test failed`);
        break;
      case 'move':
      case 'copy': {
        if (typeof op.from !== 'string') throw badRequest(`jsonpatch ${op.op} needs "from"`);
        const fromParts = pointer(op.from);
        let v: Json;
        if (op.op === 'move') {
          const { parent, key } = parentOf(root, fromParts, op.op);
          if (Array.isArray(parent)) v = parent.splice(Number(key), 1)[0];
          else {
            v = parent[key];
            delete parent[key];
          }
        } else v = structuredClone(getAt(root, fromParts));
        put(v, true);
        break;
      }
      default:
        throw badRequest(`unknown JSON patch operation ${JSON.stringify(op.op)}`);
    }
  }
  return root;
}

/** The patch types of built-in resources, in the order kube-apiserver lists them when refusing another. */
export const BUILTIN_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
  'application/strategic-merge-patch+json',
];
/** The patch types of custom resources: no strategic merge patch (they have no patch strategies). */
export const CUSTOM_RESOURCE_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

/** 415 for a patch type the resource does not take, listing those it does. */
export function unsupportedPatchType(accepted: readonly string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

/** Applies a patch of the given content type to an object. */
export function applyPatch(contentType: string, current: KubeObject, patch: Json): Json {
  const ct = contentType.split(';')[0].trim();
  switch (ct) {
    case 'application/merge-patch+json':
      return jsonMergePatch(current, patch);
    case 'application/strategic-merge-patch+json':
      return strategicMergePatch(current, patch);
    case 'application/json-patch+json':
      return jsonPatch(current, patch);
    default:
      throw unsupportedPatchType(BUILTIN_PATCH_TYPES);
  }
}

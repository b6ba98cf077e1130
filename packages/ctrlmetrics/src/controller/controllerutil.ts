/**
 * controller-runtime's `controllerutil`: owner references, finalizers and create-or-update. The functions change
 * the object in memory; writing it is the caller's (`ctx.client.update(obj)` or a patch).
 *
 * Scope checks (a cluster-scoped object may not have a namespaced owner; owners are in the object's namespace)
 * read `metadata.namespace` instead of asking a REST mapper: an object without a namespace counts as
 * cluster-scoped.
 */
import type { ObjectLike, OwnerReference } from '../kube/objects.js';
import type { ObjectClient } from '../kube/object-client.js';
import { isNotFound } from '../kube/errors.js';
import { semanticEqual } from '../kube/equality.js';
import { copyJson } from '../util/json-copy.js';
import { CtrlmetricsError } from '../util/errors.js';

/** The object already has a controller owner other than the one being set (controller-runtime's `AlreadyOwnedError`). */
export class AlreadyOwnedError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_ALREADY_OWNED';
  override name = 'AlreadyOwnedError';
  constructor(
    readonly object: ObjectLike,
    readonly owner: OwnerReference,
  ) {
    const md = object.metadata ?? {};
    super(
      `Object ${md.namespace ? `${md.namespace}/` : ''}${md.name ?? ''} is already owned by another ${owner.kind} controller ${owner.name}`,
    );
  }
}

function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

function sameOwner(
  a: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name'>,
  b: Pick<OwnerReference, 'apiVersion' | 'kind' | 'name'>,
): boolean {
  // as controller-runtime: the group, not the version, identifies the owner's type
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

/** The reference to `owner`, checked: it needs apiVersion, kind, name and uid (an object read from the API has them). */
function referenceTo(owner: ObjectLike, object: ObjectLike): OwnerReference {
  const md = owner.metadata ?? {};
  if (!owner.apiVersion || !owner.kind || !md.name || !md.uid) {
    throw new TypeError(
      `the owner needs apiVersion, kind, metadata.name and metadata.uid (use the object as read from the API, not a new literal)`,
    );
  }
  const ownerNs = md.namespace;
  const objectNs = object.metadata?.namespace;
  if (ownerNs) {
    if (!objectNs)
      throw new Error(`cluster-scoped resource must not have a namespace-scoped owner, owner's namespace ${ownerNs}`);
    if (ownerNs !== objectNs)
      throw new Error(
        `cross-namespace owner references are disallowed, owner's namespace ${ownerNs}, obj's namespace ${objectNs}`,
      );
  }
  return { apiVersion: owner.apiVersion, kind: owner.kind, name: md.name, uid: md.uid };
}

function upsert(object: ObjectLike, ref: OwnerReference): void {
  const md = (object.metadata ??= {});
  const refs = (md.ownerReferences ??= []);
  const i = refs.findIndex((r) => sameOwner(r, ref));
  if (i >= 0) refs[i] = ref;
  else refs.push(ref);
}

/**
 * Makes `owner` the controller of `object` (`controller: true`, `blockOwnerDeletion: true`): events of `object`
 * then enqueue `owner` (a watch with `enqueue: { ownerKind }`), and the garbage collector deletes `object` with it.
 * Throws {@link AlreadyOwnedError} when another object already controls it.
 */
export function setControllerReference(owner: ObjectLike, object: ObjectLike): void {
  const ref = { ...referenceTo(owner, object), blockOwnerDeletion: true, controller: true };
  const existing = object.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (existing && !sameOwner(existing, ref)) throw new AlreadyOwnedError(object, existing);
  upsert(object, ref);
}

/** Adds (or updates) a non-controlling owner reference to `owner`. */
export function setOwnerReference(owner: ObjectLike, object: ObjectLike): void {
  upsert(object, referenceTo(owner, object));
}

/** Removes the owner reference to `owner`; false when there was none. */
export function removeOwnerReference(owner: ObjectLike, object: ObjectLike): boolean {
  const refs = object.metadata?.ownerReferences;
  if (!refs || !owner.apiVersion || !owner.kind || !owner.metadata?.name) return false;
  const target = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name };
  const kept = refs.filter((r) => !sameOwner(r, target));
  if (kept.length === refs.length) return false;
  object.metadata!.ownerReferences = kept;
  return true;
}

/** True when `object` has an owner reference to `owner`. */
export function hasOwnerReference(owner: ObjectLike, object: ObjectLike): boolean {
  if (!owner.apiVersion || !owner.kind || !owner.metadata?.name) return false;
  const target = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name };
  return (object.metadata?.ownerReferences ?? []).some((r) => sameOwner(r, target));
}

/** True when `object` has an owner with `controller: true` (any owner, or `owner` when given). */
export function hasControllerReference(object: ObjectLike, owner?: ObjectLike): boolean {
  const ctl = object.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (!ctl) return false;
  if (!owner) return true;
  return (
    !!owner.apiVersion &&
    !!owner.kind &&
    !!owner.metadata?.name &&
    sameOwner(ctl, { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name })
  );
}

/** True when `finalizer` is in `metadata.finalizers`. */
export function containsFinalizer(object: ObjectLike, finalizer: string): boolean {
  return object.metadata?.finalizers?.includes(finalizer) ?? false;
}

/** Adds `finalizer` unless present; true when the object changed (write it then). */
export function addFinalizer(object: ObjectLike, finalizer: string): boolean {
  if (containsFinalizer(object, finalizer)) return false;
  const md = (object.metadata ??= {});
  md.finalizers = [...(md.finalizers ?? []), finalizer];
  return true;
}

/** Removes every `finalizer` entry; true when the object changed (write it then). */
export function removeFinalizer(object: ObjectLike, finalizer: string): boolean {
  const list = object.metadata?.finalizers;
  if (!list?.includes(finalizer)) return false;
  object.metadata!.finalizers = list.filter((f) => f !== finalizer);
  return true;
}

/** True once a DELETE has marked the object (`metadata.deletionTimestamp` set): run the finalizer's clean-up. */
export function isBeingDeleted(object: ObjectLike): boolean {
  return !!object.metadata?.deletionTimestamp;
}

/**
 * What {@link createOrUpdate} or {@link createOrPatch} did (controller-runtime's `OperationResult` values):
 * `updatedStatus` — the object and its status were patched; `updatedStatusOnly` — only the status.
 */
export type OperationResult = 'created' | 'updated' | 'updatedStatus' | 'updatedStatusOnly' | 'unchanged';

/**
 * controller-runtime's `CreateOrUpdate`: reads the object `obj` names; when it is missing, `mutate`s `obj` and
 * creates it, else `mutate`s what was read and updates it when that changed anything. `mutate` must not change the
 * name or namespace. Answers what it did and the object as the API answered (or as read, when unchanged).
 */
export async function createOrUpdate<T extends ObjectLike>(
  client: ObjectClient,
  obj: T,
  mutate: (obj: T) => void | Promise<void>,
): Promise<{ operation: OperationResult; object: T }> {
  const m = await readAndMutate(client, obj, mutate, 'createOrUpdate');
  if ('created' in m) return { operation: 'created', object: m.created };
  // semantically, as controller-runtime: a server answers map keys sorted, a mutate function assigns them in its order
  if (semanticEqual(m.after, m.before)) return { operation: 'unchanged', object: m.after };
  return { operation: 'updated', object: await client.update(m.after) };
}

/**
 * What createOrUpdate and createOrPatch share: read the object `obj` names; missing, `mutate` a copy of `obj` and
 * create it; else `mutate` what was read (with its type, which a read may lack) and answer it with a copy from
 * before. `mutate` must keep the name and namespace.
 */
async function readAndMutate<T extends ObjectLike>(
  client: ObjectClient,
  obj: T,
  mutate: (obj: T) => void | Promise<void>,
  what: string,
): Promise<{ created: T } | { before: T; after: T }> {
  const name = obj.metadata?.name;
  if (!obj.apiVersion || !obj.kind || !name)
    throw new TypeError(`${what} needs an object with apiVersion, kind and metadata.name`);
  const key = obj.metadata?.namespace ? { namespace: obj.metadata.namespace, name } : { name };
  let current: T | undefined;
  try {
    current = await client.get<T>({ apiVersion: obj.apiVersion, kind: obj.kind }, key);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const sameKey = (o: T) =>
    o.metadata?.name === key.name && (o.metadata?.namespace ?? undefined) === (key.namespace ?? undefined);
  if (!current) {
    const fresh = copyJson(obj);
    await mutate(fresh);
    if (!sameKey(fresh)) throw new Error('MutateFn cannot mutate object name and/or object namespace');
    return { created: await client.create(fresh) };
  }
  const after = { ...current, apiVersion: obj.apiVersion, kind: obj.kind } as T;
  const before = copyJson(after);
  await mutate(after);
  if (!sameKey(after)) throw new Error('MutateFn cannot mutate object name and/or object namespace');
  return { before, after };
}

/**
 * controller-runtime's `CreateOrPatch`: as {@link createOrUpdate}, but what `mutate` changed is sent as JSON merge
 * patches — one for the object, one for its `status` subresource — instead of an update of the whole object, so a
 * concurrent change to fields `mutate` did not touch is kept rather than refused with 409 Conflict. Answers
 * `created`, `updated` (the object), `updatedStatusOnly`, `updatedStatus` (both) or `unchanged`, and the object as
 * the API last answered (or as read, when unchanged). The status is patched only through its subresource: a kind
 * without one keeps its status as the API has it.
 */
export async function createOrPatch<T extends ObjectLike>(
  client: ObjectClient,
  obj: T,
  mutate: (obj: T) => void | Promise<void>,
): Promise<{ operation: OperationResult; object: T }> {
  const m = await readAndMutate(client, obj, mutate, 'createOrPatch');
  if ('created' in m) return { operation: 'created', object: m.created };
  const existing = m.after;
  const before = m.before as T & { status?: unknown };
  const after = existing as T & { status?: unknown };
  const { status: statusBefore, ...objectBefore } = before;
  const { status: statusAfter, ...objectAfter } = after;
  let object: T = existing;
  let patchedObject = false;
  if (!semanticEqual(objectAfter, objectBefore)) {
    object = await client.patch(existing, mergePatch(objectBefore, objectAfter));
    patchedObject = true;
  }
  if (!semanticEqual(statusAfter, statusBefore)) {
    object = await client.status().patch(existing, mergePatch({ status: statusBefore }, { status: statusAfter }));
    return { operation: patchedObject ? 'updatedStatus' : 'updatedStatusOnly', object };
  }
  return { operation: patchedObject ? 'updated' : 'unchanged', object };
}

/**
 * The JSON merge patch (RFC 7386) that turns `from` into `to`: changed fields with their new values, removed ones
 * as null, objects recursively, arrays whole. Written out here: it is the RFC's few lines, and the npm packages for
 * it are unmaintained.
 */
export function mergePatch(from: unknown, to: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(from) || !isObject(to)) return to === undefined ? null : to;
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(from)) if (!(k in to) || to[k] === undefined) if (from[k] !== undefined) patch[k] = null;
  for (const k of Object.keys(to)) {
    if (to[k] === undefined) continue;
    if (!(k in from) || from[k] === undefined) patch[k] = to[k];
    else if (!semanticEqual(from[k], to[k]))
      patch[k] = isObject(from[k]) && isObject(to[k]) ? mergePatch(from[k], to[k]) : to[k];
  }
  return patch;
}

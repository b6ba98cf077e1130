/**
 * Generic object storage semantics: create/get/list/update/patch/delete with the metadata Kubernetes maintains
 * (uid, resourceVersion, creationTimestamp, generation), name and namespace checks, and the per-kind defaults and
 * side effects the authority needs (namespaces, services, secrets, CRDs).
 */
import { randomUUID, randomInt } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { kubeTime } from 'ctrlmetrics/internal';
import type { Store } from './store.js';
import { apiVersionOf, typeKey, type ResourceRegistry } from './resources.js';
import type { KubeObject, ObjectMeta, ResourceType, StoredObject } from './types.js';
import { isRecord, record } from './json.js';
import { storageVersionOf } from './cr-conversion.js';
import { hasFinalizers, NamespaceController } from './namespace-controller.js';
import { alreadyExists, badRequest, conflict, invalid, notFound, ApiError, type FieldCause } from './status.js';
import { validateFinalizers, validateLabels, validateName } from './validation.js';
import {
  afterUpdate,
  builtinListShapes,
  conflictMessage,
  entriesIn,
  entriesOf,
  fieldsOf,
  managerText,
  mergeApplied,
  pathText,
  planApply,
  prunePaths,
  valueAt,
  type FieldConflict,
  type ListShapes,
  type ManagedFieldsEntry,
  type Scope,
  type VersionConversion,
} from './managed-fields.js';
import {
  defaultCustomResource,
  pruneCustomResource,
  readCustomResource,
  schemaListShapes,
  validateCustomResource,
} from './crd-schema.js';
import { checkMetadataShape } from './object-checks.js';
import { defaultBuiltin } from './builtin-defaults.js';
import { validateBuiltin } from './builtin-validation.js';
import { pruneUnknownFields, unknownFields } from './fields.js';
import { applyPatch, CUSTOM_RESOURCE_PATCH_TYPES, unsupportedPatchType } from './patch.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { ListPages, type PageRequest } from './pagination.js';
import { kubeEncoded } from './encoding.js';
import { aggregateClusterRoles, strategyFor, type StrategyContext } from './strategies/index.js';

/** Options common to writes. */
export interface WriteOptions {
  dryRun?: boolean;
  /** Admission of the final object (e.g. RBAC escalation checks for the requesting user); throws to reject. */
  admit?: (next: KubeObject, old: KubeObject | undefined) => void;
  /** The `fieldManager` query parameter (server-side apply records its fields under it). */
  fieldManager?: string;
  /**
   * Who writes, for field ownership: the `fieldManager` parameter, else the client's User-Agent up to its first `/`.
   * Writes without one (the authority's own) leave managedFields as they are.
   */
  manager?: string;
  /** Server-side apply: take the fields other managers own (`--force-conflicts`). */
  force?: boolean;
  /** Internal: the managedFields to store with this write (server-side apply). */
  managedFields?: ManagedFieldsEntry[];
  /** Internal: the view a write came through (its field ownership is recorded in the view's version and shape). */
  requestType?: ResourceType;
  /** The `fieldValidation` parameter for custom resources' unknown fields: `Strict`, `Warn` (the default) or `Ignore`. */
  fieldValidation?: string | null;
  /** Receives the `Warning` header values of the write (unknown fields under `Warn`). */
  warnings?: string[];
  /**
   * Internal, for admission webhooks: stop where kube-apiserver runs mutating admission and answer the object as
   * it stands there (decoded and defaulted, a patch applied; not yet validated, no name generated).
   */
  untilAdmission?: boolean;
  /**
   * Internal, for admission webhooks: the object as mutating admission left it, taken in place of the request's
   * object at that point; a write whose stored object has changed since fails with a conflict (see
   * {@link isStaleAdmission}).
   */
  admitted?: KubeObject;
  /** Internal: the name, uid and creation time a create keeps (those validating admission saw). */
  identity?: { name: string; uid: string; creationTimestamp: string };
  /**
   * Internal, for custom resources converted by webhook: the stored object as the request's version sees it (its
   * conversion), taken in place of the stored one by an update, patch or apply.
   */
  viewOfOld?: StoredObject;
}

const STALE = Symbol('stale admission');

/**
 * Go's `omitempty` on ObjectMeta's maps and lists: a built-in object decoded into its type and encoded again has
 * no empty `labels`, `annotations`, `finalizers` or `ownerReferences` (what its webhooks and readers then see).
 */
/** An object's metadata, made an empty one first when it has none (a request body may come without). */
function metaOf(o: KubeObject): ObjectMeta {
  return (o.metadata ??= {});
}

function dropEmptyMeta(t: ResourceType, o: KubeObject): void {
  const m = o.metadata;
  if (t.crd || !m || typeof m !== 'object') return;
  for (const k of ['labels', 'annotations', 'finalizers', 'ownerReferences'] as const) {
    const v = m[k];
    if (
      v === null ||
      (Array.isArray(v) && v.length === 0) ||
      (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0)
    )
      delete m[k];
  }
}

/** Whether an error is the conflict of an admitted write whose object changed while webhooks were called. */
export function isStaleAdmission(err: unknown): boolean {
  return err instanceof ApiError && (err as ApiError & { [STALE]?: boolean })[STALE] === true;
}

/** How a write's object arrived, which decides how a strict unknown field is reported. */
type Via = 'body' | 'patch' | 'apply';

/** How a stored object shows in one version it is served in, and how that version's object is stored. */
interface Shown {
  read: (stored: KubeObject) => KubeObject;
  write: (o: KubeObject) => KubeObject;
}

/** Field ownership's list shapes for a type: a custom resource's from its schema (metadata as built-in). */
function shapesFor(t: ResourceType): ListShapes {
  if (!t.schema) return builtinListShapes;
  const bySchema = schemaListShapes(t.schema);
  return (path, items) => (path[0] === 'f:metadata' ? builtinListShapes(path, items) : bySchema(path, items));
}

/**
 * kube's answer to a merge or JSON patch whose result has unknown fields under `fieldValidation=Strict`: a 422 with
 * no kind, on the field `patch`, whose value is the patched object's JSON (Go writes it with sorted keys).
 */
function strictPatchError(patchedJson: string, unknown: string[]): ApiError {
  const message = `Invalid value: ${JSON.stringify(patchedJson)}: strict decoding error: ${unknown.join(', ')}`;
  return new ApiError(422, 'Invalid', ` "" is invalid: patch: ${message}`, {
    causes: [{ reason: 'FieldValueInvalid', message, field: 'patch' }],
  });
}

function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/** kubectl's client-side apply annotation (an apply by `kubectl` may take the fields it set: kube's upgrade path). */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Which fields a write on the main resource or a subresource owns. */
function scopeOf(t: ResourceType, subresource: string | undefined): Scope {
  if (subresource === 'status') return 'status';
  return t.statusSubresource ? 'no-status' : undefined;
}

const NS_KEY = 'namespaces';
const CRD_KEY = 'customresourcedefinitions.apiextensions.k8s.io';
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

export { kubeTime };

function clone<T>(v: T): T {
  return structuredClone(v);
}

/**
 * The content whose change bumps `metadata.generation`: everything but metadata, and but status unless a custom
 * resource has no status subresource (then its status changes count too, as in kube).
 */
function specOf(o: KubeObject, withStatus = false): KubeObject {
  const { metadata: _m, status, apiVersion: _a, kind: _k, ...rest } = o;
  return withStatus ? { ...rest, status } : rest;
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  // apiVersion aside: an object written back unchanged in another version of its CRD is the same object
  const strip = (o: KubeObject) => ({
    ...o,
    apiVersion: undefined,
    metadata: { ...o.metadata, resourceVersion: undefined, managedFields: undefined },
  });
  // in any key order: the stored object is in kube's encoding order, a new one as its writer wrote it
  return isDeepStrictEqual(strip(a), strip(b));
}

/** The 409 of an apply that would change fields other managers own. */
function applyConflict(conflicts: FieldConflict[]): ApiError {
  return new ApiError(409, 'Conflict', conflictMessage(conflicts), {
    causes: conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with ${managerText(c.entry)}`,
      field: pathText(c.path),
    })),
  });
}

/** The object operations of the API, independent of HTTP. */
export class ObjectService {
  /** A deterministic-enough pool for Service cluster IPs (10.96.0.0/12). */
  private nextIP = 10;
  private readonly pages: ListPages;
  /** What the resources' strategies may use. */
  private readonly strategyContext: StrategyContext;
  /** kube's namespace controller: purges the namespaces a delete turned Terminating. */
  private readonly namespaces: NamespaceController;

  constructor(
    private readonly store: Store,
    private readonly registry: ResourceRegistry,
    opts: {
      caPem: string;
      /** Delay before a terminating namespace is purged (default 1000 ms). */
      namespacePurgeDelayMs?: number;
      /** Issues the token of a `kubernetes.io/service-account-token` Secret (kube's token controller). */
      issueLegacyToken?: (p: { namespace: string; name: string; uid: string; secretName: string }) => string;
      /** Clock in ms for expiring paged lists (default `Date.now`). */
      now?: () => number;
    },
  ) {
    this.pages = new ListPages({ now: opts.now });
    this.strategyContext = {
      store,
      registry,
      caPem: opts.caPem,
      ...(opts.issueLegacyToken ? { issueLegacyToken: opts.issueLegacyToken } : {}),
      allocateIP: () => this.allocateIP(),
      ensure: (resource, o) => this.ensure(resource, o),
      purgeNamespace: (name, uid) => this.namespaces.schedule(name, uid),
    };
    this.namespaces = new NamespaceController({
      store,
      registry,
      delayMs: opts.namespacePurgeDelayMs ?? 1000,
      markDeleting: (rt, o) => this.markDeleting(rt, o, false),
    });
    for (const s of store.list('services')) {
      const ip = String(record(s.spec)?.clusterIP ?? '');
      const m = /^10\.96\.(\d+)\.(\d+)$/.exec(ip);
      if (m) this.nextIP = Math.max(this.nextIP, Number(m[1]) * 256 + Number(m[2]) + 1);
    }
    // kube's aggregation controller, over what the store holds at start
    aggregateClusterRoles(store);
  }

  /** A stored object in a type's shape: a view's conversion, a custom resource's version. */
  private read(t: ResourceType, o: KubeObject): KubeObject {
    return t.view ? t.view.read(o) : readCustomResource(o, t.schema);
  }

  /**
   * The versions a stored built-in object is served in, each with how it shows there: the storing type's own (as it
   * is) and its views' (an events.k8s.io/v1 Event of a core Event, an autoscaling/v1 HPA of a v2 one).
   */
  private versionsOfStored(t: ResourceType): Map<string, Shown> {
    let shown = this.shownIn.get(t);
    if (!shown) {
      const same = (o: KubeObject) => o;
      shown = new Map([[apiVersionOf(t), { read: same, write: same }]]);
      for (const v of this.registry.all()) {
        const s = v.view?.storage;
        if (s && s.group === t.group && s.version === t.version && s.resource === t.resource)
          shown.set(apiVersionOf(v), { read: v.view!.read, write: v.view!.write });
      }
      this.shownIn.set(t, shown);
    }
    return shown;
  }

  private readonly shownIn = new WeakMap<ResourceType, Map<string, Shown>>();

  /**
   * How an object in a built-in type's shape shows in each other version its objects are served in (its views', or
   * the storing type's for a view), and back; undefined for a custom resource.
   */
  private conversionsFrom(t: ResourceType): ((apiVersion: string) => VersionConversion | undefined) | undefined {
    if (t.crd) return undefined;
    const shown = this.versionsOfStored(t.view ? this.storageOf(t) : t);
    const here = shown.get(apiVersionOf(t));
    if (!here) return undefined;
    return (apiVersion) => {
      const there = shown.get(apiVersion);
      return there && { to: (o) => there.read(here.write(o)), from: (o) => here.read(there.write(o)) };
    };
  }

  /** The type that stores a view's objects. */
  private storageOf(t: ResourceType): ResourceType {
    const s = t.view!.storage;
    return this.registry.get(s.group, s.version, s.resource)!;
  }

  /** The object as served in a given version. */
  present(t: ResourceType, o: KubeObject): KubeObject {
    const out = clone(this.read(t, o));
    out.apiVersion = apiVersionOf(t);
    out.kind = t.kind;
    return out;
  }

  /** As {@link ObjectService.present}, without the deep copy: for serialising at once, never for keeping or changing. */
  presentShallow(t: ResourceType, o: KubeObject): KubeObject {
    const out = { ...this.read(t, o) };
    out.apiVersion = apiVersionOf(t);
    out.kind = t.kind;
    return out;
  }

  /**
   * An item of a list answer: as {@link presentShallow}, but a built-in kind's items without `apiVersion` and
   * `kind`, as kube-apiserver encodes them (custom resources' items keep theirs).
   */
  presentListItem(t: ResourceType, o: KubeObject): KubeObject {
    const out = this.presentShallow(t, o);
    if (!t.crd) {
      delete out.apiVersion;
      delete out.kind;
    }
    return out;
  }

  private namespaceOf(t: ResourceType, ns: string | undefined): string | undefined {
    return t.namespaced ? ns : undefined;
  }

  /** The stored object (not a copy: do not mutate), or undefined. */
  peek(t: ResourceType, ns: string | undefined, name: string): StoredObject | undefined {
    return this.store.get(typeKey(t), this.namespaceOf(t, ns), name);
  }

  get(t: ResourceType, ns: string | undefined, name: string): KubeObject {
    const o = this.store.get(typeKey(t), this.namespaceOf(t, ns), name);
    if (!o) throw notFound(t.resource, t.group, name);
    return this.present(t, o);
  }

  /** Lists objects (with label and field selectors) and the resourceVersion of the list. */
  list(
    t: ResourceType,
    ns: string | undefined,
    sel: { labelSelector?: string | null; fieldSelector?: string | null } = {},
  ): { items: KubeObject[]; resourceVersion: string } {
    const byLabel = parseLabelSelector(sel.labelSelector);
    const byField = parseFieldSelector(sel.fieldSelector, t.resource);
    const items = this.store
      .list(typeKey(t), this.namespaceOf(t, ns))
      .filter((o) => byLabel(o) && byField(o))
      .map((o) => this.present(t, o));
    return { items, resourceVersion: String(this.store.resourceVersion) };
  }

  /**
   * One page of a list (`limit`, `continue`), consistent with the list's first page; without `limit`, all of it.
   * The items are the stored objects (do not mutate; {@link ObjectService.presentShallow} each for the answer).
   */
  listPage(
    t: ResourceType,
    ns: string | undefined,
    sel: { labelSelector?: string | null; fieldSelector?: string | null },
    req: PageRequest,
  ): { items: KubeObject[]; resourceVersion: string; continue?: string; remainingItemCount?: number } {
    const byLabel = parseLabelSelector(sel.labelSelector);
    const byField = parseFieldSelector(sel.fieldSelector, t.resource);
    const key = typeKey(t);
    const scoped = this.namespaceOf(t, ns);
    const page = this.pages.page(
      `${key}/${scoped ?? ''}`,
      req,
      () => ({ items: this.store.list(key, scoped), rv: this.store.resourceVersion }),
      (o) => byLabel(o) && byField(o),
      !!(sel.labelSelector || sel.fieldSelector),
    );
    return {
      items: page.items,
      resourceVersion: String(page.resourceVersion),
      ...(page.continue ? { continue: page.continue } : {}),
      ...(page.remainingItemCount !== undefined ? { remainingItemCount: page.remainingItemCount } : {}),
    };
  }

  private checkKind(t: ResourceType, body: KubeObject): void {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw badRequest('the request body must be a JSON or YAML object');
    if (body.kind !== undefined && body.kind !== t.kind) {
      throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${t.kind})`);
    }
    if (body.apiVersion !== undefined) {
      const [g] = String(body.apiVersion).includes('/') ? String(body.apiVersion).split('/') : [''];
      if (g !== t.group)
        throw badRequest(
          `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersionOf(t)})`,
        );
    }
    checkMetadataShape(body.metadata);
  }

  /** Validates an object to be stored; `old` is the stored one on an update. Every problem goes into one 422. */
  private validateMeta(t: ResourceType, o: KubeObject, old?: StoredObject, subresource?: string): void {
    const name = String(o.metadata?.name ?? '');
    const causes: FieldCause[] = [];
    const strategy = strategyFor(t);
    // as kube decodes before it validates (a Secret's stringData merged into data, a CRD's conversion defaulted)
    strategy?.decode?.(o);
    // kube validates an update's immutability before the object itself
    if (old && strategy?.validateUpdateFirst) causes.push(...strategy.validateUpdateFirst(o, old));
    if (!name)
      causes.push({
        field: 'metadata.name',
        message: 'Required value: name or generateName is required',
        reason: 'FieldValueRequired',
      });
    else
      for (const e of validateName(name, t.nameRule))
        causes.push({ field: 'metadata.name', message: `Invalid value: ${JSON.stringify(name)}: ${e}` });
    causes.push(...validateLabels(o.metadata?.labels));
    causes.push(...validateFinalizers(o.metadata?.finalizers, old?.metadata));
    if (strategy?.validate) causes.push(...strategy.validate(o, old));
    if (t.schema) causes.push(...validateCustomResource(o, t.schema, old, subresource === 'status'));
    if (causes.length) throw invalid(t.kind, t.group, name, causes);
  }

  /**
   * Validates a built-in object's spec once its defaults are in (and a Job's selector generated), as kube validates
   * after decoding and its strategy's preparation. A write to the status subresource leaves the spec as stored.
   */
  private validateSpec(t: ResourceType, o: KubeObject, old: KubeObject | undefined, subresource?: string): void {
    if (t.crd || subresource === 'status') return;
    const causes = validateBuiltin(t.group, t.resource, o, old);
    if (causes.length) throw invalid(t.kind, t.group, String(o.metadata?.name ?? ''), causes);
  }

  private requireNamespace(ns: string): void {
    if (!this.store.get(NS_KEY, undefined, ns)) throw notFound('namespaces', '', ns);
    const nsObj = this.store.get(NS_KEY, undefined, ns);
    if (nsObj?.metadata?.deletionTimestamp) {
      throw new ApiError(
        403,
        'Forbidden',
        `unable to create new content in namespace ${ns} because it is being terminated`,
      );
    }
  }

  /** Creates an object (POST). */
  create(t: ResourceType, ns: string | undefined, body: KubeObject, w: WriteOptions & { via?: Via } = {}): KubeObject {
    this.checkKind(t, body);
    // a view's object is written as the object that stores it, and answered in the view's shape
    if (t.view)
      return this.present(t, this.create(this.storageOf(t), ns, t.view.write(body), { ...w, requestType: t }));
    let o = clone(body);
    this.decodeCustom(t, o, w, w.via ?? 'body');
    if (w.admitted) {
      o = clone(w.admitted);
      // fields a webhook added that the schema does not declare are dropped, as kube's decoding drops them
      this.decodeCustom(t, o, { fieldValidation: 'Ignore' }, 'body');
    }
    o.apiVersion = apiVersionOf(t);
    o.kind = t.kind;
    o.metadata = o.metadata && typeof o.metadata === 'object' ? o.metadata : {};
    const m = o.metadata;
    if (t.namespaced) {
      if (m.namespace && ns && m.namespace !== ns)
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      m.namespace = ns ?? m.namespace;
      if (!m.namespace) throw badRequest('a namespace is required for a namespaced resource');
    } else delete m.namespace;
    dropEmptyMeta(t, o);
    if (w.untilAdmission) return this.present(t, o);
    if (w.identity) m.name = w.identity.name;
    if (!m.name && m.generateName) {
      let suffix = '';
      for (let i = 0; i < 5; i++) suffix += NAME_CHARS[randomInt(NAME_CHARS.length)];
      m.name = `${m.generateName}${suffix}`;
    }
    this.validateMeta(t, o);
    // validateMeta refused an object without a name, and a namespaced one got its namespace above
    const name = m.name ?? '';
    if (t.namespaced) this.requireNamespace(m.namespace ?? '');
    const key = typeKey(t);
    if (this.store.get(key, m.namespace, name)) throw alreadyExists(t.resource, t.group, name);
    m.uid = w.identity?.uid ?? randomUUID();
    m.creationTimestamp = w.identity?.creationTimestamp ?? kubeTime();
    delete m.resourceVersion;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    const incoming = m.managedFields;
    delete m.managedFields;
    delete m.selfLink;
    if (t.generation) m.generation = 1;
    else delete m.generation;
    // a create drops the status a client sent (the status subresource is how it is written), except a Node's,
    // which its kubelet registers with its status (kube's node strategy keeps it)
    if (t.statusSubresource && !strategyFor(t)?.createKeepsStatus) {
      if (t.crd) delete o.status;
      else o.status = {};
    }
    this.defaults(t, o, undefined);
    strategyFor(t)?.admitCreate?.(o, this.strategyContext);
    this.validateSpec(t, o, undefined);
    this.track(t, undefined, o, w, incoming);
    w.admit?.(o, undefined);
    if (w.dryRun) return this.present(t, o);
    o.apiVersion = this.storedApiVersion(t);
    const stored = this.put(t, o);
    this.afterWrite(t, stored, undefined);
    return this.present(t, stored);
  }

  /** Stores an object, its keys in the order kube-apiserver writes them; answers the stored object. */
  private put(t: ResourceType, o: KubeObject): StoredObject {
    // the store fills in the resourceVersion: its key is made here so that it lands in ObjectMeta's place
    if (o.metadata && typeof o.metadata === 'object' && !('resourceVersion' in o.metadata))
      o.metadata.resourceVersion = '';
    // every write names its object before it is stored (a generateName is resolved by then)
    return this.store.put(typeKey(t), kubeEncoded(t, o) as StoredObject);
  }

  /** The apiVersion objects of a type are stored in: a custom resource's in its CRD's storage version. */
  private storedApiVersion(t: ResourceType): string {
    if (!t.crd) return apiVersionOf(t);
    const storage = storageVersionOf(this.store.get(CRD_KEY, undefined, t.crd));
    return apiVersionOf({ group: t.group, version: storage ?? t.version });
  }

  /** Replaces an object (PUT), on the main resource or the `status` subresource. */
  update(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    body: KubeObject,
    w: WriteOptions & { subresource?: string } = {},
  ): KubeObject {
    this.checkKind(t, body);
    const key = typeKey(t);
    const nsx = this.namespaceOf(t, ns);
    const old = w.viewOfOld ?? this.store.get(key, nsx, name);
    if (!old) throw notFound(t.resource, t.group, name);
    const o = clone(body);
    o.metadata = o.metadata && typeof o.metadata === 'object' ? o.metadata : {};
    if (o.metadata.name !== undefined && o.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(o.metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    if (t.namespaced && o.metadata.namespace && o.metadata.namespace !== ns) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const rv = o.metadata.resourceVersion;
    if (rv !== undefined && rv !== '' && rv !== old.metadata.resourceVersion) {
      throw conflict(
        t.resource,
        t.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    if ((rv === undefined || rv === '') && t.crd) {
      throw invalid(t.kind, t.group, name, [
        { field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' },
      ]);
    }
    // the object as this type shows it: a view's writes are in its own shape, converted to the stored one on commit
    const shown = t.view ? this.read(t, old) : old;
    let next: KubeObject;
    if (w.subresource === 'status') {
      next = { ...clone(shown), status: o.status };
    } else {
      next = o;
      if (t.statusSubresource) {
        if (shown.status === undefined) delete next.status;
        else next.status = clone(shown.status);
      }
    }
    return this.commit(t, old, next, w);
  }

  /**
   * A custom resource as kube decodes it: fields its schema does not declare are pruned (reported as
   * `fieldValidation` asks: `Strict` fails, `Warn` adds a warning per field), nulls the schema does not allow are
   * dropped, and the schema's defaults are filled in.
   */
  private decodeCustom(t: ResourceType, o: KubeObject, w: WriteOptions, via: Via): void {
    // a built-in object is decoded into its type: fields the type lacks are gone (the request's fieldValidation
    // has reported them already)
    if (!t.crd && o && typeof o === 'object') pruneUnknownFields(t, o);
    if (!t.schema || !o || typeof o !== 'object') return;
    const before = via === 'patch' ? JSON.stringify(sortedKeys(o)) : '';
    const unknown = pruneCustomResource(o, t.schema);
    const mode = w.fieldValidation || 'Warn';
    if (unknown.length && mode !== 'Ignore') {
      const list = unknown.map((f) => `unknown field ${JSON.stringify(f)}`);
      if (mode === 'Strict') {
        if (via === 'patch') throw strictPatchError(before, list);
        throw badRequest(
          `${t.kind} in version ${JSON.stringify(t.version)} cannot be handled as a ${t.kind}: strict decoding error: ${list.join(', ')}`,
        );
      }
      w.warnings?.push(...list.map((x) => `299 - ${JSON.stringify(x)}`));
    }
    defaultCustomResource(o, t.schema);
  }

  /**
   * Sets `metadata.managedFields` of an object about to be stored: an apply's planned entries, or the writer's
   * Update entry (see managed-fields.ts). `incoming` is what the request sent (a `[]` or `[{}]` resets tracking).
   */
  private track(
    t: ResourceType,
    old: StoredObject | undefined,
    next: KubeObject,
    w: WriteOptions & { subresource?: string },
    incoming: unknown,
  ): void {
    const m = metaOf(next);
    let entries: ManagedFieldsEntry[];
    if (w.managedFields) entries = w.managedFields;
    else {
      const reset =
        Array.isArray(incoming) &&
        (incoming.length === 0 || (incoming.length === 1 && JSON.stringify(incoming[0]) === '{}'));
      const base = reset ? [] : entriesIn(incoming);
      // as kube records it: in the version the request used (a view's, for a write through it), and each other
      // manager's fields compared in the version its entry names
      const req = w.requestType ?? t;
      const shownIn = this.versionsOfStored(t);
      const toReq = shownIn.get(apiVersionOf(req))?.read ?? ((o: KubeObject) => o);
      // a create through a view is compared with the view of an empty object, as kube compares with the zero
      // object: what the conversion alone fills in (an Event's empty deprecatedSource) is not the writer's
      const oldShown = old ? toReq(old) : req !== t ? toReq({ metadata: {} }) : undefined;
      entries = w.manager
        ? afterUpdate({
            old: oldShown,
            next: toReq(next),
            entries: base,
            manager: w.manager,
            apiVersion: apiVersionOf(req),
            subresource: w.subresource,
            scope: scopeOf(req, w.subresource),
            time: kubeTime(),
            shapes: shapesFor(req),
            ...(t.crd ? { structs: () => false } : {}),
            otherVersion: (apiVersion) => {
              const show = shownIn.get(apiVersion)?.read;
              return show && { old: old && show(old), next: show(next) };
            },
          })
        : base;
    }
    if (entries.length) m.managedFields = entries;
    else delete m.managedFields;
  }

  private commit(
    t: ResourceType,
    old: StoredObject,
    next: KubeObject,
    w: WriteOptions & { subresource?: string; via?: Via },
  ): KubeObject {
    if (t.view)
      return this.present(t, this.commit(this.storageOf(t), old, t.view.write(next), { ...w, requestType: t }));
    this.decodeCustom(t, next, w, w.via ?? 'body');
    if (w.admitted) {
      if (w.admitted.metadata?.resourceVersion !== old.metadata.resourceVersion) {
        const err = conflict(
          t.resource,
          t.group,
          String(old.metadata.name),
          'the object has been modified; please apply your changes to the latest version and try again',
        );
        throw Object.assign(err, { [STALE]: true });
      }
      next = clone(w.admitted);
      next.metadata = next.metadata && typeof next.metadata === 'object' ? next.metadata : {};
      this.decodeCustom(t, next, { fieldValidation: 'Ignore' }, 'body');
      if (w.subresource === 'status') next = { ...clone(old), status: next.status };
      else if (t.statusSubresource) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    next.apiVersion = apiVersionOf(t);
    next.kind = t.kind;
    const m = metaOf(next);
    m.name = old.metadata.name;
    if (t.namespaced) m.namespace = old.metadata.namespace;
    else delete m.namespace;
    m.uid = old.metadata.uid;
    m.creationTimestamp = old.metadata.creationTimestamp;
    m.resourceVersion = old.metadata.resourceVersion;
    // an update never sets, moves or clears a deletion (only DELETE does)
    if (old.metadata.deletionTimestamp) m.deletionTimestamp = old.metadata.deletionTimestamp;
    else delete m.deletionTimestamp;
    if (old.metadata.deletionGracePeriodSeconds !== undefined)
      m.deletionGracePeriodSeconds = old.metadata.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
    const incoming = m.managedFields === undefined ? old.metadata.managedFields : m.managedFields;
    dropEmptyMeta(t, next);
    if (w.untilAdmission) return this.present(t, next);
    delete m.managedFields;
    delete m.selfLink;
    this.validateMeta(t, next, old, w.subresource);
    const updateCauses = strategyFor(t)?.validateUpdate?.(next, old) ?? [];
    if (updateCauses.length) throw invalid(t.kind, t.group, m.name, updateCauses);
    this.defaults(t, next, old);
    this.validateSpec(t, next, old, w.subresource);
    // after defaulting, so that fields the server fills in do not count as a spec change
    const withStatus = !!t.crd && !t.statusSubresource;
    if (t.generation)
      m.generation =
        (old.metadata.generation ?? 1) + (isDeepStrictEqual(specOf(old, withStatus), specOf(next, withStatus)) ? 0 : 1);
    else delete m.generation;
    this.track(t, old, next, w, incoming);
    w.admit?.(next, old);
    // the write that empties a deleting object's finalizers deletes it (answered with the object, as kube does)
    if (m.deletionTimestamp && !hasFinalizers(next)) {
      if (w.dryRun) return this.present(t, next);
      this.removeNow(t, old);
      return this.present(t, next);
    }
    if (sameContent(old, next) && isDeepStrictEqual(old.metadata.managedFields ?? null, m.managedFields ?? null))
      return this.present(t, old);
    if (w.dryRun) return this.present(t, next);
    next.apiVersion = this.storedApiVersion(t);
    const stored = this.put(t, next);
    this.afterWrite(t, stored, old);
    return this.present(t, stored);
  }

  /**
   * Stores a custom resource a conversion webhook put in the storage version: `next` is the outcome of a dry run of
   * the write in the request's version, converted. `expected` is the stored object that write started from
   * (undefined for a create); a write whose stored object has changed since fails with a conflict (see
   * {@link isStaleAdmission}). Answers the stored object (in the storage version).
   */
  storeConverted(t: ResourceType, expected: StoredObject | undefined, next: KubeObject): KubeObject {
    const key = typeKey(t);
    const m = metaOf(next);
    const name = m.name ?? '';
    const current = this.store.get(key, this.namespaceOf(t, m.namespace), name);
    if (!expected) {
      if (current) throw alreadyExists(t.resource, t.group, name);
    } else if (!current || current.metadata.resourceVersion !== expected.metadata.resourceVersion) {
      const err = conflict(
        t.resource,
        t.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
      throw Object.assign(err, { [STALE]: true });
    }
    const stored = clone(next);
    if (current && metaOf(stored).deletionTimestamp && !hasFinalizers(stored)) {
      this.removeNow(t, current);
      return stored;
    }
    delete metaOf(stored).selfLink;
    const put = this.put(t, stored);
    this.afterWrite(t, put, current);
    return put;
  }

  /** Patches an object (PATCH) with a merge, strategic merge or JSON patch. */
  patch(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    contentType: string,
    patchBody: unknown,
    w: WriteOptions & { subresource?: string } = {},
  ): KubeObject {
    const key = typeKey(t);
    const nsx = this.namespaceOf(t, ns);
    const old = w.viewOfOld ?? this.store.get(key, nsx, name);
    const ct = contentType.split(';')[0].trim();
    // custom resources have no patch strategies: kube refuses a strategic merge patch before looking the object up
    if (t.crd && ct === 'application/strategic-merge-patch+json')
      throw unsupportedPatchType(CUSTOM_RESOURCE_PATCH_TYPES);
    if (ct === 'application/apply-patch+yaml')
      return this.serverSideApply(t, ns, name, old, patchBody as KubeObject, w);
    if (w.force)
      throw invalid('PatchOptions', 'meta.k8s.io', '', [
        {
          field: 'force',
          message: 'Forbidden: may not be specified for non-apply patch',
          reason: 'FieldValueForbidden',
        },
      ]);
    if (!old) throw notFound(t.resource, t.group, name);
    const current = this.present(t, old);
    const result = applyPatch(ct, current, patchBody);
    if (!isRecord(result)) throw badRequest('the patch produced something that is not an object');
    let patched: KubeObject = clone(result);
    patched.metadata = patched.metadata ?? {};
    checkMetadataShape(patched.metadata);
    // a built-in object's patch is checked for unknown fields in its result, as kube decodes the patched object
    // (custom resources are, in decodeCustom)
    if (!t.crd) this.reportUnknownAfterPatch(t, patched, w);
    const rv = patched.metadata.resourceVersion;
    if (rv !== undefined && rv !== old.metadata.resourceVersion) {
      throw conflict(
        t.resource,
        t.group,
        name,
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
    const shown = t.view ? current : old;
    if (w.subresource === 'status') patched = { ...clone(shown), status: patched.status };
    else if (t.statusSubresource) {
      if (shown.status === undefined) delete patched.status;
      else patched.status = clone(shown.status);
    }
    return this.commit(t, old, patched, { ...w, via: 'patch' });
  }

  /** Unknown fields of a patched built-in object, reported as `fieldValidation` asks (Strict: kube's 422). */
  private reportUnknownAfterPatch(t: ResourceType, patched: KubeObject, w: WriteOptions): void {
    const mode = w.fieldValidation || 'Warn';
    if (mode === 'Ignore') return;
    const unknown = unknownFields(t, patched);
    if (!unknown.length) return;
    const list = unknown.map((f) => `unknown field ${JSON.stringify(f)}`);
    if (mode === 'Strict') throw strictPatchError(JSON.stringify(sortedKeys(patched)), list);
    w.warnings?.push(...list.map((x) => `299 - ${JSON.stringify(x)}`));
  }

  /**
   * Server-side apply: creates the object, or merges the applied configuration into it, with field ownership as
   * kube-apiserver keeps it (conflicts, `force`, removal of fields the manager no longer applies).
   */
  private serverSideApply(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    old: StoredObject | undefined,
    body: KubeObject,
    w: WriteOptions & { subresource?: string },
  ): KubeObject {
    if (body && typeof body === 'object' && !Array.isArray(body)) {
      // an applied configuration names its type exactly: the endpoint's group, version and kind
      const gv = apiVersionOf(t);
      if (String(body.apiVersion ?? '') !== gv)
        throw badRequest(
          `Incorrect version specified in apply patch. Specified patch version: ${String(body.apiVersion ?? '')}, expected: ${gv}`,
        );
      if (body.kind !== t.kind)
        throw badRequest(`invalid object type: ${t.group}/${t.version}, Kind=${String(body.kind ?? '')}`);
    }
    this.checkKind(t, body);
    if (body.metadata?.name && body.metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(body.metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    if (!w.fieldManager) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [
        { field: 'fieldManager', message: 'Required value: is required for apply patch', reason: 'FieldValueRequired' },
      ]);
    }
    if (body.metadata?.managedFields !== undefined && body.metadata.managedFields !== null)
      throw badRequest('metadata.managedFields must be nil');
    if (t.schema) {
      // kube turns the configuration into a typed object first: a field its schema does not declare fails the apply
      const undeclared = pruneCustomResource(clone(body), t.schema).filter((p) => !p.startsWith('metadata.'));
      if (undeclared.length) {
        throw new ApiError(
          500,
          '',
          `failed to create typed patch object (${ns ? `${ns}/` : ''}${name}; ${apiVersionOf(t)}, Kind=${t.kind}): .${undeclared[0]}: field not declared in schema`,
        );
      }
    }
    const shapes = shapesFor(t);
    const live = old ? this.present(t, old) : undefined;
    const plan = planApply({
      live,
      config: body,
      entries: entriesOf(old),
      manager: w.fieldManager,
      apiVersion: apiVersionOf(t),
      subresource: w.subresource,
      scope: scopeOf(t, w.subresource),
      time: kubeTime(),
      shapes,
      otherVersion: this.conversionsFrom(t),
    });
    if (plan.conflicts.length && !w.force) {
      const left = w.fieldManager === 'kubectl' && live ? this.notUpgradable(t, live, plan.conflicts) : plan.conflicts;
      if (left.length) throw applyConflict(left);
    }
    if (!old || !live)
      return this.create(
        t,
        ns,
        { ...body, metadata: { ...(body.metadata ?? {}), name } },
        { ...w, managedFields: plan.entries, via: 'apply' },
      );
    const base = clone(live);
    prunePaths(base, plan.prune, shapes);
    let merged = mergeApplied(
      base,
      { ...body, metadata: { ...(body.metadata ?? {}), resourceVersion: undefined, managedFields: undefined } },
      shapes,
    ) as KubeObject;
    // what the apply may not change, as the request's version shows it (a view's own shape)
    const shown = t.view ? live : old;
    if (w.subresource === 'status') merged = { ...clone(shown), status: merged.status };
    else if (t.statusSubresource) {
      if (shown.status === undefined) delete merged.status;
      else merged.status = clone(shown.status);
    }
    return this.commit(t, old, merged, { ...w, managedFields: plan.entries, via: 'apply' });
  }

  /**
   * kube's upgrade from client-side apply: an apply by the manager `kubectl` may take the fields its last-applied
   * annotation set to the value they still have. Returns the conflicts that remain.
   */
  private notUpgradable(t: ResourceType, live: KubeObject, conflicts: FieldConflict[]): FieldConflict[] {
    let last: KubeObject;
    try {
      last = JSON.parse(String(live.metadata?.annotations?.[LAST_APPLIED] ?? '')) as KubeObject;
    } catch {
      return conflicts;
    }
    if (!last || typeof last !== 'object' || last.apiVersion !== apiVersionOf(t)) return conflicts;
    const set = fieldsOf(last);
    const same = (p: string[]) => isDeepStrictEqual(valueAt(last, p), valueAt(live, p));
    return conflicts.filter((c) => !(set.has(c.path) && same(c.path)));
  }

  /** Deletes an object; answers what kube answers (the object for namespaces and CRDs, else a Success Status). */
  delete(
    t: ResourceType,
    ns: string | undefined,
    name: string,
    opts: WriteOptions & { preconditions?: { uid?: string; resourceVersion?: string } } = {},
  ): KubeObject {
    const key = typeKey(t);
    const nsx = this.namespaceOf(t, ns);
    const old = this.store.get(key, nsx, name);
    if (!old) throw notFound(t.resource, t.group, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata.uid) {
      throw conflict(
        t.resource,
        t.group,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(old.metadata.uid)}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion) {
      throw conflict(
        t.resource,
        t.group,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(old.metadata.resourceVersion)}`,
      );
    }
    const strategy = strategyFor(t);
    if (strategy?.markForDeletion) {
      const marked = strategy.markForDeletion(old);
      if (opts.dryRun) return this.present(t, marked);
      const stored = this.put(t, marked);
      strategy.afterMarked?.(stored, this.strategyContext);
      return this.present(t, stored);
    }
    if (hasFinalizers(old)) return this.markDeleting(t, old, !!opts.dryRun);
    if (opts.dryRun) return this.deleteAnswer(t, old);
    const gone = this.removeNow(t, old);
    return this.deleteAnswer(t, { ...gone, metadata: { ...gone.metadata, deletionTimestamp: kubeTime() } });
  }

  /**
   * kube's deletion of an object with finalizers: it stays, with `deletionTimestamp` (now, kept from an earlier
   * delete), `deletionGracePeriodSeconds: 0` and its generation bumped once, until a write empties its finalizers.
   * Answered with the object.
   */
  private markDeleting(t: ResourceType, old: StoredObject, dryRun: boolean): KubeObject {
    const next = clone(old);
    const m = next.metadata;
    if (!m.deletionTimestamp) {
      m.deletionTimestamp = kubeTime();
      if (typeof m.generation === 'number' && m.generation > 0) m.generation += 1;
    }
    m.deletionGracePeriodSeconds = 0;
    if (dryRun || sameContent(old, next)) return this.present(t, dryRun ? next : old);
    return this.present(t, this.put(t, next));
  }

  /** Removes an object from the store now (a CRD with its custom resources). */
  private removeNow(t: ResourceType, old: StoredObject): StoredObject {
    const key = typeKey(t);
    strategyFor(t)?.beforeRemove?.(old, this.strategyContext);
    const gone = this.store.remove(key, old.metadata.namespace, old.metadata.name)!;
    this.afterWrite(t, undefined, old);
    return gone;
  }

  /** Finishes pending namespace deletions now (on shutdown, so the saved state has no half-deleted namespace). */
  flushPendingDeletions(): void {
    this.namespaces.flush();
  }

  private deleteAnswer(t: ResourceType, o: KubeObject): KubeObject {
    if (strategyFor(t)?.deleteAnswersObject) return this.present(t, o);
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name: o.metadata?.name,
        ...(t.group ? { group: t.group } : {}),
        kind: t.resource,
        uid: o.metadata?.uid,
      },
    };
  }

  /** Deletes every object of a type matching the selectors (in a namespace or everywhere). */
  deleteCollection(
    t: ResourceType,
    ns: string | undefined,
    sel: { labelSelector?: string | null; fieldSelector?: string | null },
    w: WriteOptions = {},
  ): KubeObject {
    const { items } = this.list(t, ns, sel);
    for (const o of items) this.delete(t, o.metadata?.namespace, o.metadata?.name ?? '', w);
    return {
      kind: `${t.listKind}`,
      apiVersion: apiVersionOf(t),
      metadata: { resourceVersion: String(this.store.resourceVersion) },
      items,
    };
  }

  /** Creates the object, or replaces it (keeping its status) when it exists: what `--apply` and bootstrapping use. */
  createOrUpdate(t: ResourceType, o: KubeObject): KubeObject {
    const ns = t.namespaced ? (o.metadata?.namespace ?? 'default') : undefined;
    const old = this.store.get(typeKey(t), ns, o.metadata?.name ?? '');
    if (!old) return this.create(t, ns, o);
    const next = clone(o);
    next.metadata = { ...(o.metadata ?? {}) };
    if (t.statusSubresource && old.status !== undefined) next.status = clone(old.status);
    return this.commit(t, old, next, {});
  }

  /** Defaults: the built-in kinds' own (from their OpenAPI), then the resource's strategy's. */
  private defaults(t: ResourceType, o: KubeObject, old: StoredObject | undefined): void {
    if (!t.crd) defaultBuiltin(t.group, t.resource, o);
    strategyFor(t)?.prepare?.(o, old, this.strategyContext);
  }

  private allocateIP(): string {
    const n = this.nextIP++;
    return `10.96.${Math.floor(n / 256) % 256}.${n % 256}`;
  }

  /** What a cluster's controllers do after a write (the resource's strategy says). */
  private afterWrite(t: ResourceType, now: KubeObject | undefined, old: KubeObject | undefined): void {
    strategyFor(t.view ? { group: t.view.storage.group, resource: t.view.storage.resource } : t)?.afterWrite?.(
      now,
      old,
      this.strategyContext,
    );
  }

  private ensure(resource: string, o: KubeObject): void {
    const t = this.registry.get('', 'v1', resource)!;
    if (this.store.get(typeKey(t), o.metadata?.namespace, o.metadata?.name ?? '')) return;
    this.create(t, o.metadata?.namespace, o);
  }
}

/**
 * An object-based client, as controller-runtime's `client.Client`: calls take objects (or a type and a key) and find
 * their paths through a {@link RESTMapper}, so a reconciler never builds a URL. Writes to the `status` subresource
 * go through {@link ObjectClient.status}; server-side apply through {@link ObjectClient.apply}.
 *
 * Answers are plain JSON typed as the caller says (`T`); with `@kubernetes/client-node` models that means the
 * fields, not the class methods, and timestamps as RFC 3339 strings.
 */
import { KubeApiError, type KubeClient, type RequestOptions } from './client.js';
import type { KubeObject, ObjectLike } from './objects.js';
import type { BuiltinKinds } from './builtin-kinds.js';
import { RESTMapper, type ResourceMapping } from './restmapper.js';
import { copyJson } from '../util/json-copy.js';

/**
 * The TypeScript type of the objects of each kind the library knows, keyed `apiVersion/Kind`: Kubernetes' built-in
 * kinds (from kubernetes-types, types only) and, by declaration merging, a project's own and third parties':
 *
 * ```ts
 * declare module 'ctrlmetrics' {
 *   interface KnownKinds {
 *     'cache.example.com/v1alpha1/Memcached': Memcached;
 *   }
 * }
 * ```
 *
 * {@link ObjectClient.get} and {@link ObjectClient.list} answer a known kind in its type without a cast.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface KnownKinds extends BuiltinKinds {}

/** The type of the objects of `apiVersion` and `kind`: their {@link KnownKinds} entry, else {@link KubeObject}. */
export type ObjectOf<A extends string, K extends string> = `${A}/${K}` extends keyof KnownKinds
  ? KnownKinds[`${A}/${K}`]
  : KubeObject;

/** A kind given as a constant (`{ apiVersion: 'apps/v1', kind: 'Deployment' } as const`), not as an object of it. */
export type KindConstant = ObjectType & { metadata?: never };

/** Which object: its namespace (none for cluster-scoped kinds) and name. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

/** A kind: `{ apiVersion: 'apps/v1', kind: 'Deployment' }`. */
export interface ObjectType {
  apiVersion: string;
  kind: string;
}

/** Options of every write. */
export interface WriteOptions {
  /**
   * Names the writer in `managedFields` (default: the client's `fieldOwner`, else the User-Agent, as the API server
   * does).
   */
  fieldManager?: string;
  /**
   * How the API server treats fields the schema does not know (default: the client's, else the server's, `Warn`
   * on Kubernetes 1.27+): `Strict` refuses the write, `Warn` answers warnings, `Ignore` drops them silently.
   */
  fieldValidation?: FieldValidation;
  /** Validate and answer, but store nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** The API server's field validation directives. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/**
 * Defaults of every write of a client (controller-runtime's `WithFieldOwner` and `WithFieldValidation`); options of
 * one call win.
 */
export interface WriteDefaults {
  /** The field manager of every write (an apply's too). */
  fieldOwner?: string;
  fieldValidation?: FieldValidation;
}

/** Options of a server-side apply. */
export interface ApplyOptions extends WriteOptions {
  /** Who owns the applied fields (the API server requires one): this, else the client's `fieldOwner`. */
  fieldManager?: string;
  /** Take fields another manager owns instead of failing with 409 Conflict (`kubectl apply --server-side --force-conflicts`). */
  force?: boolean;
}

/** How a patch is read: JSON merge patch (default), JSON patch, or strategic merge patch (built-in kinds only). */
export type PatchType = 'merge' | 'json' | 'strategic';

/** Options of a patch. */
export interface PatchOptions extends WriteOptions {
  /** Default `merge`. */
  type?: PatchType;
}

/** Options of a delete. */
export interface DeleteOptions {
  /** What happens to dependents (the API server's garbage collector acts on it; the embedded authority runs none). */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  /** Delete only if the object still has this uid / resourceVersion (else 409 Conflict). */
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** Options of {@link ObjectClient.deleteAllOf}: which objects, and how each is deleted. */
export interface DeleteAllOfOptions extends Omit<DeleteOptions, 'preconditions'> {
  /** The namespace (required for a namespaced kind: the API deletes collections per namespace). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** One page of a list ({@link ObjectClient.listPage}). */
export interface ListPage<T> {
  items: T[];
  /** The token of the next page; absent on the last. */
  continue?: string;
  resourceVersion?: string;
  /** How many objects the later pages hold, when the server says. */
  remainingItemCount?: number;
}

/** Options of a list. */
export interface ListOptions {
  /** One namespace (default: all, or the cluster for cluster-scoped kinds). */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * One field and its value, answered from the field index the manager made for it (`mgr.indexField`), as
   * controller-runtime's `client.MatchingFields`: only in a reconcile (`ctx.client`), for a kind the controller
   * watches; the objects come as copies.
   */
  matchingFields?: Record<string, string>;
  signal?: AbortSignal;
}

/** Answers a `matchingFields` list from a cache's index; throws when none covers it. */
export type IndexLookup = (
  type: ObjectType,
  field: string,
  value: string,
  namespace: string | undefined,
) => ObjectLike[];

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

/** Reads and writes one subresource of objects (`status`, `scale`, `eviction`, `token`). */
export interface SubResourceClient {
  /** GET of the subresource (a Deployment's `scale` answers a Scale). */
  get<T = KubeObject>(obj: ObjectLike, opts?: { signal?: AbortSignal }): Promise<T>;
  /**
   * POST of `body` to the subresource: a Pod's `eviction` (an Eviction), a ServiceAccount's `token` (a
   * TokenRequest, answered with the token in `status.token`).
   */
  create<T = KubeObject>(obj: ObjectLike, body: object, opts?: WriteOptions): Promise<T>;
  /** PUT of the subresource: the object's `resourceVersion` must be current (else 409 Conflict). */
  update<T extends ObjectLike>(obj: T, opts?: WriteOptions): Promise<T>;
  /** PATCH of the subresource. */
  patch<T extends ObjectLike>(obj: T, patch: unknown, opts?: PatchOptions): Promise<T>;
  /** Server-side apply of the subresource. */
  apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T>;
}

/** The object's API type, required to find its path. */
function typeOf(obj: ObjectLike): ObjectType {
  if (!obj || typeof obj !== 'object' || !obj.apiVersion || !obj.kind) {
    throw new TypeError(
      `the object ${obj?.metadata?.name ?? ''} needs apiVersion and kind (plain JSON from a list or a client-node model without them does not carry its type)`,
    );
  }
  return { apiVersion: obj.apiVersion, kind: obj.kind };
}

function keyOf(obj: ObjectLike): ObjectKey {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`the ${obj.kind ?? 'object'} has no metadata.name`);
  return obj.metadata?.namespace ? { namespace: obj.metadata.namespace, name } : { name };
}

/** A JSON body without what the API server refuses or ignores in an apply configuration. */
function applyBody(obj: ObjectLike): unknown {
  const { managedFields: _m, ...metadata } = obj.metadata ?? {};
  return { ...obj, metadata };
}

/** controller-runtime's client: objects in, objects out, paths from discovery. */
export class ObjectClient {
  /** The kind → resource mapper in use (shared by every client of a manager). */
  readonly mapper: RESTMapper;

  constructor(
    /** The path-based client the calls go through (a reconcile's reads from the informers' caches). */
    readonly pathClient: KubeClient,
    mapper?: RESTMapper,
    /** Where `matchingFields` lists are answered (a reconcile's field indexes). */
    private readonly fromIndex?: IndexLookup,
    /** Defaults of every write (see {@link ObjectClient.withDefaults}). */
    private readonly defaults: WriteDefaults = {},
  ) {
    this.mapper = mapper ?? new RESTMapper(pathClient);
  }

  /**
   * The same client with these write defaults over its own (controller-runtime's `client.WithFieldOwner` and
   * `client.WithFieldValidation`): e.g. `ctx.client.withDefaults({ fieldOwner: 'memcached-operator', fieldValidation:
   * 'Strict' })`.
   */
  withDefaults(defaults: WriteDefaults): ObjectClient {
    return new ObjectClient(this.pathClient, this.mapper, this.fromIndex, { ...this.defaults, ...defaults });
  }

  private writeQuery(
    o: WriteOptions | undefined,
    extra: Record<string, string | undefined> = {},
  ): RequestOptions['query'] {
    return {
      fieldManager: o?.fieldManager ?? this.defaults.fieldOwner,
      fieldValidation: o?.fieldValidation ?? this.defaults.fieldValidation,
      dryRun: o?.dryRun ? 'All' : undefined,
      ...extra,
    };
  }

  /** The collection path of a kind (in a namespace when given and the kind is namespaced). */
  async collectionPath(type: ObjectType, namespace?: string): Promise<string> {
    return collection(await this.mapper.mappingFor(type.apiVersion, type.kind), namespace);
  }

  /** The path of one object (and subresource), e.g. `/apis/apps/v1/namespaces/ns/deployments/web/status`. */
  async objectPath(type: ObjectType, key: ObjectKey, subresource?: string): Promise<string> {
    const m = await this.mapper.mappingFor(type.apiVersion, type.kind);
    if (m.namespaced && !key.namespace)
      throw new TypeError(`${type.kind} ${key.name}: a namespace is required (${type.kind} is namespaced)`);
    return `${collection(m, key.namespace)}/${encodeURIComponent(key.name)}${subresource ? `/${subresource}` : ''}`;
  }

  /**
   * Reads one object; a missing one throws a 404 {@link KubeApiError} (see `isNotFound`, `ignoreNotFound`). A kind
   * given by `apiVersion` and `kind`, or as a constant, answers in its {@link KnownKinds} type:
   * `get('apps/v1', 'Deployment', { namespace, name })` is a kubernetes-types `Deployment`.
   */
  get<const A extends string, const K extends string>(
    apiVersion: A,
    kind: K,
    key: ObjectKey,
    opts?: { signal?: AbortSignal },
  ): Promise<ObjectOf<A, K>>;
  get<const Ty extends KindConstant>(
    type: Ty,
    key: ObjectKey,
    opts?: { signal?: AbortSignal },
  ): Promise<ObjectOf<Ty['apiVersion'], Ty['kind']>>;
  get<T extends ObjectLike = KubeObject>(type: ObjectType, key: ObjectKey, opts?: { signal?: AbortSignal }): Promise<T>;
  async get(
    a: string | ObjectType,
    b: string | ObjectKey,
    c?: ObjectKey | { signal?: AbortSignal },
    d?: { signal?: AbortSignal },
  ): Promise<unknown> {
    const [type, key, opts] =
      typeof a === 'string'
        ? [{ apiVersion: a, kind: b as string }, c as ObjectKey, d]
        : [a, b as ObjectKey, c as { signal?: AbortSignal } | undefined];
    return this.pathClient.get(await this.objectPath(type, key), { signal: opts?.signal });
  }

  /**
   * Lists objects of a kind; each item carries `apiVersion` and `kind` (the API leaves them out of list items). A
   * kind given by `apiVersion` and `kind`, or as a constant, answers in its {@link KnownKinds} type.
   */
  list<const A extends string, const K extends string>(
    apiVersion: A,
    kind: K,
    opts?: ListOptions,
  ): Promise<Array<ObjectOf<A, K>>>;
  list<const Ty extends KindConstant>(
    type: Ty,
    opts?: ListOptions,
  ): Promise<Array<ObjectOf<Ty['apiVersion'], Ty['kind']>>>;
  list<T extends ObjectLike = KubeObject>(type: ObjectType, opts?: ListOptions): Promise<T[]>;
  async list(a: string | ObjectType, b?: string | ListOptions, c?: ListOptions): Promise<unknown[]> {
    const [type, opts] =
      typeof a === 'string'
        ? [{ apiVersion: a, kind: b as string }, c ?? {}]
        : [a, (b as ListOptions | undefined) ?? {}];
    return this.listOf<ObjectLike>(type, opts);
  }

  private async listOf<T extends ObjectLike>(type: ObjectType, opts: ListOptions): Promise<T[]> {
    const fields = Object.entries(opts.matchingFields ?? {});
    if (fields.length) {
      if (fields.length > 1)
        throw new Error(
          `non-exact field matches are not supported by the cache: list ${type.kind} by one field (got ${fields.map(([f]) => f).join(', ')})`,
        );
      if (opts.labelSelector || opts.fieldSelector)
        throw new Error(
          `list ${type.kind}: matchingFields is answered from an index, and cannot be combined with labelSelector or fieldSelector`,
        );
      if (!this.fromIndex)
        throw new Error(
          `list ${type.kind} with matchingFields: only a reconcile's ctx.client answers it, from the field indexes of the manager's cache (mgr.indexField)`,
        );
      const [field, value] = fields[0];
      return this.fromIndex(type, field, value, opts.namespace).map(
        (o) => ({ ...copyJson(o), apiVersion: type.apiVersion, kind: type.kind }) as T,
      );
    }
    const path = await this.collectionPath(type, opts.namespace);
    const list = await this.pathClient.get<{ items?: T[] }>(path, {
      query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
      signal: opts.signal,
    });
    return (list.items ?? []).map((o) => ({ ...o, apiVersion: type.apiVersion, kind: type.kind }));
  }

  /**
   * One page of a list (the API's `limit`/`continue`): at most `limit` objects, and `continue` to ask for the next
   * page with, absent on the last one. A token older than the API server keeps (about five minutes) is a 410.
   */
  async listPage<T extends ObjectLike = KubeObject>(
    type: ObjectType,
    opts: ListOptions & { limit: number; continue?: string },
  ): Promise<ListPage<T>> {
    const path = await this.collectionPath(type, opts.namespace);
    const list = await this.pathClient.get<{
      items?: T[];
      metadata?: { continue?: string; resourceVersion?: string; remainingItemCount?: number };
    }>(path, {
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: String(opts.limit),
        continue: opts.continue || undefined,
      },
      signal: opts.signal,
    });
    const md = list.metadata ?? {};
    return {
      items: (list.items ?? []).map((o) => ({ ...o, apiVersion: type.apiVersion, kind: type.kind })),
      ...(md.continue ? { continue: md.continue } : {}),
      ...(md.resourceVersion ? { resourceVersion: md.resourceVersion } : {}),
      ...(md.remainingItemCount !== undefined ? { remainingItemCount: md.remainingItemCount } : {}),
    };
  }

  /**
   * Every object of a list, read in pages of `pageSize` (default 500), as client-go's pager: the API server holds
   * one page at a time. When a continue token expires midway (410), it starts over with one full list, as the pager
   * does.
   */
  async listAll<T extends ObjectLike = KubeObject>(
    type: ObjectType,
    opts: ListOptions & { pageSize?: number } = {},
  ): Promise<T[]> {
    const limit = Math.max(1, Math.floor(opts.pageSize ?? 500));
    const out: T[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.listPage<T>(type, { ...opts, limit, continue: token });
        out.push(...page.items);
        token = page.continue;
      } while (token);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.status !== 410 || token === undefined) throw err;
      return this.listOf<T>(type, { ...opts, matchingFields: undefined });
    }
    return out;
  }

  /** Creates the object (POST); answers it as stored. */
  async create<T extends ObjectLike>(obj: T, opts?: WriteOptions): Promise<T> {
    const ns = obj.metadata?.namespace;
    return this.pathClient.create<T>(await this.collectionPath(typeOf(obj), ns), obj, {
      query: this.writeQuery(opts),
      signal: opts?.signal,
    });
  }

  /** Replaces the object (PUT); its `resourceVersion` must be current (else 409 Conflict: re-read and retry). */
  async update<T extends ObjectLike>(obj: T, opts?: WriteOptions): Promise<T> {
    return this.pathClient.replace<T>(await this.objectPath(typeOf(obj), keyOf(obj)), obj, {
      query: this.writeQuery(opts),
      signal: opts?.signal,
    });
  }

  /** Patches the object named by `obj` with `patch`. */
  async patch<T extends ObjectLike>(obj: T, patch: unknown, opts?: PatchOptions): Promise<T> {
    return this.patchAt<T>(await this.objectPath(typeOf(obj), keyOf(obj)), patch, opts);
  }

  /**
   * Server-side apply: `obj` is the configuration (only the fields this manager wants to own, with apiVersion,
   * kind, name and namespace); creates the object when missing. Fields another manager owns fail with 409
   * Conflict unless `force`.
   */
  async apply<T extends ObjectLike>(obj: T, opts: ApplyOptions): Promise<T> {
    return this.applyAt<T>(await this.objectPath(typeOf(obj), keyOf(obj)), obj, opts);
  }

  /** Deletes the object. An object with finalizers stays, marked deleting, until they are removed. */
  async delete(obj: ObjectLike, opts: DeleteOptions = {}): Promise<void> {
    await this.pathClient.delete(await this.objectPath(typeOf(obj), keyOf(obj)), {
      body: deleteBody(opts),
      signal: opts.signal,
    });
  }

  /**
   * Deletes every object of a kind that the selectors match, in one request (controller-runtime's `DeleteAllOf`,
   * the API's deletecollection): in `namespace` for a namespaced kind (required), else cluster-wide. No selector:
   * all of them.
   */
  async deleteAllOf(type: ObjectType, opts: DeleteAllOfOptions = {}): Promise<void> {
    const m = await this.mapper.mappingFor(type.apiVersion, type.kind);
    if (m.namespaced && !opts.namespace)
      throw new TypeError(
        `deleteAllOf ${type.kind} needs a namespace: the API deletes collections of a namespaced kind one namespace at a time`,
      );
    await this.pathClient.delete(collection(m, opts.namespace), {
      query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
      body: deleteBody(opts),
      signal: opts.signal,
    });
  }

  /** Writes to the `status` subresource (a CRD needs `subresources: {status: {}}`). */
  status(): SubResourceClient {
    return this.subResource('status');
  }

  /** Writes to a named subresource (`status`, `scale`, …). */
  subResource(name: string): SubResourceClient {
    return {
      get: async <T>(obj: ObjectLike, opts?: { signal?: AbortSignal }) =>
        this.pathClient.get<T>(await this.objectPath(typeOf(obj), keyOf(obj), name), { signal: opts?.signal }),
      create: async <T>(obj: ObjectLike, body: object, opts?: WriteOptions) =>
        this.pathClient.create<T>(await this.objectPath(typeOf(obj), keyOf(obj), name), body, {
          query: this.writeQuery(opts),
          signal: opts?.signal,
        }),
      update: async <T extends ObjectLike>(obj: T, opts?: WriteOptions) =>
        this.pathClient.replace<T>(await this.objectPath(typeOf(obj), keyOf(obj), name), obj, {
          query: this.writeQuery(opts),
          signal: opts?.signal,
        }),
      patch: async <T extends ObjectLike>(obj: T, patch: unknown, opts?: PatchOptions) =>
        this.patchAt<T>(await this.objectPath(typeOf(obj), keyOf(obj), name), patch, opts),
      apply: async <T extends ObjectLike>(obj: T, opts: ApplyOptions) =>
        this.applyAt<T>(await this.objectPath(typeOf(obj), keyOf(obj), name), obj, opts),
    };
  }

  private patchAt<T>(path: string, patch: unknown, opts?: PatchOptions): Promise<T> {
    return this.pathClient.request<T>('PATCH', path, {
      body: patch,
      contentType: PATCH_CONTENT_TYPES[opts?.type ?? 'merge'],
      query: this.writeQuery(opts),
      signal: opts?.signal,
    });
  }

  private applyAt<T>(path: string, obj: ObjectLike, opts: ApplyOptions): Promise<T> {
    if (!opts?.fieldManager && !this.defaults.fieldOwner)
      return Promise.reject(
        new TypeError(
          "apply needs a fieldManager (or the client's fieldOwner): the name this controller owns the applied fields under",
        ),
      );
    return this.pathClient.request<T>('PATCH', path, {
      // JSON is YAML: the apply content type takes it as is
      body: applyBody(obj),
      contentType: 'application/apply-patch+yaml',
      query: this.writeQuery(opts, { force: opts.force ? 'true' : undefined }),
      signal: opts.signal,
    });
  }
}

/** The DeleteOptions body of a delete. */
function deleteBody(opts: DeleteOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
  if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
  if (opts.preconditions) body.preconditions = opts.preconditions;
  if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
  if (opts.dryRun) body.dryRun = ['All'];
  return body;
}

function collection(m: ResourceMapping, namespace: string | undefined): string {
  const base = m.group ? `/apis/${m.group}/${m.version}` : `/api/${m.version}`;
  const ns = m.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${m.resource}`;
}

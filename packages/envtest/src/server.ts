/**
 * The HTTP layer of the authority: authentication (bearer tokens, anonymous), impersonation, RBAC authorization of
 * every request, then discovery, objects, watches and the review endpoints, with errors as `Status` objects.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from './rbac.js';
import { serviceAccountGroups, withAuthenticatedGroup } from './authn.js';
import { forbidden } from './authz.js';
import { requestInfo, type RequestInfo } from './requestinfo.js';
import { ApiError, badRequest, invalid, methodNotAllowed, unauthorized, internalError } from './status.js';
import { applyPatch } from './patch.js';
import { deleteOptionsError } from './write-options.js';
import { apiVersionOf } from './resources.js';
import type { KubeObject, ResourceType } from './types.js';
import { apiGroup, apiGroupList, apiResourceList, coreVersions, versionInfo } from './discovery.js';
import { toTable, wantsTable } from './table.js';
import { admitRbacWrite, isRbacResource } from './rbac-admission.js';
import { checkFields, checkTypes } from './fields.js';
import { serveIssuerDiscovery } from './issuer-discovery.js';
import { WarningRecorder, type AdmissionRequest } from './webhook-admission.js';
import { checkPartialForm, partialMetadataWanted, partialOf } from './partial-metadata.js';
import { convertedWrite } from './converted-writes.js';
import type { WriteOptions } from './objects.js';
import { admittedDelete, admittedWrite, type AdmittedWriteRequest } from './admitted-writes.js';
import type { ServerDeps } from './server-deps.js';
import {
  bool,
  checkWriteOptions,
  decodeBody,
  notFoundPath,
  prettyResponses,
  readBody,
  send,
  sendError,
  sendList,
  sendWritten,
  wantsPretty,
  warn,
  writeManager,
} from './responses.js';

export type { ServerDeps } from './server-deps.js';

const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

/** The request handler. */
export function createHandler(d: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const maxRequests = d.maxRequestsInFlight ?? 400;
  const maxWatches = d.maxWatches ?? 1000;
  let requests = 0;
  let watches = 0;
  return (req, res) => {
    // Load shedding as kube-apiserver does it: beyond the in-flight limits, 429 with Retry-After.
    const watch = isWatch(req);
    if (watch ? watches >= maxWatches : requests >= maxRequests) {
      res.setHeader('Retry-After', '1');
      return sendError(res, tooManyRequests());
    }
    if (watch) watches++;
    else requests++;
    let done = false;
    const finished = () => {
      if (done) return;
      done = true;
      if (watch) watches--;
      else requests--;
    };
    res.once('close', finished);
    res.once('finish', finished);
    if (wantsPretty(req)) prettyResponses.add(res);
    handle(d, req, res).catch((err: unknown) => {
      if (err instanceof ApiError) return sendError(res, err);
      d.logger.error('request failed', {
        method: req.method,
        path: req.url?.split('?')[0],
        err: err instanceof Error ? err.message : String(err),
      });
      sendError(res, internalError(err instanceof Error ? err.message : String(err)));
    });
  };
}

function isWatch(req: IncomingMessage): boolean {
  if (req.method !== 'GET') return false;
  const url = req.url ?? '';
  return /[?&]watch=(1|true)(&|$)/i.test(url) || /^\/apis?\/(?:[^/?]+\/)?v[^/?]*\/watch\//.test(url);
}

function tooManyRequests(): ApiError {
  return new ApiError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
}

/**
 * kube's chain: a `Bearer` token must authenticate (else 401); a request without one (no header, another scheme
 * such as `Basic`, an empty token) is anonymous, and RBAC decides what `system:anonymous` may do.
 */
function authenticate(d: ServerDeps, req: IncomingMessage): UserInfo {
  const h = req.headers.authorization;
  if (!h || !h.trim()) return ANONYMOUS;
  const parts = h.trim().split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer' || !parts[1]) return ANONYMOUS;
  const r = d.authn.authenticate(parts[1]);
  if (!r.authenticated) throw unauthorized();
  return r.user;
}

/** Applies `Impersonate-*` headers after checking the `impersonate` verb for each, as kube does. */
function impersonate(d: ServerDeps, req: IncomingMessage, user: UserInfo): UserInfo {
  const h = req.headersDistinct;
  const asUser = h['impersonate-user']?.[0];
  const asGroups = h['impersonate-group'] ?? [];
  const asUid = h['impersonate-uid']?.[0];
  const extraKeys = Object.keys(h).filter((k) => k.startsWith('impersonate-extra-'));
  if (!asUser) {
    if (asGroups.length || asUid || extraKeys.length)
      throw badRequest('requested impersonation without a user: set Impersonate-User as well');
    return user;
  }
  const check = (resource: string, name: string, namespace = '', apiGroup = '') => {
    const info: RequestInfo = {
      isResourceRequest: true,
      path: req.url ?? '',
      verb: 'impersonate',
      apiPrefix: 'api',
      apiGroup,
      apiVersion: 'v1',
      namespace,
      resource,
      subresource: '',
      name,
      parts: [],
    };
    const dec = d.authz.authorize({
      user,
      verb: 'impersonate',
      resourceRequest: true,
      namespace,
      apiGroup,
      resource,
      name,
    });
    if (!dec.allowed) throw forbidden(user, info, dec.reason);
  };
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(asUser);
  if (sa) check('serviceaccounts', sa[2], sa[1]);
  else check('users', asUser);
  for (const g of asGroups) check('groups', g);
  if (asUid) check('uids', asUid, '', 'authentication.k8s.io');
  const extra: Record<string, string[]> = {};
  for (const k of extraKeys) {
    const key = decodeURIComponent(k.slice('impersonate-extra-'.length));
    for (const v of h[k] ?? []) {
      check(`userextras/${key}`, v, '', 'authentication.k8s.io');
      (extra[key] ??= []).push(v);
    }
  }
  let groups = [...asGroups];
  if (sa && !asGroups.length) groups = serviceAccountGroups(sa[1]);
  const out: UserInfo = { username: asUser, groups };
  if (asUid) out.uid = asUid;
  if (Object.keys(extra).length) out.extra = extra;
  if (asUser === 'system:anonymous') {
    if (!groups.includes('system:unauthenticated')) out.groups = [...groups, 'system:unauthenticated'];
    return out;
  }
  return withAuthenticatedGroup(out);
}

async function handle(d: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  const url = new URL(req.url ?? '/', 'https://authority.invalid');
  const user = impersonate(d, req, authenticate(d, req));
  const info = requestInfo(method, url);
  d.authz.check(user, info);
  const head = method === 'HEAD';

  if (!info.isResourceRequest) return nonResource(d, info, url, req, res, head);

  const t = d.registry.get(info.apiGroup, info.apiVersion, info.resource);
  if (!t) throw notFoundPath();
  if (info.namespace && !t.namespaced && !(t.resource === 'namespaces' && !t.group)) throw notFoundPath();
  const ns = t.namespaced ? info.namespace || undefined : undefined;
  // a CRD's deprecated version warns on every request to it, as kube-apiserver does
  if (t.deprecationWarning !== undefined) warn(res, [`299 - ${JSON.stringify(t.deprecationWarning)}`]);
  const q = url.searchParams;
  const dryRun = q.getAll('dryRun').includes('All');
  const manager = writeManager(q.get('fieldManager'), req.headers['user-agent']);
  const body = async () => decodeBody(await readBody(req), String(req.headers['content-type'] ?? 'application/json'));

  if (t.virtual) {
    if (method !== 'POST' || info.name) throw methodNotAllowed();
    const b = await body();
    let out: KubeObject;
    switch (t.resource) {
      case 'tokenreviews':
        out = d.reviews.tokenReview(b);
        break;
      case 'selfsubjectreviews':
        out = d.reviews.selfSubjectReview(user);
        break;
      case 'subjectaccessreviews':
        out = d.reviews.accessReview('SubjectAccessReview', b, user);
        break;
      case 'selfsubjectaccessreviews':
        out = d.reviews.accessReview('SelfSubjectAccessReview', b, user);
        break;
      case 'selfsubjectrulesreviews':
        out = d.reviews.selfSubjectRulesReview(b, user);
        break;
      case 'localsubjectaccessreviews':
        if (!ns) throw methodNotAllowed();
        out = d.reviews.accessReview('LocalSubjectAccessReview', b, user, ns);
        break;
      default:
        throw notFoundPath();
    }
    return send(res, 201, out);
  }

  if (info.subresource) {
    if (t.resource === 'serviceaccounts' && !t.group && info.subresource === 'token') {
      if (method !== 'POST') throw methodNotAllowed();
      return sendWritten(d, res, 201, d.reviews.tokenRequest(ns!, info.name, await body()));
    }
    if (info.subresource === 'scale' && (t.scale || t.builtinScale) && (ns || !t.namespaced)) {
      const warnings: string[] = [];
      let out: KubeObject;
      try {
        out = await scale(d, t, ns, info, method, req, body, { user, dryRun, warnings });
      } finally {
        // warnings reach the client with the answer, a refusal included
        warn(res, warnings);
      }
      return sendWritten(d, res, 200, out, method === 'HEAD');
    }
    if (info.subresource !== 'status' || !t.statusSubresource) throw notFoundPath();
  }
  if (t.namespaced && !ns && ['create', 'get', 'update', 'patch', 'delete'].includes(info.verb)) {
    if (info.verb === 'create') throw methodNotAllowed();
    throw notFoundPath();
  }

  // RBAC writes are checked against the requesting user's own rights (privilege-escalation prevention).
  const admit = isRbacResource(t.group, t.resource)
    ? (next: KubeObject, old: KubeObject | undefined) => admitRbacWrite(d.authz, user, t.resource, next, old)
    : undefined;
  const table = wantsTable(req.headers.accept);
  const webhooks = d.webhooks?.applies(t) ? d.webhooks : undefined;
  const admission = (name: string, warnings: string[], isDryRun = dryRun): AdmittedWriteRequest | undefined =>
    webhooks && {
      webhooks,
      objects: d.objects,
      type: t,
      namespace: ns,
      name,
      subresource: info.subresource ?? '',
      user,
      dryRun: isDryRun,
      warnings,
      ...(converter ? { viewOfStored: inVersion } : {}),
    };
  const writeQuery = { fieldManager: q.get('fieldManager'), fieldValidation: q.get('fieldValidation') };
  // a CRD that converts by webhook: reads convert what is stored, writes go through the storage version
  const converter = d.conversions?.webhookCrd(t) ? d.conversions : undefined;
  const inVersion = async (stored: KubeObject): Promise<KubeObject> =>
    d.objects.present(t, converter ? (await converter.convert(t, [stored], t.version))[0] : stored);
  const converting =
    (name: string, write: (extra: WriteOptions) => KubeObject, isDryRun = dryRun) =>
    (extra: WriteOptions = {}): KubeObject | Promise<KubeObject> =>
      converter
        ? convertedWrite(
            { converter, objects: d.objects, type: t, namespace: ns, name, dryRun: isDryRun },
            write,
            extra,
          )
        : write(extra);
  // warnings reach the client also when admission refuses the write (kube sends them as they are recorded)
  const keepingWarnings = async <T>(warnings: string[], write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } catch (err) {
      warn(res, warnings);
      throw err;
    }
  };
  // PartialObjectMetadata (metadata-only clients) for reads; writes answer objects whatever they ask
  const partial =
    ['get', 'list', 'watch'].includes(info.verb) && !table ? partialMetadataWanted(req.headers.accept) : undefined;
  if (partial) checkPartialForm(t, partial, info.verb === 'list');
  switch (info.verb) {
    case 'get': {
      const stored = converter && d.objects.peek(t, ns, info.name);
      const o = stored ? await inVersion(stored) : d.objects.get(t, ns, info.name);
      if (partial) return send(res, 200, partialOf(o), head);
      return send(
        res,
        200,
        table
          ? toTable(t, [o], { includeObject: q.get('includeObject'), resourceVersion: o.metadata?.resourceVersion })
          : o,
        head,
      );
    }
    case 'list': {
      const page = d.objects.listPage(
        t,
        ns,
        { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') },
        { limit: q.get('limit'), continue: q.get('continue'), resourceVersion: q.get('resourceVersion') },
      );
      const { resourceVersion, ...more } = page;
      delete (more as { items?: unknown }).items;
      const items = converter ? await converter.convert(t, page.items, t.version) : page.items;
      if (table) {
        const tbl = toTable(
          t,
          items.map((o) => d.objects.present(t, o)),
          { includeObject: q.get('includeObject'), resourceVersion },
        );
        tbl.metadata = { ...(tbl.metadata as object), ...more };
        return send(res, 200, tbl, head);
      }
      if (partial)
        return sendList(
          res,
          { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion, ...more } },
          items,
          (o) => partialOf(d.objects.presentShallow(t, o)),
          head,
        );
      return sendList(
        res,
        { kind: t.listKind, apiVersion: apiVersionOf(t), metadata: { resourceVersion, ...more } },
        items,
        (o) => d.objects.presentListItem(t, o),
        head,
      );
    }
    case 'watch': {
      const timeout = q.get('timeoutSeconds');
      const rv = q.get('resourceVersion');
      if (rv && !/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
      if (timeout && !/^\d+$/.test(timeout)) throw badRequest(`invalid timeoutSeconds: ${JSON.stringify(timeout)}`);
      d.hub.serve(
        {
          type: t,
          namespace: ns,
          labelSelector: q.get('labelSelector'),
          fieldSelector: q.get('fieldSelector'),
          resourceVersion: q.get('resourceVersion'),
          allowWatchBookmarks: bool(q.get('allowWatchBookmarks')),
          sendInitialEvents: bool(q.get('sendInitialEvents')),
          timeoutSeconds: timeout ? Number(timeout) : undefined,
          table,
          partialMetadata: !!partial,
          includeObject: q.get('includeObject'),
          bookmarkIntervalMs: d.bookmarkIntervalMs,
          ...(converter ? { convert: async (o: KubeObject) => (await converter.convert(t, [o], t.version))[0] } : {}),
        },
        res,
      );
      return;
    }
    case 'create': {
      if (info.name) throw methodNotAllowed();
      checkWriteOptions('CreateOptions', q, false);
      const b = await body();
      const warnings = checkFields(t, b, q.get('fieldValidation'));
      checkTypes(t, b);
      const w = { dryRun, admit, manager, fieldValidation: q.get('fieldValidation'), warnings };
      const a = admission('', warnings);
      const create = converting('', (extra) => d.objects.create(t, ns, b as KubeObject, { ...w, ...extra }));
      const out = a
        ? await keepingWarnings(warnings, () => admittedWrite({ ...a, operation: 'CREATE', ...writeQuery }, create))
        : await create();
      warn(res, warnings);
      return sendWritten(d, res, 201, out);
    }
    case 'update': {
      checkWriteOptions('UpdateOptions', q, false);
      const b = await body();
      const warnings = checkFields(t, b, q.get('fieldValidation'));
      checkTypes(t, b);
      const w = {
        dryRun,
        admit,
        subresource: info.subresource,
        manager,
        fieldValidation: q.get('fieldValidation'),
        warnings,
      };
      const a = admission(info.name, warnings);
      const update = converting(info.name, (extra) =>
        d.objects.update(t, ns, info.name, b as KubeObject, { ...w, ...extra }),
      );
      const out = a
        ? await keepingWarnings(warnings, () => admittedWrite({ ...a, operation: 'UPDATE', ...writeQuery }, update))
        : await update();
      warn(res, warnings);
      return sendWritten(d, res, 200, out);
    }
    case 'patch': {
      const ct = String(req.headers['content-type'] ?? '');
      checkWriteOptions('PatchOptions', q, ct.split(';')[0].trim() === 'application/apply-patch+yaml');
      const existed = !!d.objects.peek(t, ns, info.name);
      const b = await body();
      // an apply configuration is checked as a body; other patches in their result (objects.ts), as kube does
      const isApply = ct.split(';')[0].trim() === 'application/apply-patch+yaml';
      const warnings = isApply ? checkFields(t, b, q.get('fieldValidation')) : [];
      const w = {
        dryRun,
        admit,
        subresource: info.subresource,
        fieldManager: q.get('fieldManager') ?? undefined,
        manager,
        force: q.get('force') === 'true',
        fieldValidation: q.get('fieldValidation'),
        warnings,
      };
      const a = admission(info.name, warnings);
      const patch = converting(info.name, (extra) => d.objects.patch(t, ns, info.name, ct, b, { ...w, ...extra }));
      const out = a
        ? await keepingWarnings(warnings, () =>
            admittedWrite({ ...a, operation: existed ? 'UPDATE' : 'CREATE', ...writeQuery }, patch),
          )
        : await patch();
      warn(res, warnings);
      return sendWritten(d, res, existed ? 200 : 201, out);
    }
    case 'delete': {
      const b = (await body()) as KubeObject | undefined;
      const opts = b && typeof b === 'object' ? b : {};
      const fromQuery = (k: string) => q.get(k) ?? undefined;
      const bad = deleteOptionsError({
        propagationPolicy: opts.propagationPolicy ?? fromQuery('propagationPolicy'),
        orphanDependents: opts.orphanDependents ?? fromQuery('orphanDependents'),
        dryRun: Array.isArray(opts.dryRun) ? opts.dryRun : q.getAll('dryRun'),
      });
      if (bad) throw bad;
      const pre = opts.preconditions as { uid?: string; resourceVersion?: string } | undefined;
      const isDryRun = dryRun || (Array.isArray(opts.dryRun) && opts.dryRun.includes('All'));
      const remove = () => d.objects.delete(t, ns, info.name, { dryRun: isDryRun, preconditions: pre });
      const warnings: string[] = [];
      const a = admission(info.name, warnings, isDryRun);
      // the answer is the stored object: in the version it was stored in, converted to the request's
      const storedVersion = converter ? d.objects.peek(t, ns, info.name)?.apiVersion : undefined;
      let out = a
        ? await keepingWarnings(warnings, () =>
            admittedDelete({ ...a, deleteOptions: { ...opts, ...(isDryRun ? { dryRun: ['All'] } : {}) } }, remove),
          )
        : remove();
      if (storedVersion) out = await inVersion({ ...out, apiVersion: storedVersion });
      warn(res, warnings);
      return sendWritten(d, res, 200, out);
    }
    case 'deletecollection': {
      const sel = { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') };
      // DeleteOptions come in the body as for one object's delete (kube decodes them there), or the query
      const b = (await body()) as KubeObject | undefined;
      const opts = b && typeof b === 'object' ? b : {};
      const bad = deleteOptionsError({
        propagationPolicy: opts.propagationPolicy ?? q.get('propagationPolicy') ?? undefined,
        orphanDependents: opts.orphanDependents ?? q.get('orphanDependents') ?? undefined,
        dryRun: Array.isArray(opts.dryRun) ? opts.dryRun : q.getAll('dryRun'),
      });
      if (bad) throw bad;
      const isDryRun = dryRun || (Array.isArray(opts.dryRun) && opts.dryRun.includes('All'));
      // the answer lists the objects as they were before the delete, converted to the request's version
      const stored = converter
        ? d.objects.listPage(t, ns, sel, { limit: null, continue: null, resourceVersion: null }).items
        : [];
      const answerItems = async (items: KubeObject[]) =>
        converter ? (await converter.convert(t, stored, t.version)).map((o) => d.objects.present(t, o)) : items;
      if (!webhooks) {
        const out = d.objects.deleteCollection(t, ns, sel, { dryRun: isDryRun });
        return sendWritten(d, res, 200, { ...out, items: await answerItems(out.items as KubeObject[]) });
      }
      // each object's delete goes through admission, as kube's collection delete admits each one
      const warnings: string[] = [];
      const { items } = d.objects.list(t, ns, sel);
      for (const o of items) {
        const each = {
          ...admission(String(o.metadata.name), warnings)!,
          namespace: t.namespaced ? String(o.metadata.namespace) : undefined,
        };
        await admittedDelete({ ...each, deleteOptions: isDryRun ? { dryRun: ['All'] } : {} }, () =>
          d.objects.delete(t, each.namespace, each.name, { dryRun: isDryRun }),
        );
      }
      warn(res, warnings);
      return sendWritten(d, res, 200, {
        kind: t.listKind,
        apiVersion: apiVersionOf(t),
        metadata: { resourceVersion: d.objects.list(t, ns, {}).resourceVersion },
        items: await answerItems(items),
      });
    }
    default:
      throw methodNotAllowed();
  }
}

/**
 * A built-in kind's selector as a Scale's `status.selector` text: a ReplicationController's map, or a LabelSelector
 * (`matchLabels` and `matchExpressions`), its requirements sorted by key as apimachinery writes them.
 */
function selectorText(selector: unknown): string {
  if (!selector || typeof selector !== 'object') return '';
  const s = selector as KubeObject;
  const isLabelSelector = 'matchLabels' in s || 'matchExpressions' in s;
  const labels: Record<string, unknown> = isLabelSelector ? (s.matchLabels ?? {}) : s;
  const parts: Array<[string, string]> = Object.entries(labels).map(([k, v]) => [k, `${k}=${String(v)}`]);
  for (const e of isLabelSelector && Array.isArray(s.matchExpressions) ? s.matchExpressions : []) {
    const key = String(e?.key ?? '');
    const values = Array.isArray(e?.values) ? [...e.values].map(String).sort().join(',') : '';
    if (e?.operator === 'In') parts.push([key, `${key} in (${values})`]);
    else if (e?.operator === 'NotIn') parts.push([key, `${key} notin (${values})`]);
    else if (e?.operator === 'Exists') parts.push([key, key]);
    else if (e?.operator === 'DoesNotExist') parts.push([key, `!${key}`]);
  }
  return parts
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}

/** The value at a CRD scale path (`.spec.replicas`). */
function atPath(o: KubeObject, path: string): unknown {
  return path
    .split('.')
    .filter(Boolean)
    .reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as KubeObject)[k] : undefined), o);
}

/** A merge patch that sets a CRD scale path. */
function patchAt(path: string, value: unknown): KubeObject {
  return path
    .split('.')
    .filter(Boolean)
    .reduceRight<unknown>((v, k) => ({ [k]: v }), value) as KubeObject;
}

/** `/scale` of a built-in workload (Deployment, ReplicaSet, StatefulSet, ReplicationController), or of a custom resource through its CRD's scale paths. */
async function scale(
  d: ServerDeps,
  t: ResourceType,
  ns: string | undefined,
  info: RequestInfo,
  method: string,
  req: IncomingMessage,
  body: () => Promise<unknown>,
  a: { user: UserInfo; dryRun: boolean; warnings: string[] },
): Promise<KubeObject> {
  const paths = t.scale;
  const view = (o: KubeObject): KubeObject => {
    const m = o.metadata;
    const metadata = {
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    };
    if (paths) {
      const selector = paths.labelSelectorPath ? atPath(o, paths.labelSelectorPath) : undefined;
      return {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata,
        spec: { replicas: Number(atPath(o, paths.specReplicasPath) ?? 0) },
        status: {
          replicas: Number(atPath(o, paths.statusReplicasPath) ?? 0),
          ...(typeof selector === 'string' && selector ? { selector } : {}),
        },
      };
    }
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata,
      spec: { replicas: o.spec?.replicas ?? 1 },
      status: { replicas: o.status?.replicas ?? 0, selector: selectorText(o.spec?.selector) },
    };
  };
  // a CRD converting by webhook: the Scale is read from, and written through, the object in the request's version
  const converter = d.conversions?.webhookCrd(t) ? d.conversions : undefined;
  const read = async (): Promise<KubeObject> => {
    const stored = converter && d.objects.peek(t, ns, info.name);
    return stored
      ? d.objects.present(t, (await converter.convert(t, [stored], t.version))[0])
      : d.objects.get(t, ns, info.name);
  };
  const patchObject = async (p: KubeObject, dryRun: boolean): Promise<KubeObject> => {
    const write = (extra: WriteOptions) =>
      d.objects.patch(t, ns, info.name, 'application/merge-patch+json', p, { dryRun, ...extra });
    return converter
      ? convertedWrite({ converter, objects: d.objects, type: t, namespace: ns, name: info.name, dryRun }, write)
      : write({});
  };
  const current = view(await read());
  if (method === 'GET' || method === 'HEAD') return current;
  let wanted: KubeObject;
  if (method === 'PATCH') wanted = applyPatch(String(req.headers['content-type'] ?? ''), current, await body());
  else if (method === 'PUT') wanted = (await body()) ?? {};
  else throw methodNotAllowed();
  // admission sees the Scale (autoscaling/v1) of the resource's scale subresource, as kube-apiserver sends it
  const webhooks = d.webhooks?.applies(t) ? d.webhooks : undefined;
  const recorder = webhooks && new WarningRecorder(a.warnings);
  const admission: AdmissionRequest | undefined = webhooks && {
    type: t,
    group: t.group,
    version: t.version,
    resource: t.resource,
    subresource: 'scale',
    namespace: ns ?? '',
    name: info.name,
    operation: 'UPDATE',
    user: a.user,
    dryRun: a.dryRun,
    options: { kind: 'UpdateOptions', apiVersion: 'meta.k8s.io/v1', ...(a.dryRun ? { dryRun: ['All'] } : {}) },
    object: wanted,
    oldObject: current,
    objectKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
  };
  if (webhooks && admission && recorder) wanted = (await webhooks.mutate(admission, recorder)) ?? wanted;
  const replicas = wanted?.spec?.replicas;
  if (!Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale', 'autoscaling', info.name, [
      {
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
      },
    ]);
  }
  const rv = wanted?.metadata?.resourceVersion;
  const patch: KubeObject = {
    ...(paths ? patchAt(paths.specReplicasPath, replicas) : { spec: { replicas } }),
    ...(rv ? { metadata: { resourceVersion: rv } } : {}),
  };
  if (webhooks && admission && recorder) {
    const final = view(await patchObject(patch, true));
    await webhooks.validate({ ...admission, object: final }, recorder);
  }
  return view(await patchObject(patch, a.dryRun));
}

function nonResource(
  d: ServerDeps,
  info: RequestInfo,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  head: boolean,
): void {
  const path = info.path.replace(/\/+$/, '') || '/';
  const get = req.method === 'GET' || head;
  if (d.nonResource?.(path, req, res)) return;
  if (!get) throw methodNotAllowed();
  if (path === '/version') return send(res, 200, versionInfo(), head);
  if (path === '/healthz' || path === '/livez' || path === '/readyz') {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    res.end(head ? undefined : 'ok');
    return;
  }
  if (path === '/api') return send(res, 200, coreVersions(d.serverAddress()), head);
  if (path === '/apis') return send(res, 200, apiGroupList(d.registry), head);
  if (
    serveIssuerDiscovery(
      {
        issuer: d.signer.issuer,
        serverAddress: () => d.serverAddress(),
        keys: () => [d.signer.jwk()],
        algorithm: 'ES256',
      },
      path,
      req,
      res,
    )
  )
    return;
  // discovery of one group (`/apis/<g>`) or one group version (`/api/v1`, `/apis/<g>/<v>`)
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)(?:\/([^/]+))?)$/.exec(path);
  if (m) {
    if (m[1]) return send(res, 200, apiResourceList(d.registry, '', 'v1'), head);
    if (m[2] && !m[3]) {
      const g = apiGroup(d.registry, m[2]);
      if (!g) throw notFoundPath();
      return send(res, 200, g, head);
    }
    const list = apiResourceList(d.registry, m[2], m[3]);
    if (!list) throw notFoundPath();
    return send(res, 200, list, head);
  }
  void url;
  throw notFoundPath();
}

export type { ResourceType };

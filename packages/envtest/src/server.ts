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
import type { KubeObject, ResourceType } from './types.js';
import { record, records, type JsonObject } from './json.js';
import { apiGroup, apiGroupList, apiResourceList, coreVersions, versionInfo } from './discovery.js';
import { serveIssuerDiscovery } from './issuer-discovery.js';
import { WarningRecorder, type AdmissionRequest } from './webhook-admission.js';
import type { WriteOptions } from './objects.js';
import { convertedWrite } from './converted-writes.js';
import type { ServerDeps } from './server-deps.js';
import {
  decodeBody,
  notFoundPath,
  prettyResponses,
  readBody,
  send,
  sendError,
  sendWritten,
  wantsPretty,
  warn,
  writeManager,
} from './responses.js';

import { VERB_HANDLERS, resourceRequest } from './handlers/index.js';

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
    let out: JsonObject;
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

  const verb = Object.hasOwn(VERB_HANDLERS, info.verb) ? VERB_HANDLERS[info.verb] : undefined;
  if (!verb) throw methodNotAllowed();
  return verb(resourceRequest({ d, req, res, t, ns, info, user, q, head, dryRun, manager, body }));
}

/**
 * A built-in kind's selector as a Scale's `status.selector` text: a ReplicationController's map, or a LabelSelector
 * (`matchLabels` and `matchExpressions`), its requirements sorted by key as apimachinery writes them.
 */
function selectorText(selector: unknown): string {
  const s = record(selector);
  if (!s) return '';
  const isLabelSelector = 'matchLabels' in s || 'matchExpressions' in s;
  const labels = isLabelSelector ? (record(s.matchLabels) ?? {}) : s;
  const parts: Array<[string, string]> = Object.entries(labels).map(([k, v]) => [k, `${k}=${String(v)}`]);
  for (const e of isLabelSelector ? records(s.matchExpressions) : []) {
    const key = String(e.key ?? '');
    const values = Array.isArray(e.values) ? [...e.values].map(String).sort().join(',') : '';
    if (e.operator === 'In') parts.push([key, `${key} in (${values})`]);
    else if (e.operator === 'NotIn') parts.push([key, `${key} notin (${values})`]);
    else if (e.operator === 'Exists') parts.push([key, key]);
    else if (e.operator === 'DoesNotExist') parts.push([key, `!${key}`]);
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
    .reduce<unknown>((v, k) => record(v)?.[k], o);
}

/** A merge patch that sets a CRD scale path. */
function patchAt(path: string, value: unknown): JsonObject {
  let out: unknown = value;
  for (const k of path.split('.').filter(Boolean).reverse()) out = { [k]: out };
  return record(out) ?? {};
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
    const m = o.metadata ?? {};
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
      spec: { replicas: record(o.spec)?.replicas ?? 1 },
      status: { replicas: record(o.status)?.replicas ?? 0, selector: selectorText(record(o.spec)?.selector) },
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
  const patchObject = async (p: JsonObject, dryRun: boolean): Promise<KubeObject> => {
    const write = (extra: WriteOptions) =>
      d.objects.patch(t, ns, info.name, 'application/merge-patch+json', p, { dryRun, ...extra });
    return converter
      ? convertedWrite({ converter, objects: d.objects, type: t, namespace: ns, name: info.name, dryRun }, write)
      : write({});
  };
  const current = view(await read());
  if (method === 'GET' || method === 'HEAD') return current;
  // the Scale as the client wants it: unknown until its fields are read below
  let wanted: JsonObject;
  if (method === 'PATCH')
    wanted = record(applyPatch(String(req.headers['content-type'] ?? ''), current, await body())) ?? {};
  else if (method === 'PUT') wanted = record(await body()) ?? {};
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
  const replicas = record(wanted.spec)?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw invalid('Scale', 'autoscaling', info.name, [
      {
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
      },
    ]);
  }
  // passed on as sent: the store refuses a resourceVersion that is not a string
  const rv = record(wanted.metadata)?.resourceVersion;
  const patch: JsonObject = {
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

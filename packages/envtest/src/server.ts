/**
 * The HTTP layer of the authority: authentication (bearer tokens, anonymous), impersonation, RBAC authorization of
 * every request, then discovery, objects, watches and the review endpoints, with errors as `Status` objects.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from './rbac.js';
import { serviceAccountGroups, withAuthenticatedGroup } from './authn.js';
import { forbidden } from './authz.js';
import { requestInfo, type RequestInfo } from './requestinfo.js';
import { ApiError, badRequest, methodNotAllowed, unauthorized, internalError } from './status.js';
import type { ResourceType } from './types.js';
import { apiGroup, apiGroupList, apiResourceList, coreVersions, versionInfo } from './discovery.js';
import { serveIssuerDiscovery } from './issuer-discovery.js';
import type { ServerDeps } from './server-deps.js';
import {
  decodeBody,
  notFoundPath,
  prettyResponses,
  readBody,
  send,
  sendError,
  wantsPretty,
  warn,
  writeManager,
} from './responses.js';

import { VERB_HANDLERS, resourceRequest, review, scale, serviceAccountToken } from './handlers/index.js';

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

  if (t.virtual) return review(d, res, t, ns, info, method, user, body);

  if (info.subresource) {
    if (t.resource === 'serviceaccounts' && !t.group && info.subresource === 'token')
      return serviceAccountToken(d, res, ns, info, method, body);
    if (info.subresource === 'scale' && (t.scale || t.builtinScale) && (ns || !t.namespaced))
      return scale(d, res, t, ns, info, method, req, body, { user, dryRun });
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

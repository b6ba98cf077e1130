/**
 * Request attributes derived from the URL and method exactly as kube-apiserver's RequestInfoFactory does:
 * resource requests under `/api` and `/apis`, everything else a non-resource request with the lowercased method as verb.
 */

/** What a request is about. */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: string;
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The path parts after `/api/v1` or `/apis/<g>/<v>` (for discovery routing). */
  parts: string[];
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function truthy(v: string | null): boolean {
  return v === 'true' || v === '1' || v === 'True' || v === 'TRUE';
}

/** Builds the request info for a method and URL. */
export function requestInfo(method: string, url: URL): RequestInfo {
  const path = url.pathname;
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts: [],
  };
  let parts = path
    .replace(/^\/+|\/+$/g, '')
    .split('/')
    .filter((p) => p.length > 0)
    .map(safeDecode);
  if (parts.length < 2 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  info.apiPrefix = parts[0]!;
  parts = parts.slice(1);
  if (info.apiPrefix === 'apis') {
    if (parts.length < 2) return info;
    info.apiGroup = parts[0]!;
    parts = parts.slice(1);
  }
  info.apiVersion = parts[0]!;
  parts = parts.slice(1);
  info.parts = parts;
  if (parts.length === 0) return info; // discovery of a group version
  info.isResourceRequest = true;

  let legacyWatch = false;
  if (parts[0] === 'watch') {
    legacyWatch = true;
    parts = parts.slice(1);
  }
  switch (method) {
    case 'POST':
      info.verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      info.verb = 'get';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = 'delete';
      break;
    default:
      info.verb = '';
  }
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      info.namespace = parts[1]!;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2])) parts = parts.slice(2);
    }
  }
  info.resource = parts[0] ?? '';
  if (parts.length >= 2) info.name = parts[1]!;
  if (parts.length >= 3) info.subresource = parts[2]!;

  if (legacyWatch) info.verb = 'watch';
  else if (info.verb === 'get' && !info.name) info.verb = truthy(url.searchParams.get('watch')) ? 'watch' : 'list';
  if (info.verb === 'delete' && !info.name) info.verb = 'deletecollection';
  if ((info.verb === 'list' || info.verb === 'watch') && !info.name) {
    const fs = url.searchParams.get('fieldSelector');
    const m = fs ? /^metadata\.name==?([^,]+)$/.exec(fs) : null;
    if (m) info.name = m[1]!;
  }
  return info;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

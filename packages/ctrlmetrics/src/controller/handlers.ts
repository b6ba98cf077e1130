/**
 * Mapping watch specs to API paths, and informer events to reconcile requests.
 */
import type { EnqueueMode, EventType, KubeObject, Request, WatchSpec } from './types.js';

/** The plural resource name of a kind, unless the spec names it. */
export function resourceOf(spec: Pick<WatchSpec, 'kind' | 'resource'>): string {
  if (spec.resource) return spec.resource;
  const k = spec.kind.toLowerCase();
  if (/(s|x|ch|sh)$/.test(k)) return k + 'es';
  if (/[^aeiou]y$/.test(k)) return k.slice(0, -1) + 'ies';
  return k + 's';
}

/** The collection path of a watch, e.g. `/api/v1/namespaces/ns/configmaps` or `/apis/apps/v1/deployments`. */
export function collectionPath(spec: WatchSpec): string {
  const base = spec.apiVersion.includes('/') ? `/apis/${spec.apiVersion}` : `/api/${spec.apiVersion}`;
  const ns = spec.namespace && !spec.clusterScoped ? `/namespaces/${encodeURIComponent(spec.namespace)}` : '';
  return `${base}${ns}/${resourceOf(spec)}`;
}

/** The group of an apiVersion (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** The requests one event maps to under `mode`. */
export function requestsFor(mode: EnqueueMode | undefined, obj: KubeObject, event: EventType): Request[] {
  if (typeof mode === 'function') return mode(obj, event);
  const md = obj.metadata ?? {};
  if (mode === undefined || mode === 'self') {
    if (!md.name) return [];
    return [md.namespace ? { namespace: md.namespace, name: md.name } : { name: md.name }];
  }
  const owner = (md.ownerReferences ?? []).find(
    (r) =>
      r.controller === true &&
      r.kind === mode.ownerKind &&
      (mode.ownerApiVersion === undefined || groupOf(r.apiVersion) === groupOf(mode.ownerApiVersion)),
  );
  if (!owner) return [];
  return [md.namespace ? { namespace: md.namespace, name: owner.name } : { name: owner.name }];
}

/** The queue key of a request: `namespace/name` or `name`. */
export function requestKey(req: Request): string {
  return req.namespace ? `${req.namespace}/${req.name}` : req.name;
}

/** The request of a queue key. */
export function keyRequest(key: string): Request {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

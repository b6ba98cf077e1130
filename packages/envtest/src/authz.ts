/**
 * Authorization of requests to the authority (and of SubjectAccessReviews) by the RBAC evaluator over the stored
 * RBAC objects, with kube's Forbidden message shape.
 */
import {
  authorize,
  rulesFor,
  type PolicyRule,
  type AuthzAttributes,
  type AuthzDecision,
  type RbacObjects,
} from './rbac.js';
import type { Store } from './store.js';
import { ApiError, qualifiedResource } from './status.js';
import type { RequestInfo } from './requestinfo.js';
import type { UserInfo } from './rbac.js';

const RBAC_KEYS = new Set([
  'clusterroles.rbac.authorization.k8s.io',
  'clusterrolebindings.rbac.authorization.k8s.io',
  'roles.rbac.authorization.k8s.io',
  'rolebindings.rbac.authorization.k8s.io',
]);

/** RBAC over the store, with the RBAC object lists cached until an RBAC object changes. */
export class Authorizer {
  private cached?: RbacObjects;

  constructor(private readonly store: Store) {
    store.subscribe((ev) => {
      if (RBAC_KEYS.has(ev.key)) this.cached = undefined;
    });
  }

  /** Drops the cache (after the store was reloaded). */
  invalidate(): void {
    this.cached = undefined;
  }

  /** The stored RBAC objects (cached until one changes; do not mutate). */
  objects(): RbacObjects {
    if (!this.cached) {
      // RBAC objects are validated when written (rbac-admission.ts): their fields have RBAC's shapes
      const list = <T>(resource: string) => this.store.list(`${resource}.rbac.authorization.k8s.io`) as unknown as T[];
      this.cached = {
        clusterRoles: list('clusterroles'),
        clusterRoleBindings: list('clusterrolebindings'),
        roles: list('roles'),
        roleBindings: list('rolebindings'),
      };
    }
    return this.cached;
  }

  authorize(attrs: AuthzAttributes): AuthzDecision {
    return authorize(this.objects(), attrs);
  }

  /** The RBAC rules that apply to a user in a namespace, and the role references that could not be resolved. */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    return rulesFor(this.objects(), user, namespace);
  }

  /** Authorizes an API request; throws a 403 `Status` shaped like kube-apiserver's when denied. */
  check(user: UserInfo, info: RequestInfo): void {
    const attrs: AuthzAttributes = info.isResourceRequest
      ? {
          user,
          verb: info.verb,
          resourceRequest: true,
          namespace: info.namespace,
          apiGroup: info.apiGroup,
          resource: info.resource,
          subresource: info.subresource,
          name: info.name,
        }
      : { user, verb: info.verb, resourceRequest: false, path: info.path };
    const d = this.authorize(attrs);
    if (!d.allowed) throw forbidden(user, info, d.reason);
  }
}

/** kube's Forbidden message: `<res> "<name>" is forbidden: User "<u>" cannot <verb> resource "<res>" in API group "<g>" ...`. */
export function forbidden(user: UserInfo, info: RequestInfo, reason: string): ApiError {
  let msg: string;
  // kube's NewForbidden always sets details; without a resource all its members are empty: `"details": {}`
  let details: ApiError['details'] = {};
  if (!info.isResourceRequest) {
    msg = `forbidden: User "${user.username}" cannot ${info.verb} path "${info.path}"`;
  } else {
    const res = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    const subject = info.name
      ? `${qualifiedResource(info.resource, info.apiGroup)} "${info.name}"`
      : qualifiedResource(info.resource, info.apiGroup);
    const scope = info.namespace ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
    msg = `${subject} is forbidden: User "${user.username}" cannot ${info.verb} resource "${res}" in API group "${info.apiGroup}" ${scope}`;
    details = { name: info.name || undefined, group: info.apiGroup, kind: info.resource };
  }
  if (reason) msg += `: ${reason}`;
  return new ApiError(403, 'Forbidden', msg, details);
}

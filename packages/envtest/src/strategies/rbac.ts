/**
 * RBAC's four resources (roles, clusterroles, rolebindings, clusterrolebindings): kube's checks of rules, role
 * references and subjects; a binding's subjects get their API group; ClusterRoles with an `aggregationRule` get the
 * union of the rules of the ClusterRoles they select, as kube's aggregation controller writes it.
 */
import { isDeepStrictEqual } from 'node:util';
import { defaultSubjects, validateRbacObject } from '../rbac-admission.js';
import { resolveAggregatedRules, type ClusterRole } from '../rbac.js';
import type { Store } from '../store.js';
import type { Strategy } from './strategy.js';

const CLUSTER_ROLE_KEY = 'clusterroles.rbac.authorization.k8s.io';

/** Writes the union of the selected ClusterRoles' rules into each aggregating ClusterRole that differs. */
export function aggregateClusterRoles(store: Store): void {
  // validated when written (rbac-admission.ts): their fields have RBAC's shapes
  const roles = store.list(CLUSTER_ROLE_KEY) as unknown as ClusterRole[];
  const objs = { clusterRoles: roles, clusterRoleBindings: [], roles: [], roleBindings: [] };
  for (const r of roles) {
    if (!r.aggregationRule) continue;
    const rules = resolveAggregatedRules(objs, r);
    if (JSON.stringify(rules) === JSON.stringify(r.rules ?? [])) continue;
    store.put(CLUSTER_ROLE_KEY, { ...structuredClone(r), rules: structuredClone(rules) });
  }
}

const role = (resource: string): Strategy => ({ validate: (o) => validateRbacObject(resource, o) });
const binding = (resource: string): Strategy => ({
  validate: (o) => validateRbacObject(resource, o),
  // a binding's role is fixed: another role means another binding
  validateUpdate: (o, old) =>
    isDeepStrictEqual(old.roleRef, o.roleRef)
      ? []
      : [{ field: 'roleRef', message: `Invalid value: ${JSON.stringify(o.roleRef ?? null)}: cannot change roleRef` }],
  prepare: (o) => defaultSubjects(o),
});

export const roles = role('roles');
export const clusterroles: Strategy = {
  ...role('clusterroles'),
  afterWrite: (_now, _old, ctx) => aggregateClusterRoles(ctx.store),
};
export const rolebindings = binding('rolebindings');
export const clusterrolebindings = binding('clusterrolebindings');

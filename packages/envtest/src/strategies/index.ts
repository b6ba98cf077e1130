/**
 * The strategies of the resources that have one, by resource (`<resource>.<group>`, a core resource by its name):
 * each in the file named after its resource (rbac.ts holds RBAC's four). A resource without one is stored as its
 * built-in defaults and validation (builtin-defaults.ts, builtin-validation.ts) or its CRD's schema leave it.
 */
import { configmaps } from './configmaps.js';
import { customresourcedefinitions } from './customresourcedefinitions.js';
import { namespaces } from './namespaces.js';
import { nodes } from './nodes.js';
import { jobs } from './jobs.js';
import { pods } from './pods.js';
import { clusterrolebindings, clusterroles, rolebindings, roles } from './rbac.js';
import { secrets } from './secrets.js';
import { services } from './services.js';
import { mutatingwebhookconfigurations, validatingwebhookconfigurations } from './webhookconfigurations.js';
import type { Strategy } from './strategy.js';

export type { Strategy, StrategyContext } from './strategy.js';
export { aggregateClusterRoles } from './rbac.js';

const STRATEGIES: ReadonlyMap<string, Strategy> = new Map([
  ['namespaces', namespaces],
  ['nodes', nodes],
  ['pods', pods],
  ['jobs.batch', jobs],
  ['configmaps', configmaps],
  ['secrets', secrets],
  ['services', services],
  ['customresourcedefinitions.apiextensions.k8s.io', customresourcedefinitions],
  ['mutatingwebhookconfigurations.admissionregistration.k8s.io', mutatingwebhookconfigurations],
  ['validatingwebhookconfigurations.admissionregistration.k8s.io', validatingwebhookconfigurations],
  ['roles.rbac.authorization.k8s.io', roles],
  ['clusterroles.rbac.authorization.k8s.io', clusterroles],
  ['rolebindings.rbac.authorization.k8s.io', rolebindings],
  ['clusterrolebindings.rbac.authorization.k8s.io', clusterrolebindings],
]);

/** The strategy of a built-in resource (`group`, plural `resource`); undefined for one without and for custom resources. */
export function strategyFor(t: { group: string; resource: string; crd?: string }): Strategy | undefined {
  if (t.crd) return undefined;
  return STRATEGIES.get(t.group ? `${t.resource}.${t.group}` : t.resource);
}

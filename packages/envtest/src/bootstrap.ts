/**
 * The bootstrap RBAC policy of a fresh cluster (the subset that matters to the embedded authority): the default
 * ClusterRoles and ClusterRoleBindings kube-apiserver (1.32) creates on start, with their real rules, labels
 * (`kubernetes.io/bootstrapping: rbac-defaults`) and the `rbac.authorization.kubernetes.io/autoupdate` annotation.
 *
 * Consequences, as in a real cluster: everyone (even unauthenticated) may `get` /healthz, /livez, /readyz, /version;
 * every authenticated user may also `get` the discovery paths (/api, /apis, /openapi and below) and create
 * SelfSubjectAccessReviews/SelfSubjectRulesReviews/SelfSubjectReviews; every service account may `get` the issuer
 * discovery documents; nobody but `system:masters` (cluster-admin) and the `system:monitoring` group may `get`
 * /metrics. `admin`, `edit` and `view` are aggregated from the `system:aggregate-to-*` roles via the
 * `rbac.authorization.k8s.io/aggregate-to-*` labels; their stored `rules` are left empty: the evaluator resolves
 * aggregation live.
 */
import type { ClusterRole, ClusterRoleBinding, PolicyRule } from './rbac.js';

const RBAC_API_VERSION = 'rbac.authorization.k8s.io/v1';
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** The label every bootstrap RBAC object carries. */
export const BOOTSTRAP_LABEL = { key: 'kubernetes.io/bootstrapping', value: 'rbac-defaults' } as const;
/** Annotation telling kube-apiserver to reconcile the object on start. */
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';

export const AGGREGATE_TO_ADMIN = 'rbac.authorization.k8s.io/aggregate-to-admin';
export const AGGREGATE_TO_EDIT = 'rbac.authorization.k8s.io/aggregate-to-edit';
export const AGGREGATE_TO_VIEW = 'rbac.authorization.k8s.io/aggregate-to-view';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const READ_WRITE = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function rule(verbs: string[], apiGroups: string[], resources: string[]): PolicyRule {
  return { apiGroups, resources, verbs };
}

function urls(verbs: string[], nonResourceURLs: string[]): PolicyRule {
  return { nonResourceURLs, verbs };
}

function meta(name: string, extraLabels: Record<string, string> = {}): ClusterRole['metadata'] {
  return {
    name,
    labels: { ...extraLabels, [BOOTSTRAP_LABEL.key]: BOOTSTRAP_LABEL.value },
    annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  };
}

function clusterRole(name: string, rules: PolicyRule[], labels: Record<string, string> = {}): ClusterRole {
  return { apiVersion: RBAC_API_VERSION, kind: 'ClusterRole', metadata: meta(name, labels), rules };
}

function aggregatedRole(name: string, selectLabel: string, labels: Record<string, string> = {}): ClusterRole {
  return {
    apiVersion: RBAC_API_VERSION,
    kind: 'ClusterRole',
    metadata: meta(name, labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selectLabel]: 'true' } }] },
    rules: [],
  };
}

function groupBinding(name: string, roleName: string, groups: string[]): ClusterRoleBinding {
  return {
    apiVersion: RBAC_API_VERSION,
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleName },
    subjects: groups.map((g) => ({ apiGroup: RBAC_GROUP, kind: 'Group', name: g })),
  };
}

/** The bootstrap ClusterRoles (fresh objects on every call). */
export function bootstrapClusterRoles(): ClusterRole[] {
  return [
    clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])]),
    clusterRole('system:discovery', [
      urls(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ]),
    clusterRole('system:public-info-viewer', [
      urls(['get'], ['/healthz', '/livez', '/readyz', '/version', '/version/']),
    ]),
    clusterRole('system:basic-user', [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ]),
    clusterRole('system:auth-delegator', [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ]),
    clusterRole('system:monitoring', [
      urls(
        ['get'],
        ['/healthz', '/healthz/*', '/livez', '/livez/*', '/metrics', '/metrics/slis', '/readyz', '/readyz/*'],
      ),
    ]),
    clusterRole('system:service-account-issuer-discovery', [
      urls(
        ['get'],
        [
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ],
      ),
    ]),
    aggregatedRole('admin', AGGREGATE_TO_ADMIN),
    aggregatedRole('edit', AGGREGATE_TO_EDIT, { [AGGREGATE_TO_ADMIN]: 'true' }),
    aggregatedRole('view', AGGREGATE_TO_VIEW, { [AGGREGATE_TO_EDIT]: 'true' }),
    clusterRole(
      'system:aggregate-to-admin',
      [
        rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
        rule(READ_WRITE, [RBAC_GROUP], ['rolebindings', 'roles']),
      ],
      { [AGGREGATE_TO_ADMIN]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-edit',
      [
        rule(READ, [''], ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy']),
        rule(['impersonate'], [''], ['serviceaccounts']),
        rule(WRITE, [''], ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy']),
        rule(['create'], [''], ['pods/eviction']),
        rule(
          WRITE,
          [''],
          [
            'configmaps',
            'persistentvolumeclaims',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'secrets',
            'serviceaccounts',
            'services',
            'services/proxy',
          ],
        ),
        rule(['create'], [''], ['serviceaccounts/token']),
        rule(
          WRITE,
          ['apps'],
          [
            'daemonsets',
            'deployments',
            'deployments/rollback',
            'deployments/scale',
            'replicasets',
            'replicasets/scale',
            'statefulsets',
            'statefulsets/scale',
          ],
        ),
        rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
        rule(WRITE, ['batch'], ['cronjobs', 'jobs']),
        rule(
          WRITE,
          ['extensions'],
          [
            'daemonsets',
            'deployments',
            'deployments/rollback',
            'deployments/scale',
            'ingresses',
            'networkpolicies',
            'replicasets',
            'replicasets/scale',
            'replicationcontrollers/scale',
          ],
        ),
        rule(WRITE, ['policy'], ['poddisruptionbudgets']),
        rule(WRITE, ['networking.k8s.io'], ['ingresses', 'networkpolicies']),
      ],
      { [AGGREGATE_TO_EDIT]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        rule(
          READ,
          [''],
          [
            'configmaps',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
          ],
        ),
        rule(
          READ,
          [''],
          [
            'bindings',
            'events',
            'limitranges',
            'namespaces/status',
            'pods/log',
            'pods/status',
            'replicationcontrollers/status',
            'resourcequotas',
            'resourcequotas/status',
          ],
        ),
        rule(READ, [''], ['namespaces']),
        rule(READ, ['discovery.k8s.io'], ['endpointslices']),
        rule(
          READ,
          ['apps'],
          [
            'controllerrevisions',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'statefulsets',
            'statefulsets/scale',
            'statefulsets/status',
          ],
        ),
        rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, ['batch'], ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']),
        rule(
          READ,
          ['extensions'],
          [
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'ingresses',
            'ingresses/status',
            'networkpolicies',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'replicationcontrollers/scale',
          ],
        ),
        rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, ['networking.k8s.io'], ['ingresses', 'ingresses/status', 'networkpolicies']),
      ],
      { [AGGREGATE_TO_VIEW]: 'true' },
    ),
  ];
}

/** The bootstrap ClusterRoleBindings (fresh objects on every call). */
export function bootstrapClusterRoleBindings(): ClusterRoleBinding[] {
  return [
    groupBinding('cluster-admin', 'cluster-admin', ['system:masters']),
    groupBinding('system:discovery', 'system:discovery', ['system:authenticated']),
    groupBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
    groupBinding('system:public-info-viewer', 'system:public-info-viewer', [
      'system:authenticated',
      'system:unauthenticated',
    ]),
    groupBinding('system:monitoring', 'system:monitoring', ['system:monitoring']),
    groupBinding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', [
      'system:serviceaccounts',
    ]),
  ];
}

/**
 * The ClusterRoles and then the ClusterRoleBindings of a fresh cluster, as plain JSON objects (fresh copies on every
 * call, safe to mutate). The authority stores them on first start.
 */
export function bootstrapPolicy(): Array<Record<string, unknown>> {
  return [...bootstrapClusterRoles(), ...bootstrapClusterRoleBindings()] as unknown as Array<Record<string, unknown>>;
}

/**
 * The PriorityClasses kube-apiserver creates on start (scheduling's system classes), which pods of system
 * components name; the authority stores them on first start too.
 */
export function bootstrapPriorityClasses(): Array<Record<string, unknown>> {
  const pc = (name: string, value: number, description: string) => ({
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name },
    value,
    description,
  });
  return [
    pc(
      'system-node-critical',
      2000001000,
      'Used for system critical pods that must not be moved from their current node.',
    ),
    pc(
      'system-cluster-critical',
      2000000000,
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
    ),
  ];
}

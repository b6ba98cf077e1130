/** `config/rbac/`: the manager's identity and the RBAC that protects and grants access to /metrics. */
import { commonLabels, type ProjectParams } from './params.js';

export function configRbac(p: ProjectParams): Record<string, string> {
  const labels = commonLabels(p, '    ');
  return {
    'config/rbac/kustomization.yaml': `resources:
# The manager's identity. Every binding below names it; rename it in all of them or in none.
- service_account.yaml
- role.yaml
- role_binding.yaml
- leader_election_role.yaml
- leader_election_role_binding.yaml
# The manager checks every scrape's bearer token with a TokenReview and asks a SubjectAccessReview whether its
# user may GET /metrics; without these two files every scrape fails with 500 (it cannot ask), never 200.
- metrics_auth_role.yaml
- metrics_auth_role_binding.yaml
# "metrics-reader" allows GET /metrics. Nothing binds it on purpose: bind it to your scraper's service account,
# e.g. \`ctrlmetrics grant --serviceaccount <prometheus-namespace>:<prometheus-service-account>\` or
#   kubectl create clusterrolebinding ${p.projectName}-metrics-binding --clusterrole=${p.projectName}-metrics-reader \\
#     --serviceaccount=<prometheus-namespace>:<prometheus-service-account>
- metrics_reader_role.yaml
`,
    'config/rbac/service_account.yaml': `apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
${labels}
  name: controller-manager
  namespace: system
`,
    'config/rbac/role.yaml': `# Permissions of the sample controller (it watches ConfigMaps labelled app.kubernetes.io/part-of=${p.projectName}). Extend them for your own controllers.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
${labels}
  name: manager-role
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
`,
    'config/rbac/role_binding.yaml': `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
${labels}
  name: manager-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: manager-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
`,
    'config/rbac/leader_election_role.yaml': `# Leader election: the manager holds a coordination.k8s.io Lease in its namespace and records events.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  labels:
${labels}
  name: leader-election-role
  namespace: system
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - ""
  resources:
  - events
  verbs:
  - create
  - patch
`,
    'config/rbac/leader_election_role_binding.yaml': `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  labels:
${labels}
  name: leader-election-rolebinding
  namespace: system
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: leader-election-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
`,
    'config/rbac/metrics_auth_role.yaml': `# Lets the manager check scrapers' tokens (TokenReview) and permissions (SubjectAccessReview).
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-auth-role
rules:
- apiGroups:
  - authentication.k8s.io
  resources:
  - tokenreviews
  verbs:
  - create
- apiGroups:
  - authorization.k8s.io
  resources:
  - subjectaccessreviews
  verbs:
  - create
`,
    'config/rbac/metrics_auth_role_binding.yaml': `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: metrics-auth-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: metrics-auth-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
`,
    'config/rbac/metrics_reader_role.yaml': `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: metrics-reader
rules:
- nonResourceURLs:
  - "/metrics"
  verbs:
  - get
`,
  };
}

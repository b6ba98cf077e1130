/** `config/rbac/`: the manager's identity and the RBAC that protects and grants access to /metrics. */
import { commonLabels, type ProjectParams } from './params.js';

export function configRbac(p: ProjectParams): Record<string, string> {
  const labels = commonLabels(p, '    ');
  return {
    'config/rbac/kustomization.yaml': `resources:
# All RBAC will be applied under this service account in the deployment namespace. You may comment out this
# resource if your manager will use a service account that exists at runtime. Be sure to update RoleBinding
# and ClusterRoleBinding subjects if changing service account names.
- service_account.yaml
- role.yaml
- role_binding.yaml
- leader_election_role.yaml
- leader_election_role_binding.yaml
# The following RBAC configurations are used to protect the metrics endpoint with authn/authz: the manager
# checks every scrape's bearer token with a TokenReview and a SubjectAccessReview.
# Comment the following permissions if you want to disable this protection.
# More info: https://book.kubebuilder.io/reference/metrics.html
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
    'config/rbac/role.yaml': `# Permissions of the sample controller (it watches ConfigMaps). Extend them for your own controllers.
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
    'config/rbac/leader_election_role.yaml': `# permissions to do leader election.
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

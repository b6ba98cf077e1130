/**
 * The demo project's RBAC, as kubebuilder scaffolds it for a project named `ctrlmetrics-demo`: the manager's
 * service account with its manager role, leader-election role and metrics auth role (TokenReview +
 * SubjectAccessReview), and a scraper service account bound to the metrics-reader role (`get /metrics`).
 */
import type { PlainObject } from './apply.js';

export const PROJECT = 'ctrlmetrics-demo';
export const SYSTEM_NAMESPACE = `${PROJECT}-system`;
export const MANAGER_SA = `${PROJECT}-controller-manager`;
export const SCRAPER_SA = `${PROJECT}-metrics-scraper`;
export const METRICS_AUTH_ROLE = `${PROJECT}-metrics-auth-role`;
export const METRICS_READER_ROLE = `${PROJECT}-metrics-reader`;
export const MANAGER_ROLE = `${PROJECT}-manager-role`;
export const LEADER_ELECTION_ROLE = `${PROJECT}-leader-election-role`;
/** Where the demo's load of ConfigMaps and Secrets lives. */
export const WORKLOAD_NAMESPACE = PROJECT;

const labels = { 'app.kubernetes.io/name': PROJECT, 'app.kubernetes.io/managed-by': 'ctrlmetrics' };
const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), labels });
const sa = (name: string) => ({ kind: 'ServiceAccount', name, namespace: SYSTEM_NAMESPACE });

function clusterRole(name: string, rules: unknown[]): PlainObject {
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta(name), rules };
}

function clusterRoleBinding(name: string, role: string, subject: string): PlainObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: meta(name),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [sa(subject)],
  };
}

/** Every object, in apply order. */
export function demoRbac(): PlainObject[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: meta(SYSTEM_NAMESPACE) },
    { apiVersion: 'v1', kind: 'Namespace', metadata: meta(WORKLOAD_NAMESPACE) },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(MANAGER_SA, SYSTEM_NAMESPACE) },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(SCRAPER_SA, SYSTEM_NAMESPACE) },
    clusterRole(MANAGER_ROLE, [
      {
        apiGroups: [''],
        resources: ['configmaps'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
    ]),
    clusterRoleBinding(`${PROJECT}-manager-rolebinding`, MANAGER_ROLE, MANAGER_SA),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(LEADER_ELECTION_ROLE, SYSTEM_NAMESPACE),
      rules: [
        {
          apiGroups: ['coordination.k8s.io'],
          resources: ['leases'],
          verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: meta(`${PROJECT}-leader-election-rolebinding`, SYSTEM_NAMESPACE),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: LEADER_ELECTION_ROLE },
      subjects: [sa(MANAGER_SA)],
    },
    clusterRole(METRICS_AUTH_ROLE, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]),
    clusterRoleBinding(`${PROJECT}-metrics-auth-rolebinding`, METRICS_AUTH_ROLE, MANAGER_SA),
    clusterRole(METRICS_READER_ROLE, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]),
    clusterRoleBinding(`${PROJECT}-metrics-reader-rolebinding`, METRICS_READER_ROLE, SCRAPER_SA),
  ];
}

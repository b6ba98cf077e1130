/**
 * Table-driven tests of the RBAC evaluator, written from the Kubernetes documentation
 * (https://kubernetes.io/docs/reference/access-authn-authz/rbac/ and .../authorization/) and from kube-apiserver's
 * documented behaviour, never from this code's output. Every case names the rule it checks. Each case runs against a
 * fresh cluster's bootstrap policy plus the objects the case adds, like a SubjectAccessReview against a new cluster.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  authorize,
  resolveAggregatedRules,
  rulesFor,
  type AuthzAttributes,
  type ClusterRole,
  type ClusterRoleBinding,
  type PolicyRule,
  type RbacObjects,
  type Role,
  type RoleBinding,
  type Subject,
  type UserInfo,
} from '../../packages/envtest/src/rbac.js';
import { bootstrapPolicy } from '../../packages/envtest/src/bootstrap.js';

const G = 'rbac.authorization.k8s.io';

// ---- object builders (plain Kubernetes JSON) ----
const clusterRole = (name: string, rules: PolicyRule[], labels?: Record<string, string>): ClusterRole => ({
  apiVersion: `${G}/v1`,
  kind: 'ClusterRole',
  metadata: { name, ...(labels ? { labels } : {}) },
  rules,
});
const role = (namespace: string, name: string, rules: PolicyRule[]): Role => ({
  apiVersion: `${G}/v1`,
  kind: 'Role',
  metadata: { name, namespace },
  rules,
});
const crb = (name: string, clusterRoleName: string, subjects: Subject[]): ClusterRoleBinding => ({
  apiVersion: `${G}/v1`,
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: G, kind: 'ClusterRole', name: clusterRoleName },
  subjects,
});
const rb = (
  namespace: string,
  name: string,
  kind: 'Role' | 'ClusterRole',
  roleName: string,
  subjects: Subject[],
): RoleBinding => ({
  apiVersion: `${G}/v1`,
  kind: 'RoleBinding',
  metadata: { name, namespace },
  roleRef: { apiGroup: G, kind, name: roleName },
  subjects,
});
const User = (name: string): Subject => ({ kind: 'User', apiGroup: G, name });
const Group = (name: string): Subject => ({ kind: 'Group', apiGroup: G, name });
const SA = (name: string, namespace?: string): Subject =>
  namespace === undefined ? { kind: 'ServiceAccount', name } : { kind: 'ServiceAccount', name, namespace };

// ---- users, as the authenticator (TokenReview) reports them ----
const human = (username: string, ...groups: string[]): UserInfo => ({
  username,
  groups: [...groups, 'system:authenticated'],
});
/** A service account's user as documented: `system:serviceaccount:<ns>:<name>`, groups `system:serviceaccounts`, `system:serviceaccounts:<ns>`. */
const saUser = (ns: string, name: string): UserInfo => ({
  username: `system:serviceaccount:${ns}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
});
const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
const masters: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

// ---- request attributes ----
const url = (user: UserInfo, verb: string, path: string): AuthzAttributes => ({
  user,
  verb,
  resourceRequest: false,
  path,
});
const res = (
  user: UserInfo,
  verb: string,
  resource: string,
  o: { ns?: string; group?: string; sub?: string; name?: string } = {},
): AuthzAttributes => ({
  user,
  verb,
  resourceRequest: true,
  resource,
  apiGroup: o.group ?? '',
  ...(o.ns !== undefined ? { namespace: o.ns } : {}),
  ...(o.sub !== undefined ? { subresource: o.sub } : {}),
  ...(o.name !== undefined ? { name: o.name } : {}),
});

function world(extra: Array<ClusterRole | Role | ClusterRoleBinding | RoleBinding> = []): RbacObjects {
  const w: RbacObjects = { clusterRoles: [], clusterRoleBindings: [], roles: [], roleBindings: [] };
  for (const o of [...(bootstrapPolicy() as unknown as typeof extra), ...extra]) {
    if (o.kind === 'ClusterRole') w.clusterRoles.push(o);
    else if (o.kind === 'ClusterRoleBinding') w.clusterRoleBindings.push(o as ClusterRoleBinding);
    else if (o.kind === 'Role') w.roles.push(o);
    else if (o.kind === 'RoleBinding') w.roleBindings.push(o as RoleBinding);
    else throw new Error(`unexpected kind ${String(o.kind)}`);
  }
  return w;
}

interface Case {
  /** The documented rule this case checks. */
  doc: string;
  objects?: Array<ClusterRole | Role | ClusterRoleBinding | RoleBinding>;
  attrs: AuthzAttributes;
  allowed: boolean;
  /** Expected `status.reason` exactly; omitted when several default bindings could equally be the allowing one. */
  reason?: string;
}

function run(group: string, cases: Case[]): void {
  describe(group, () => {
    for (const c of cases) {
      const a = c.attrs;
      const what = a.resourceRequest
        ? `${a.verb} ${a.resource}${a.subresource ? '/' + a.subresource : ''}${a.apiGroup ? '.' + a.apiGroup : ''}${a.name ? ' ' + a.name : ''}${a.namespace ? ' in ' + a.namespace : ' cluster-wide'}`
        : `${a.verb} ${a.path}`;
      it(`${c.doc} — ${a.user.username}: ${what} → ${c.allowed ? 'allow' : 'deny'}`, () => {
        const d = authorize(world(c.objects), a);
        assert.equal(d.allowed, c.allowed, `decision (reason: ${JSON.stringify(d.reason)})`);
        if (c.reason !== undefined) assert.equal(d.reason, c.reason);
      });
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Non-resource URLs
// ---------------------------------------------------------------------------------------------------------------
const prom = saUser('monitoring', 'prometheus');
const metricsReader = [
  clusterRole('metrics-reader', [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]),
  crb('metrics-reader-binding', 'metrics-reader', [SA('prometheus', 'monitoring')]),
];
const withUrls = (nonResourceURLs: string[], verbs = ['get']) => [
  clusterRole('paths', [{ nonResourceURLs, verbs }]),
  crb('paths', 'paths', [User('carol')]),
];
const carol = human('carol');
const METRICS_ALLOWED =
  'RBAC: allowed by ClusterRoleBinding "metrics-reader-binding" of ClusterRole "metrics-reader" to ServiceAccount "prometheus/monitoring"';

run('non-resource URLs', [
  {
    doc: 'nonResourceURLs: an exact path grants that path',
    objects: metricsReader,
    attrs: url(prom, 'get', '/metrics'),
    allowed: true,
    reason: METRICS_ALLOWED,
  },
  {
    doc: 'nonResourceURLs: `/metrics` does not grant `/metrics/` (no implicit trailing slash)',
    objects: metricsReader,
    attrs: url(prom, 'get', '/metrics/'),
    allowed: false,
    reason: '',
  },
  {
    doc: 'nonResourceURLs: `/metrics` does not grant `/metrics/x` (only a trailing `*` globs)',
    objects: metricsReader,
    attrs: url(prom, 'get', '/metrics/x'),
    allowed: false,
    reason: '',
  },
  {
    doc: 'nonResourceURLs: `/metrics` does not grant `/metricsx`',
    objects: metricsReader,
    attrs: url(prom, 'get', '/metricsx'),
    allowed: false,
  },
  {
    doc: 'nonResourceURLs: `/metrics` does not grant `//metrics` (paths are compared as given)',
    objects: metricsReader,
    attrs: url(prom, 'get', '//metrics'),
    allowed: false,
  },
  {
    doc: 'non-resource requests use the lower-cased HTTP method as verb: POST is `post`, not granted by `get`',
    objects: metricsReader,
    attrs: url(prom, 'post', '/metrics'),
    allowed: false,
    reason: '',
  },
  {
    doc: 'non-resource verb: PUT is `put`, not granted by `get`',
    objects: metricsReader,
    attrs: url(prom, 'put', '/metrics'),
    allowed: false,
  },
  {
    doc: 'non-resource verb: DELETE is `delete`, not granted by `get`',
    objects: metricsReader,
    attrs: url(prom, 'delete', '/metrics'),
    allowed: false,
  },
  {
    doc: 'non-resource verb: `head` is not `get` for RBAC',
    objects: metricsReader,
    attrs: url(prom, 'head', '/metrics'),
    allowed: false,
  },
  {
    doc: 'verbs `*` grants every verb on the path',
    objects: withUrls(['/metrics'], ['*']),
    attrs: url(carol, 'post', '/metrics'),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "paths" of ClusterRole "paths" to User "carol"',
  },
  {
    doc: 'a trailing `*` is a suffix glob: `/metrics*` grants `/metrics`',
    objects: withUrls(['/metrics*']),
    attrs: url(carol, 'get', '/metrics'),
    allowed: true,
  },
  {
    doc: 'a trailing `*` is a suffix glob: `/metrics*` grants `/metrics/`',
    objects: withUrls(['/metrics*']),
    attrs: url(carol, 'get', '/metrics/'),
    allowed: true,
  },
  {
    doc: 'a trailing `*` is a suffix glob: `/metrics*` grants `/metricsfoo`',
    objects: withUrls(['/metrics*']),
    attrs: url(carol, 'get', '/metricsfoo'),
    allowed: true,
  },
  {
    doc: 'a trailing `*` is a suffix glob: `/metrics*` does not grant `/metric`',
    objects: withUrls(['/metrics*']),
    attrs: url(carol, 'get', '/metric'),
    allowed: false,
  },
  {
    doc: '`/healthz/*` grants the per-check paths like `/healthz/ping`',
    objects: withUrls(['/healthz/*']),
    attrs: url(carol, 'get', '/healthz/ping'),
    allowed: true,
  },
  {
    doc: '`/debug/*` does not grant `/debug` itself',
    objects: withUrls(['/debug/*']),
    attrs: url(carol, 'get', '/debug'),
    allowed: false,
  },
  {
    doc: '`/healthz` does not grant `/healthz/ping`',
    objects: withUrls(['/healthz']),
    attrs: url(carol, 'get', '/healthz/ping'),
    allowed: false,
  },
  {
    doc: '`*` alone grants every path',
    objects: withUrls(['*']),
    attrs: url(carol, 'get', '/any/path/at/all'),
    allowed: true,
  },
  {
    doc: '`*` alone grants every path, for the listed verbs only',
    objects: withUrls(['*']),
    attrs: url(carol, 'post', '/any'),
    allowed: false,
  },
  {
    doc: 'a `*` inside a path is literal, not a glob',
    objects: withUrls(['/a/*/c']),
    attrs: url(carol, 'get', '/a/b/c'),
    allowed: false,
  },
  {
    doc: 'a RoleBinding never grants non-resource URLs (they are cluster-scoped; only a ClusterRoleBinding can)',
    objects: [
      metricsReader[0],
      rb('monitoring', 'local-metrics', 'ClusterRole', 'metrics-reader', [SA('prometheus', 'monitoring')]),
    ],
    attrs: url(prom, 'get', '/metrics'),
    allowed: false,
    reason: '',
  },
  {
    doc: 'a non-resource request has no namespace: a RoleBinding cannot grant it even if a namespace is passed along',
    objects: [
      metricsReader[0],
      rb('monitoring', 'local-metrics', 'ClusterRole', 'metrics-reader', [SA('prometheus', 'monitoring')]),
    ],
    attrs: { ...url(prom, 'get', '/metrics'), namespace: 'monitoring' },
    allowed: false,
  },
  {
    doc: 'rules with resources do not grant non-resource URLs',
    objects: [
      clusterRole('all-res', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]),
      crb('all-res', 'all-res', [User('carol')]),
    ],
    attrs: url(carol, 'get', '/metrics'),
    allowed: false,
  },
]);

// ---------------------------------------------------------------------------------------------------------------
// Roles, ClusterRoles and their bindings
// ---------------------------------------------------------------------------------------------------------------
const jane = human('jane');
const dave = human('dave');
const podReader = role('default', 'pod-reader', [
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'watch', 'list'] },
]);
const readPods = rb('default', 'read-pods', 'Role', 'pod-reader', [User('jane')]);
const secretReader = clusterRole('secret-reader', [
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'watch', 'list'] },
]);
const readSecretsInDev = rb('development', 'read-secrets', 'ClusterRole', 'secret-reader', [User('dave')]);

run('bindings', [
  {
    doc: 'a RoleBinding grants its Role within its namespace',
    objects: [podReader, readPods],
    attrs: res(jane, 'get', 'pods', { ns: 'default', name: 'web' }),
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "read-pods/default" of Role "pod-reader" to User "jane"',
  },
  {
    doc: 'a RoleBinding grants nothing in another namespace',
    objects: [podReader, readPods],
    attrs: res(jane, 'get', 'pods', { ns: 'kube-system', name: 'web' }),
    allowed: false,
    reason: '',
  },
  {
    doc: 'a RoleBinding grants nothing cluster-wide (list across all namespaces)',
    objects: [podReader, readPods],
    attrs: res(jane, 'list', 'pods'),
    allowed: false,
  },
  {
    doc: 'a Role grants only the verbs it lists',
    objects: [podReader, readPods],
    attrs: res(jane, 'delete', 'pods', { ns: 'default', name: 'web' }),
    allowed: false,
  },
  {
    doc: 'a RoleBinding may reference a ClusterRole: its permissions apply in the binding namespace',
    objects: [secretReader, readSecretsInDev],
    attrs: res(dave, 'get', 'secrets', { ns: 'development', name: 's' }),
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "read-secrets/development" of ClusterRole "secret-reader" to User "dave"',
  },
  {
    doc: 'a RoleBinding of a ClusterRole does not reach other namespaces',
    objects: [secretReader, readSecretsInDev],
    attrs: res(dave, 'get', 'secrets', { ns: 'default', name: 's' }),
    allowed: false,
  },
  {
    doc: 'a RoleBinding of a ClusterRole does not grant cluster-wide access',
    objects: [secretReader, readSecretsInDev],
    attrs: res(dave, 'list', 'secrets'),
    allowed: false,
  },
  {
    doc: 'a ClusterRoleBinding grants its ClusterRole across all namespaces',
    objects: [secretReader, crb('read-secrets-global', 'secret-reader', [Group('manager')])],
    attrs: res(human('erin', 'manager'), 'list', 'secrets', { ns: 'anywhere' }),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "read-secrets-global" of ClusterRole "secret-reader" to Group "manager"',
  },
  {
    doc: 'a ClusterRoleBinding grants cluster-wide requests (list in all namespaces)',
    objects: [secretReader, crb('read-secrets-global', 'secret-reader', [Group('manager')])],
    attrs: res(human('erin', 'manager'), 'list', 'secrets'),
    allowed: true,
  },
  {
    doc: 'a RoleBinding can only reference a Role in its own namespace; a missing role is named in the reason',
    objects: [role('other', 'pod-reader', podReader.rules ?? []), readPods],
    attrs: res(jane, 'get', 'pods', { ns: 'default', name: 'web' }),
    allowed: false,
    reason: 'RBAC: role.rbac.authorization.k8s.io "pod-reader" not found',
  },
  {
    doc: 'a binding to a ClusterRole that does not exist grants nothing; the reason names it',
    objects: [crb('dangling', 'ghost', [User('jane')])],
    attrs: url(jane, 'get', '/metrics'),
    allowed: false,
    reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found',
  },
  {
    doc: 'several unresolvable role references are aggregated in the reason',
    objects: [crb('dangling-1', 'ghost', [User('jane')]), crb('dangling-2', 'phantom', [User('jane')])],
    attrs: url(jane, 'get', '/metrics'),
    allowed: false,
    reason:
      'RBAC: [clusterrole.rbac.authorization.k8s.io "ghost" not found, clusterrole.rbac.authorization.k8s.io "phantom" not found]',
  },
  {
    doc: 'a dangling binding does not prevent another binding from allowing',
    objects: [
      crb('dangling', 'ghost', [User('jane')]),
      ...withUrls(['/metrics']).map((o) =>
        o.kind === 'ClusterRoleBinding' ? crb('paths', 'paths', [User('jane')]) : o,
      ),
    ],
    attrs: url(jane, 'get', '/metrics'),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "paths" of ClusterRole "paths" to User "jane"',
  },
  {
    doc: 'a dangling binding for someone else is not reported',
    objects: [crb('dangling', 'ghost', [User('someone-else')])],
    attrs: url(jane, 'get', '/metrics'),
    allowed: false,
    reason: '',
  },
  {
    doc: 'a RoleBinding may name a ServiceAccount of another namespace: it gets the permissions in the binding namespace',
    objects: [secretReader, rb('development', 'ci-reads', 'ClusterRole', 'secret-reader', [SA('ci', 'tools')])],
    attrs: res(saUser('tools', 'ci'), 'get', 'secrets', { ns: 'development', name: 's' }),
    allowed: true,
    reason:
      'RBAC: allowed by RoleBinding "ci-reads/development" of ClusterRole "secret-reader" to ServiceAccount "ci/tools"',
  },
  {
    doc: 'a RoleBinding naming a ServiceAccount of another namespace grants nothing in that other namespace',
    objects: [secretReader, rb('development', 'ci-reads', 'ClusterRole', 'secret-reader', [SA('ci', 'tools')])],
    attrs: res(saUser('tools', 'ci'), 'get', 'secrets', { ns: 'tools', name: 's' }),
    allowed: false,
  },
  {
    doc: 'a ClusterRoleBinding can only reference a ClusterRole: a Role reference resolves to nothing',
    objects: [
      podReader,
      {
        ...crb('wrong-kind', 'pod-reader', [User('jane')]),
        roleRef: { apiGroup: G, kind: 'Role', name: 'pod-reader' },
      },
    ],
    attrs: res(jane, 'get', 'pods', { ns: 'default', name: 'web' }),
    allowed: false,
    reason: 'RBAC: role.rbac.authorization.k8s.io "pod-reader" not found',
  },
  {
    doc: 'a roleRef kind other than Role/ClusterRole resolves to nothing',
    objects: [{ ...crb('odd', 'x', [User('jane')]), roleRef: { apiGroup: G, kind: 'Policy', name: 'x' } }],
    attrs: url(jane, 'get', '/metrics'),
    allowed: false,
    reason: 'RBAC: unsupported role reference kind: "Policy"',
  },
  {
    doc: 'names in reasons are quoted like Go %q',
    objects: [clusterRole('r"1', [{ nonResourceURLs: ['/q'], verbs: ['get'] }]), crb('b\\1', 'r"1', [User('jane')])],
    attrs: url(jane, 'get', '/q'),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "b\\\\1" of ClusterRole "r\\"1" to User "jane"',
  },
  {
    doc: 'permissions are additive: a second RoleBinding adds to the first',
    objects: [
      podReader,
      readPods,
      role('default', 'pod-deleter', [{ apiGroups: [''], resources: ['pods'], verbs: ['delete'] }]),
      rb('default', 'delete-pods', 'Role', 'pod-deleter', [User('jane')]),
    ],
    attrs: res(jane, 'delete', 'pods', { ns: 'default', name: 'web' }),
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "delete-pods/default" of Role "pod-deleter" to User "jane"',
  },
]);

// ---------------------------------------------------------------------------------------------------------------
// Referring to resources: apiGroups, resources, subresources, resourceNames, wildcards
// ---------------------------------------------------------------------------------------------------------------
const frank = human('frank');
const grant = (rules: PolicyRule[]) => [clusterRole('custom', rules), crb('custom', 'custom', [User('frank')])];

run('resources', [
  {
    doc: 'apiGroups `""` is the core group: it does not cover `apps`',
    objects: grant([{ apiGroups: [''], resources: ['deployments'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'deployments', { ns: 'a', group: 'apps', name: 'd' }),
    allowed: false,
  },
  {
    doc: 'apiGroups names the group of the resource',
    objects: grant([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'deployments', { ns: 'a', group: 'apps', name: 'd' }),
    allowed: true,
  },
  {
    doc: 'apiGroups `*` covers every group, the core group included',
    objects: grant([{ apiGroups: ['*'], resources: ['configmaps'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'configmaps', { ns: 'a', name: 'c' }),
    allowed: true,
  },
  {
    doc: 'a rule for `apps` does not cover the core group',
    objects: grant([{ apiGroups: ['apps'], resources: ['*'], verbs: ['*'] }]),
    attrs: res(frank, 'get', 'configmaps', { ns: 'a', name: 'c' }),
    allowed: false,
  },
  {
    doc: 'wildcards: verbs `*` and resources `*` in one group cover every verb on every resource of that group',
    objects: grant([{ apiGroups: ['example.com'], resources: ['*'], verbs: ['*'] }]),
    attrs: res(frank, 'deletecollection', 'crontabs', { ns: 'a', group: 'example.com' }),
    allowed: true,
  },
  {
    doc: 'subresources are named `resource/subresource`: `pods` does not cover `pods/log`',
    objects: grant([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'pods', { ns: 'a', sub: 'log', name: 'p' }),
    allowed: false,
  },
  {
    doc: 'subresources: `pods/log` covers reading a pod log',
    objects: grant([{ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'pods', { ns: 'a', sub: 'log', name: 'p' }),
    allowed: true,
  },
  {
    doc: 'subresources: `pods/log` does not cover the pod itself',
    objects: grant([{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'pods', { ns: 'a', name: 'p' }),
    allowed: false,
  },
  {
    doc: 'TokenRequest is `create` on `serviceaccounts/token`',
    objects: grant([{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }]),
    attrs: res(frank, 'create', 'serviceaccounts', { ns: 'a', sub: 'token', name: 'controller' }),
    allowed: true,
  },
  {
    doc: '`serviceaccounts/token` does not cover creating a ServiceAccount',
    objects: grant([{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }]),
    attrs: res(frank, 'create', 'serviceaccounts', { ns: 'a' }),
    allowed: false,
  },
  {
    doc: '`create serviceaccounts` does not cover TokenRequest',
    objects: grant([{ apiGroups: [''], resources: ['serviceaccounts'], verbs: ['create'] }]),
    attrs: res(frank, 'create', 'serviceaccounts', { ns: 'a', sub: 'token', name: 'controller' }),
    allowed: false,
  },
  {
    doc: 'resources `*` covers subresources too',
    objects: grant([{ apiGroups: [''], resources: ['*'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'pods', { ns: 'a', sub: 'log', name: 'p' }),
    allowed: true,
  },
  {
    doc: 'kube-apiserver: `*/scale` covers the scale subresource of any resource',
    objects: grant([{ apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] }]),
    attrs: res(frank, 'update', 'deployments', { ns: 'a', group: 'apps', sub: 'scale', name: 'd' }),
    allowed: true,
  },
  {
    doc: 'kube-apiserver: `*/scale` does not cover the resource itself',
    objects: grant([{ apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] }]),
    attrs: res(frank, 'update', 'deployments', { ns: 'a', group: 'apps', name: 'd' }),
    allowed: false,
  },
  {
    doc: 'kube-apiserver: `*/scale` does not cover another subresource',
    objects: grant([{ apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] }]),
    attrs: res(frank, 'update', 'deployments', { ns: 'a', group: 'apps', sub: 'status', name: 'd' }),
    allowed: false,
  },
  {
    doc: 'kube-apiserver: `pods/*` is not a glob',
    objects: grant([{ apiGroups: [''], resources: ['pods/*'], verbs: ['get'] }]),
    attrs: res(frank, 'get', 'pods', { ns: 'a', sub: 'log', name: 'p' }),
    allowed: false,
  },
  {
    doc: 'resourceNames restricts to the named object',
    objects: grant([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-configmap'], verbs: ['update', 'get'] },
    ]),
    attrs: res(frank, 'get', 'configmaps', { ns: 'a', name: 'my-configmap' }),
    allowed: true,
  },
  {
    doc: 'resourceNames: another name is denied',
    objects: grant([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-configmap'], verbs: ['update', 'get'] },
    ]),
    attrs: res(frank, 'get', 'configmaps', { ns: 'a', name: 'other' }),
    allowed: false,
  },
  {
    doc: 'resourceNames: create cannot be restricted by name (no name at authorization time), so it is denied',
    objects: grant([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-configmap'], verbs: ['create'] },
    ]),
    attrs: res(frank, 'create', 'configmaps', { ns: 'a' }),
    allowed: false,
  },
  {
    doc: 'resourceNames: a list without a metadata.name field selector has no name and is denied',
    objects: grant([{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-configmap'], verbs: ['list'] }]),
    attrs: res(frank, 'list', 'configmaps', { ns: 'a' }),
    allowed: false,
  },
  {
    doc: 'resourceNames: a list restricted to the name (field selector metadata.name) is allowed',
    objects: grant([{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-configmap'], verbs: ['list'] }]),
    attrs: res(frank, 'list', 'configmaps', { ns: 'a', name: 'my-configmap' }),
    allowed: true,
  },
  {
    doc: 'resourceNames: deletecollection cannot be restricted by name',
    objects: grant([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['my-configmap'], verbs: ['deletecollection'] },
    ]),
    attrs: res(frank, 'deletecollection', 'configmaps', { ns: 'a' }),
    allowed: false,
  },
  {
    doc: 'resourceNames apply to subresources of the named object',
    objects: grant([
      { apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['controller'], verbs: ['create'] },
    ]),
    attrs: res(frank, 'create', 'serviceaccounts', { ns: 'a', sub: 'token', name: 'controller' }),
    allowed: true,
  },
  {
    doc: 'resourceNames apply to subresources: another service account is denied',
    objects: grant([
      { apiGroups: [''], resources: ['serviceaccounts/token'], resourceNames: ['controller'], verbs: ['create'] },
    ]),
    attrs: res(frank, 'create', 'serviceaccounts', { ns: 'a', sub: 'token', name: 'default' }),
    allowed: false,
  },
  {
    doc: 'rules with only nonResourceURLs grant no resources',
    objects: grant([{ nonResourceURLs: ['*'], verbs: ['*'] }]),
    attrs: res(frank, 'get', 'pods', { ns: 'a', name: 'p' }),
    allowed: false,
  },
  {
    doc: 'ClusterRoles can grant cluster-scoped resources (namespaces) through a ClusterRoleBinding',
    objects: grant([{ apiGroups: [''], resources: ['namespaces'], verbs: ['create'] }]),
    attrs: res(frank, 'create', 'namespaces'),
    allowed: true,
  },
  {
    doc: 'a RoleBinding cannot grant cluster-scoped resources (no namespace on the request)',
    objects: [
      clusterRole('ns-creator', [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create'] }]),
      rb('a', 'ns-creator', 'ClusterRole', 'ns-creator', [User('frank')]),
    ],
    attrs: res(frank, 'create', 'namespaces'),
    allowed: false,
  },
]);

// ---------------------------------------------------------------------------------------------------------------
// Referring to subjects
// ---------------------------------------------------------------------------------------------------------------
const viewerRole = clusterRole('cm-viewer', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
const getCm = (user: UserInfo, ns = 'qa') => res(user, 'get', 'configmaps', { ns, name: 'c' });

run('subjects', [
  {
    doc: 'User subjects match the username exactly',
    objects: [viewerRole, crb('b', 'cm-viewer', [User('alice@example.com')])],
    attrs: getCm(human('alice@example.com')),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "cm-viewer" to User "alice@example.com"',
  },
  {
    doc: 'User names are case-sensitive',
    objects: [viewerRole, crb('b', 'cm-viewer', [User('Alice')])],
    attrs: getCm(human('alice')),
    allowed: false,
  },
  {
    doc: 'Group subjects match a group of the user',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('frontend-admins')])],
    attrs: getCm(human('x', 'frontend-admins')),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "cm-viewer" to Group "frontend-admins"',
  },
  {
    doc: 'a Group subject does not match a user named like the group',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('frontend-admins')])],
    attrs: getCm(human('frontend-admins')),
    allowed: false,
  },
  {
    doc: 'ServiceAccount subjects match `system:serviceaccount:<ns>:<name>`',
    objects: [viewerRole, crb('b', 'cm-viewer', [SA('default', 'kube-system')])],
    attrs: getCm(saUser('kube-system', 'default')),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "cm-viewer" to ServiceAccount "default/kube-system"',
  },
  {
    doc: 'a ServiceAccount subject does not match the same name in another namespace',
    objects: [viewerRole, crb('b', 'cm-viewer', [SA('default', 'kube-system')])],
    attrs: getCm(saUser('qa', 'default')),
    allowed: false,
  },
  {
    doc: 'a RoleBinding ServiceAccount subject without namespace means the binding namespace',
    objects: [viewerRole, rb('qa', 'b', 'ClusterRole', 'cm-viewer', [SA('builder')])],
    attrs: getCm(saUser('qa', 'builder')),
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "b/qa" of ClusterRole "cm-viewer" to ServiceAccount "builder/qa"',
  },
  {
    doc: 'a ClusterRoleBinding ServiceAccount subject without namespace matches nobody',
    objects: [viewerRole, crb('b', 'cm-viewer', [SA('builder')])],
    attrs: getCm(saUser('qa', 'builder')),
    allowed: false,
  },
  {
    doc: 'group `system:serviceaccounts:qa` holds every service account of namespace qa',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('system:serviceaccounts:qa')])],
    attrs: getCm(saUser('qa', 'anything')),
    allowed: true,
  },
  {
    doc: 'group `system:serviceaccounts:qa` holds no service account of another namespace',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('system:serviceaccounts:qa')])],
    attrs: getCm(saUser('dev', 'anything')),
    allowed: false,
  },
  {
    doc: 'group `system:serviceaccounts` holds every service account in the cluster',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('system:serviceaccounts')])],
    attrs: getCm(saUser('dev', 'anything')),
    allowed: true,
  },
  {
    doc: 'group `system:authenticated` holds every authenticated user',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('system:authenticated')])],
    attrs: getCm(human('zed')),
    allowed: true,
  },
  {
    doc: 'group `system:authenticated` does not hold anonymous requests',
    objects: [viewerRole, crb('b', 'cm-viewer', [Group('system:authenticated')])],
    attrs: getCm(anonymous),
    allowed: false,
  },
  {
    doc: 'a User subject named like a service account user matches that service account',
    objects: [viewerRole, crb('b', 'cm-viewer', [User('system:serviceaccount:qa:builder')])],
    attrs: getCm(saUser('qa', 'builder')),
    allowed: true,
  },
  {
    doc: 'the reason names the first subject of the binding that matches',
    objects: [
      viewerRole,
      crb('b', 'cm-viewer', [User('nobody'), Group('system:serviceaccounts:qa'), SA('builder', 'qa')]),
    ],
    attrs: getCm(saUser('qa', 'builder')),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "cm-viewer" to Group "system:serviceaccounts:qa"',
  },
  {
    doc: 'an unknown subject kind matches nobody',
    objects: [viewerRole, crb('b', 'cm-viewer', [{ kind: 'Robot', name: 'zed' }])],
    attrs: getCm(human('zed')),
    allowed: false,
  },
  {
    doc: 'a binding without subjects grants nothing',
    objects: [viewerRole, { ...crb('b', 'cm-viewer', []), subjects: null }],
    attrs: getCm(human('zed')),
    allowed: false,
  },
]);

// ---------------------------------------------------------------------------------------------------------------
// Aggregated ClusterRoles
// ---------------------------------------------------------------------------------------------------------------
const monitoringAggregate: ClusterRole = {
  apiVersion: `${G}/v1`,
  kind: 'ClusterRole',
  metadata: { name: 'monitoring' },
  aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.example.com/aggregate-to-monitoring': 'true' } }] },
  rules: [],
};
const monitoringEndpoints = clusterRole(
  'monitoring-endpoints',
  [{ apiGroups: [''], resources: ['services', 'endpointslices', 'pods'], verbs: ['get', 'list', 'watch'] }],
  { 'rbac.example.com/aggregate-to-monitoring': 'true' },
);
const unlabelled = clusterRole('not-aggregated', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
const monUser = human('mona');
const bindMon = crb('mon', 'monitoring', [User('mona')]);
const bob = human('bob');
const bindIn = (cr: string) => rb('team', `bob-${cr}`, 'ClusterRole', cr, [User('bob')]);
const cronTabsView = clusterRole(
  'aggregate-cron-tabs-view',
  [{ apiGroups: ['stable.example.com'], resources: ['crontabs'], verbs: ['get', 'list', 'watch'] }],
  { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' },
);
const selectorRole = (sel: ClusterRole['aggregationRule']): ClusterRole => ({
  apiVersion: `${G}/v1`,
  kind: 'ClusterRole',
  metadata: { name: 'sel' },
  aggregationRule: sel,
  rules: [],
});
const tiered = (tier: string | undefined, resource: string) =>
  clusterRole(
    `tier-${resource}`,
    [{ apiGroups: [''], resources: [resource], verbs: ['get'] }],
    tier === undefined ? { other: 'x' } : { tier },
  );
const tiers = [tiered('a', 'configmaps'), tiered('b', 'secrets'), tiered('c', 'services'), tiered(undefined, 'pods')];
const getIn = (resource: string) => res(human('sel-user'), 'get', resource, { ns: 'x', name: 'n' });
const bindSel = crb('sel', 'sel', [User('sel-user')]);

run('aggregated ClusterRoles', [
  {
    doc: 'an aggregated ClusterRole grants the rules of the ClusterRoles its selector picks',
    objects: [monitoringAggregate, monitoringEndpoints, unlabelled, bindMon],
    attrs: res(monUser, 'list', 'pods', { ns: 'x' }),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "mon" of ClusterRole "monitoring" to User "mona"',
  },
  {
    doc: 'an aggregated ClusterRole does not include ClusterRoles without the label',
    objects: [monitoringAggregate, monitoringEndpoints, unlabelled, bindMon],
    attrs: res(monUser, 'get', 'secrets', { ns: 'x', name: 's' }),
    allowed: false,
  },
  {
    doc: 'the control plane overwrites rules written by hand into an aggregated ClusterRole',
    objects: [
      { ...monitoringAggregate, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] },
      monitoringEndpoints,
      bindMon,
    ],
    attrs: res(monUser, 'get', 'secrets', { ns: 'x', name: 's' }),
    allowed: false,
  },
  {
    doc: 'a new ClusterRole matching the selector is picked up (aggregation is live)',
    objects: [
      monitoringAggregate,
      bindMon,
      clusterRole('late', [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }], {
        'rbac.example.com/aggregate-to-monitoring': 'true',
      }),
    ],
    attrs: res(monUser, 'get', 'deployments', { ns: 'x', group: 'apps', name: 'd' }),
    allowed: true,
  },
  {
    doc: 'default role `view` allows reading most objects in a namespace (configmaps)',
    objects: [bindIn('view')],
    attrs: res(bob, 'get', 'configmaps', { ns: 'team', name: 'c' }),
    allowed: true,
    reason: 'RBAC: allowed by RoleBinding "bob-view/team" of ClusterRole "view" to User "bob"',
  },
  {
    doc: 'default role `view` does not allow viewing Secrets',
    objects: [bindIn('view')],
    attrs: res(bob, 'get', 'secrets', { ns: 'team', name: 's' }),
    allowed: false,
  },
  {
    doc: 'default role `view` does not allow writes',
    objects: [bindIn('view')],
    attrs: res(bob, 'create', 'configmaps', { ns: 'team' }),
    allowed: false,
  },
  {
    doc: 'default role `view` does not allow viewing roles or role bindings',
    objects: [bindIn('view')],
    attrs: res(bob, 'list', 'rolebindings', { ns: 'team', group: G }),
    allowed: false,
  },
  {
    doc: 'default role `edit` allows read/write of most objects, secrets included',
    objects: [bindIn('edit')],
    attrs: res(bob, 'create', 'secrets', { ns: 'team' }),
    allowed: true,
  },
  {
    doc: 'default role `edit` includes `view` (deployments get)',
    objects: [bindIn('edit')],
    attrs: res(bob, 'get', 'deployments', { ns: 'team', group: 'apps', name: 'd' }),
    allowed: true,
  },
  {
    doc: 'default role `edit` allows requesting tokens for service accounts (serviceaccounts/token create)',
    objects: [bindIn('edit')],
    attrs: res(bob, 'create', 'serviceaccounts', { ns: 'team', sub: 'token', name: 'builder' }),
    allowed: true,
  },
  {
    doc: 'default role `view` does not allow requesting service account tokens',
    objects: [bindIn('view')],
    attrs: res(bob, 'create', 'serviceaccounts', { ns: 'team', sub: 'token', name: 'builder' }),
    allowed: false,
  },
  {
    doc: 'default role `edit` may impersonate service accounts of the namespace',
    objects: [bindIn('edit')],
    attrs: res(bob, 'impersonate', 'serviceaccounts', { ns: 'team', name: 'builder' }),
    allowed: true,
  },
  {
    doc: 'default role `edit` does not allow viewing or modifying roles or role bindings',
    objects: [bindIn('edit')],
    attrs: res(bob, 'create', 'rolebindings', { ns: 'team', group: G }),
    allowed: false,
  },
  {
    doc: 'default role `admin` allows creating roles and role bindings within the namespace',
    objects: [bindIn('admin')],
    attrs: res(bob, 'create', 'rolebindings', { ns: 'team', group: G }),
    allowed: true,
  },
  {
    doc: 'default role `admin` includes `edit` (update deployments)',
    objects: [bindIn('admin')],
    attrs: res(bob, 'update', 'deployments', { ns: 'team', group: 'apps', name: 'd' }),
    allowed: true,
  },
  {
    doc: 'default role `admin` does not allow write access to the namespace itself',
    objects: [bindIn('admin')],
    attrs: res(bob, 'update', 'namespaces', { ns: 'team', name: 'team' }),
    allowed: false,
  },
  {
    doc: 'default role bound by RoleBinding stays inside the namespace',
    objects: [bindIn('admin')],
    attrs: res(bob, 'get', 'configmaps', { ns: 'elsewhere', name: 'c' }),
    allowed: false,
  },
  {
    doc: 'a ClusterRole labelled aggregate-to-view extends `view`',
    objects: [cronTabsView, bindIn('view')],
    attrs: res(bob, 'list', 'crontabs', { ns: 'team', group: 'stable.example.com' }),
    allowed: true,
  },
  {
    doc: 'a ClusterRole labelled aggregate-to-view reaches `edit` and `admin` through their labels',
    objects: [cronTabsView, bindIn('admin')],
    attrs: res(bob, 'list', 'crontabs', { ns: 'team', group: 'stable.example.com' }),
    allowed: true,
  },
  {
    doc: 'matchExpressions In',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }],
      }),
      bindSel,
    ],
    attrs: getIn('secrets'),
    allowed: true,
  },
  {
    doc: 'matchExpressions In excludes other values',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }],
      }),
      bindSel,
    ],
    attrs: getIn('services'),
    allowed: false,
  },
  {
    doc: 'matchExpressions NotIn includes roles without the key',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [
          { matchLabels: { other: 'x' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] },
        ],
      }),
      bindSel,
    ],
    attrs: getIn('pods'),
    allowed: true,
  },
  {
    doc: 'matchExpressions NotIn includes other values',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [
          {
            matchExpressions: [
              { key: 'tier', operator: 'Exists' },
              { key: 'tier', operator: 'NotIn', values: ['a'] },
            ],
          },
        ],
      }),
      bindSel,
    ],
    attrs: getIn('secrets'),
    allowed: true,
  },
  {
    doc: 'matchExpressions NotIn excludes the listed values',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [
          {
            matchExpressions: [
              { key: 'tier', operator: 'Exists' },
              { key: 'tier', operator: 'NotIn', values: ['a'] },
            ],
          },
        ],
      }),
      bindSel,
    ],
    attrs: getIn('configmaps'),
    allowed: false,
  },
  {
    doc: 'matchExpressions Exists',
    objects: [
      ...tiers,
      selectorRole({ clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }] }),
      bindSel,
    ],
    attrs: getIn('services'),
    allowed: true,
  },
  {
    doc: 'matchExpressions Exists excludes roles without the key',
    objects: [
      ...tiers,
      selectorRole({ clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'Exists' }] }] }),
      bindSel,
    ],
    attrs: getIn('pods'),
    allowed: false,
  },
  {
    doc: 'matchExpressions DoesNotExist picks roles without the key',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [
          { matchLabels: { other: 'x' }, matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
        ],
      }),
      bindSel,
    ],
    attrs: getIn('pods'),
    allowed: true,
  },
  {
    doc: 'matchExpressions DoesNotExist skips roles with the key',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [
          {
            matchExpressions: [
              { key: 'tier', operator: 'DoesNotExist' },
              { key: 'other', operator: 'Exists' },
            ],
          },
        ],
      }),
      bindSel,
    ],
    attrs: getIn('configmaps'),
    allowed: false,
  },
  {
    doc: 'an empty selector picks every ClusterRole (cluster-admin included)',
    objects: [selectorRole({ clusterRoleSelectors: [{}] }), bindSel],
    attrs: getIn('secrets'),
    allowed: true,
  },
  {
    doc: 'an aggregationRule without selectors aggregates nothing',
    objects: [selectorRole({ clusterRoleSelectors: [] }), bindSel],
    attrs: getIn('configmaps'),
    allowed: false,
  },
  {
    doc: 'an invalid selector operator picks nothing',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [{ matchExpressions: [{ key: 'tier', operator: 'Like', values: ['a'] }] }],
      }),
      bindSel,
    ],
    attrs: getIn('configmaps'),
    allowed: false,
  },
  {
    doc: 'matchLabels and matchExpressions must both hold',
    objects: [
      ...tiers,
      selectorRole({
        clusterRoleSelectors: [
          { matchLabels: { tier: 'a' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b'] }] },
        ],
      }),
      bindSel,
    ],
    attrs: getIn('configmaps'),
    allowed: false,
  },
  {
    doc: 'several selectors: a role picked by any of them is included',
    objects: [
      ...tiers,
      selectorRole({ clusterRoleSelectors: [{ matchLabels: { tier: 'a' } }, { matchLabels: { tier: 'c' } }] }),
      bindSel,
    ],
    attrs: getIn('services'),
    allowed: true,
  },
]);

// ---------------------------------------------------------------------------------------------------------------
// Bootstrap policy of a fresh cluster
// ---------------------------------------------------------------------------------------------------------------
const alice = human('alice');
const sa = saUser('apps', 'controller');
const SSAR = (user: UserInfo) => res(user, 'create', 'selfsubjectaccessreviews', { group: 'authorization.k8s.io' });

run('bootstrap policy of a fresh cluster', [
  {
    doc: 'system:public-info-viewer: an authenticated user may get /version',
    attrs: url(alice, 'get', '/version'),
    allowed: true,
  },
  {
    doc: 'system:public-info-viewer: an authenticated user may get /healthz',
    attrs: url(alice, 'get', '/healthz'),
    allowed: true,
  },
  {
    doc: 'system:public-info-viewer: an authenticated user may get /livez and /readyz',
    attrs: url(alice, 'get', '/readyz'),
    allowed: true,
  },
  {
    doc: 'system:public-info-viewer: unauthenticated users may get /version',
    attrs: url(anonymous, 'get', '/version'),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole "system:public-info-viewer" to Group "system:unauthenticated"',
  },
  {
    doc: 'system:public-info-viewer: unauthenticated users may get /healthz',
    attrs: url(anonymous, 'get', '/healthz'),
    allowed: true,
  },
  {
    doc: 'system:public-info-viewer: /healthz/ping is not public',
    attrs: url(anonymous, 'get', '/healthz/ping'),
    allowed: false,
    reason: '',
  },
  {
    doc: 'system:discovery: authenticated users may read API discovery',
    attrs: url(alice, 'get', '/api'),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated"',
  },
  { doc: 'system:discovery: /apis/* covers group versions', attrs: url(alice, 'get', '/apis/apps/v1'), allowed: true },
  { doc: 'system:discovery: /openapi/* covers openapi v3', attrs: url(alice, 'get', '/openapi/v3'), allowed: true },
  {
    doc: 'system:discovery is no longer granted to unauthenticated users (since 1.14)',
    attrs: url(anonymous, 'get', '/api'),
    allowed: false,
  },
  {
    doc: 'no default role lets an authenticated user get /metrics',
    attrs: url(alice, 'get', '/metrics'),
    allowed: false,
    reason: '',
  },
  { doc: 'no default role lets a service account get /metrics', attrs: url(sa, 'get', '/metrics'), allowed: false },
  { doc: 'defaults grant only get: post /version is denied', attrs: url(alice, 'post', '/version'), allowed: false },
  {
    doc: 'system:basic-user: authenticated users may create SelfSubjectAccessReviews',
    attrs: SSAR(alice),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"',
  },
  {
    doc: 'system:basic-user: authenticated users may create SelfSubjectRulesReviews',
    attrs: res(alice, 'create', 'selfsubjectrulesreviews', { group: 'authorization.k8s.io' }),
    allowed: true,
  },
  {
    doc: 'system:basic-user: authenticated users may create SelfSubjectReviews (whoami)',
    attrs: res(alice, 'create', 'selfsubjectreviews', { group: 'authentication.k8s.io' }),
    allowed: true,
  },
  { doc: 'system:basic-user is not granted to unauthenticated users', attrs: SSAR(anonymous), allowed: false },
  {
    doc: 'creating SubjectAccessReviews needs system:auth-delegator or similar, not a default grant',
    attrs: res(sa, 'create', 'subjectaccessreviews', { group: 'authorization.k8s.io' }),
    allowed: false,
  },
  {
    doc: 'creating TokenReviews needs system:auth-delegator or similar, not a default grant',
    attrs: res(sa, 'create', 'tokenreviews', { group: 'authentication.k8s.io' }),
    allowed: false,
  },
  {
    doc: 'system:auth-delegator allows creating TokenReviews',
    objects: [crb('delegate', 'system:auth-delegator', [SA('controller', 'apps')])],
    attrs: res(sa, 'create', 'tokenreviews', { group: 'authentication.k8s.io' }),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "delegate" of ClusterRole "system:auth-delegator" to ServiceAccount "controller/apps"',
  },
  {
    doc: 'system:auth-delegator allows creating SubjectAccessReviews',
    objects: [crb('delegate', 'system:auth-delegator', [SA('controller', 'apps')])],
    attrs: res(sa, 'create', 'subjectaccessreviews', { group: 'authorization.k8s.io' }),
    allowed: true,
  },
  {
    doc: 'system:auth-delegator does not grant LocalSubjectAccessReviews',
    objects: [crb('delegate', 'system:auth-delegator', [SA('controller', 'apps')])],
    attrs: res(sa, 'create', 'localsubjectaccessreviews', { ns: 'apps', group: 'authorization.k8s.io' }),
    allowed: false,
  },
  {
    doc: 'system:service-account-issuer-discovery: service accounts may read the OIDC discovery document',
    attrs: url(sa, 'get', '/.well-known/openid-configuration'),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "system:service-account-issuer-discovery" of ClusterRole "system:service-account-issuer-discovery" to Group "system:serviceaccounts"',
  },
  {
    doc: 'system:service-account-issuer-discovery: service accounts may read the JWKS',
    attrs: url(sa, 'get', '/openid/v1/jwks'),
    allowed: true,
  },
  {
    doc: 'system:service-account-issuer-discovery is bound to service accounts only',
    attrs: url(alice, 'get', '/openid/v1/jwks'),
    allowed: false,
  },
  {
    doc: 'system:monitoring group may get /metrics',
    attrs: url(human('scraper', 'system:monitoring'), 'get', '/metrics'),
    allowed: true,
    reason:
      'RBAC: allowed by ClusterRoleBinding "system:monitoring" of ClusterRole "system:monitoring" to Group "system:monitoring"',
  },
  {
    doc: 'system:masters is allowed everything (superuser group, before RBAC: empty reason)',
    attrs: url(masters, 'delete', '/anything'),
    allowed: true,
    reason: '',
  },
  {
    doc: 'system:masters is allowed every resource verb',
    attrs: res(masters, 'escalate', 'clusterroles', { group: G, name: 'x' }),
    allowed: true,
    reason: '',
  },
  {
    doc: 'cluster-admin via ClusterRoleBinding allows every resource',
    objects: [crb('root', 'cluster-admin', [User('root')])],
    attrs: res(human('root'), 'delete', 'nodes', { name: 'n' }),
    allowed: true,
    reason: 'RBAC: allowed by ClusterRoleBinding "root" of ClusterRole "cluster-admin" to User "root"',
  },
  {
    doc: 'cluster-admin via ClusterRoleBinding allows every non-resource URL',
    objects: [crb('root', 'cluster-admin', [User('root')])],
    attrs: url(human('root'), 'get', '/metrics'),
    allowed: true,
  },
  {
    doc: 'cluster-admin via RoleBinding grants full control of that namespace only',
    objects: [rb('ns1', 'local-admin', 'ClusterRole', 'cluster-admin', [User('lea')])],
    attrs: res(human('lea'), 'delete', 'secrets', { ns: 'ns1', name: 's' }),
    allowed: true,
  },
  {
    doc: 'cluster-admin via RoleBinding grants nothing in other namespaces',
    objects: [rb('ns1', 'local-admin', 'ClusterRole', 'cluster-admin', [User('lea')])],
    attrs: res(human('lea'), 'delete', 'secrets', { ns: 'ns2', name: 's' }),
    allowed: false,
  },
  {
    doc: 'cluster-admin via RoleBinding grants no non-resource URL',
    objects: [rb('ns1', 'local-admin', 'ClusterRole', 'cluster-admin', [User('lea')])],
    attrs: url(human('lea'), 'get', '/metrics'),
    allowed: false,
  },
  {
    doc: 'a user in no group (not even system:authenticated) is granted nothing by the defaults',
    attrs: url({ username: 'ghost', groups: [] }, 'get', '/version'),
    allowed: false,
    reason: '',
  },
]);

// ---------------------------------------------------------------------------------------------------------------
// The bootstrap objects themselves
// ---------------------------------------------------------------------------------------------------------------
describe('bootstrapPolicy()', () => {
  const objs = bootstrapPolicy() as Array<{
    apiVersion: string;
    kind: string;
    metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
    roleRef?: { kind: string; name: string; apiGroup: string };
    subjects?: Subject[];
  }>;
  const names = (kind: string) => objs.filter((o) => o.kind === kind).map((o) => o.metadata.name);

  it('holds the documented default ClusterRoles', () => {
    for (const n of [
      'cluster-admin',
      'admin',
      'edit',
      'view',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'system:auth-delegator',
      'system:service-account-issuer-discovery',
      'system:aggregate-to-admin',
      'system:aggregate-to-edit',
      'system:aggregate-to-view',
    ]) {
      assert.ok(names('ClusterRole').includes(n), `ClusterRole ${n}`);
    }
  });

  it('holds the documented default ClusterRoleBindings with their documented subjects', () => {
    const subjectsOf = (n: string) =>
      objs
        .find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === n)
        ?.subjects?.map((s) => `${s.kind}:${s.name}`)
        .sort();
    assert.deepEqual(subjectsOf('cluster-admin'), ['Group:system:masters']);
    assert.deepEqual(subjectsOf('system:basic-user'), ['Group:system:authenticated']);
    assert.deepEqual(subjectsOf('system:discovery'), ['Group:system:authenticated']);
    assert.deepEqual(subjectsOf('system:public-info-viewer'), [
      'Group:system:authenticated',
      'Group:system:unauthenticated',
    ]);
    assert.deepEqual(subjectsOf('system:service-account-issuer-discovery'), ['Group:system:serviceaccounts']);
    assert.equal(subjectsOf('system:auth-delegator'), undefined, 'system:auth-delegator has no default binding');
  });

  it('labels every object kubernetes.io/bootstrapping=rbac-defaults and marks it auto-update', () => {
    for (const o of objs) {
      assert.equal(o.apiVersion, 'rbac.authorization.k8s.io/v1');
      assert.equal(o.metadata.labels?.['kubernetes.io/bootstrapping'], 'rbac-defaults', o.metadata.name);
      assert.equal(o.metadata.annotations?.['rbac.authorization.kubernetes.io/autoupdate'], 'true', o.metadata.name);
    }
  });

  it('binds only ClusterRoles that exist', () => {
    for (const b of objs.filter((o) => o.kind === 'ClusterRoleBinding')) {
      assert.equal(b.roleRef?.kind, 'ClusterRole');
      assert.equal(b.roleRef?.apiGroup, G);
      assert.ok(names('ClusterRole').includes(b.roleRef?.name ?? ''), `${b.metadata.name} → ${b.roleRef?.name}`);
    }
  });

  it('aggregates admin ← edit ← view through the aggregate-to-* labels', () => {
    const byName = new Map(objs.map((o) => [o.metadata.name, o]));
    assert.equal(byName.get('edit')?.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-admin'], 'true');
    assert.equal(byName.get('view')?.metadata.labels?.['rbac.authorization.k8s.io/aggregate-to-edit'], 'true');
    const w = world();
    const admin = w.clusterRoles.find((r) => r.metadata.name === 'admin') as ClusterRole;
    const view = w.clusterRoles.find((r) => r.metadata.name === 'view') as ClusterRole;
    const adminRules = resolveAggregatedRules(w, admin).map((r) => JSON.stringify(r));
    for (const r of resolveAggregatedRules(w, view))
      assert.ok(adminRules.includes(JSON.stringify(r)), `admin includes view rule ${JSON.stringify(r)}`);
  });

  it('returns fresh copies: mutating one result does not change the next', () => {
    const a = bootstrapPolicy();
    (a[0] as { metadata: { name: string } }).metadata.name = 'changed';
    assert.notEqual((bootstrapPolicy()[0] as { metadata: { name: string } }).metadata.name, 'changed');
  });
});

describe('rulesFor()', () => {
  it('lists the rules of ClusterRoleBindings and, in a namespace, of its RoleBindings', () => {
    const w = world([podReader, readPods]);
    const cluster = rulesFor(w, jane, '');
    const inDefault = rulesFor(w, jane, 'default');
    const has = (rules: PolicyRule[], r: PolicyRule) => rules.some((x) => JSON.stringify(x) === JSON.stringify(r));
    assert.ok(!has(cluster.rules, (podReader.rules ?? [])[0]));
    assert.ok(has(inDefault.rules, (podReader.rules ?? [])[0]));
    assert.ok(
      has(cluster.rules, {
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
        verbs: ['create'],
      }),
    );
    assert.deepEqual(inDefault.errors, []);
  });

  it('reports unresolvable role references', () => {
    const w = world([crb('dangling', 'ghost', [User('jane')])]);
    assert.deepEqual(rulesFor(w, jane, '').errors, ['clusterrole.rbac.authorization.k8s.io "ghost" not found']);
  });
});

// Writing RBAC objects through the API as kube-apiserver checks it, from the Kubernetes documentation
// ("Privilege escalation prevention and bootstrapping", RBAC API validation): a user may only grant what they hold,
// unless they have `escalate` (roles) or `bind` (bindings); system:masters is exempt; aggregationRule needs full
// authority; invalid RBAC objects are 422; roleRef is immutable.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call, type Obj } from './https.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });

describe('RBAC writes: validation and privilege-escalation prevention', () => {
  let a: Authority;
  let admin: (m: string, p: string, body?: unknown) => ReturnType<typeof call>;
  let boss: (m: string, p: string, body?: unknown) => ReturnType<typeof call>;

  const saToken = async (ns: string, name: string) => {
    await admin('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } });
    return (await admin('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, { spec: {} })).body.status
      .token as string;
  };

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    admin = (m, p, body) => call(a.url, a.caPem, m, p, { token: a.adminToken, body });
    for (const ns of ['team', 'elsewhere']) await admin('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    // "boss" administers namespace team through the aggregated `admin` ClusterRole, as the docs' namespace admin
    const token = await saToken('team', 'boss');
    boss = (m, p, body) => call(a.url, a.caPem, m, p, { token, body });
    const rb = await admin('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'boss-admin' },
      roleRef: ref('ClusterRole', 'admin'),
      subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
    });
    assert.equal(rb.status, 201, rb.text);
  });
  after(async () => {
    await a?.stop();
  });

  it('may create a Role with rules it holds, not one with rules it lacks', async () => {
    const ok = await boss('POST', `${RBAC}/namespaces/team/roles`, {
      metadata: { name: 'cm-reader' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
    });
    assert.equal(ok.status, 201, ok.text);
    const bad = await boss('POST', `${RBAC}/namespaces/team/roles`, {
      metadata: { name: 'node-reader' },
      rules: [{ apiGroups: [''], resources: ['nodes', 'configmaps'], verbs: ['get'] }],
    });
    assert.equal(bad.status, 403);
    assert.equal(bad.body.reason, 'Forbidden');
    assert.equal(
      bad.body.message,
      'roles.rbac.authorization.k8s.io "node-reader" is forbidden: user "system:serviceaccount:team:boss" (groups=["system:serviceaccounts" "system:serviceaccounts:team" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}',
    );
    assert.equal((await admin('GET', `${RBAC}/namespaces/team/roles/node-reader`)).status, 404, 'nothing was stored');
  });

  it('may bind a role it holds (view) but not one it does not (cluster-admin), and not bind a missing role', async () => {
    const view = await boss('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'v' },
      roleRef: ref('ClusterRole', 'view'),
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal(view.status, 201, view.text);
    assert.equal(
      view.body.subjects[0].apiGroup,
      'rbac.authorization.k8s.io',
      'User subjects get the RBAC apiGroup by default',
    );
    const ca = await boss('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'ca' },
      roleRef: ref('ClusterRole', 'cluster-admin'),
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal(ca.status, 403);
    assert.match(
      ca.body.message,
      /^rolebindings\.rbac\.authorization\.k8s\.io "ca" is forbidden: user "system:serviceaccount:team:boss" .* is attempting to grant RBAC permissions not currently held:\n/,
    );
    const missing = await boss('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'm' },
      roleRef: ref('Role', 'no-such-role'),
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'roles.rbac.authorization.k8s.io "no-such-role" not found');
  });

  it('the bind verb on a named ClusterRole lets it bind that role without holding its rules', async () => {
    await admin('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'bind-cluster-admin' },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles'],
          verbs: ['bind'],
          resourceNames: ['cluster-admin'],
        },
      ],
    });
    await admin('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'boss-bind' },
      roleRef: ref('ClusterRole', 'bind-cluster-admin'),
      subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
    });
    const ca = await boss('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'ca2' },
      roleRef: ref('ClusterRole', 'cluster-admin'),
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal(ca.status, 201, ca.text);
    const edit = await boss('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'x' },
      roleRef: ref('ClusterRole', 'system:auth-delegator'),
      subjects: [{ kind: 'User', name: 'jane' }],
    });
    assert.equal(edit.status, 403, 'bind is granted for cluster-admin only');
  });

  it('the escalate verb lets it create roles with rules it does not hold', async () => {
    await admin('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'escalate-roles' },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }],
    });
    await admin('POST', `${RBAC}/namespaces/team/rolebindings`, {
      metadata: { name: 'boss-escalate' },
      roleRef: ref('ClusterRole', 'escalate-roles'),
      subjects: [{ kind: 'ServiceAccount', name: 'boss', namespace: 'team' }],
    });
    const r = await boss('POST', `${RBAC}/namespaces/team/roles`, {
      metadata: { name: 'anything' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    });
    assert.equal(r.status, 201, r.text);
  });

  it('outside its namespace the request is denied by authorization before any escalation check', async () => {
    const r = await boss('POST', `${RBAC}/namespaces/elsewhere/roles`, { metadata: { name: 'r' }, rules: [] });
    assert.equal(r.status, 403);
    assert.equal(
      r.body.message,
      'roles.rbac.authorization.k8s.io is forbidden: User "system:serviceaccount:team:boss" cannot create resource "roles" in API group "rbac.authorization.k8s.io" in the namespace "elsewhere"',
    );
  });

  it('an aggregationRule needs cluster-admin rights; system:masters may do anything, even bind a missing role', async () => {
    const token = await saToken('team', 'role-maker');
    await admin('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'make-clusterroles' },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['create'] }],
    });
    await admin('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'role-maker' },
      roleRef: ref('ClusterRole', 'make-clusterroles'),
      subjects: [{ kind: 'ServiceAccount', name: 'role-maker', namespace: 'team' }],
    });
    const agg = await call(a.url, a.caPem, 'POST', `${RBAC}/clusterroles`, {
      token,
      body: {
        metadata: { name: 'agg' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
        rules: [],
      },
    });
    assert.equal(agg.status, 403);
    assert.equal(
      agg.body.message,
      'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );
    const byAdmin = await admin('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'agg' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { x: 'y' } }] },
      rules: [],
    });
    assert.equal(byAdmin.status, 201);
    const dangling = await admin('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'dangling' },
      roleRef: ref('ClusterRole', 'not-yet'),
      subjects: [{ kind: 'Group', name: 'g' }],
    });
    assert.equal(dangling.status, 201, 'kube lets system:masters reference a role that does not exist yet');
  });

  it('rejects invalid RBAC objects with 422 Invalid', async () => {
    const cases: Array<[string, Obj, RegExp]> = [
      [
        `${RBAC}/clusterrolebindings`,
        {
          metadata: { name: 'b1' },
          roleRef: ref('ClusterRole', 'view'),
          subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
        },
        /subjects\[0\]\.namespace: Required value/,
      ],
      [
        `${RBAC}/clusterrolebindings`,
        { metadata: { name: 'b2' }, roleRef: ref('Role', 'view'), subjects: [] },
        /roleRef\.kind: Unsupported value: "Role": supported values: "ClusterRole"/,
      ],
      [
        `${RBAC}/namespaces/team/rolebindings`,
        { metadata: { name: 'b3' }, roleRef: { kind: 'ClusterRole', name: 'view' } },
        /roleRef\.apiGroup: Unsupported value: ""/,
      ],
      [
        `${RBAC}/namespaces/team/rolebindings`,
        { metadata: { name: 'b4' }, roleRef: ref('ClusterRole', 'view'), subjects: [{ kind: 'Robot', name: 'r' }] },
        /subjects\[0\]\.kind: Unsupported value: "Robot"/,
      ],
      [
        `${RBAC}/clusterroles`,
        { metadata: { name: 'r1' }, rules: [{ apiGroups: [''], resources: ['pods'] }] },
        /rules\[0\]\.verbs: Required value/,
      ],
      [
        `${RBAC}/clusterroles`,
        { metadata: { name: 'r2' }, rules: [{ resources: ['pods'], verbs: ['get'] }] },
        /rules\[0\]\.apiGroups: Required value/,
      ],
      [
        `${RBAC}/namespaces/team/roles`,
        { metadata: { name: 'r3' }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
        /namespaced rules cannot apply to non-resource URLs/,
      ],
      [
        `${RBAC}/clusterroles`,
        {
          metadata: { name: 'r4' },
          rules: [{ apiGroups: [''], resources: ['pods'], nonResourceURLs: ['/x'], verbs: ['get'] }],
        },
        /rules cannot apply to both regular resources and non-resource URLs/,
      ],
    ];
    for (const [path, body, msg] of cases) {
      const r = await admin('POST', path, body);
      assert.equal(r.status, 422, `${body.metadata.name}: ${r.text}`);
      assert.equal(r.body.reason, 'Invalid');
      assert.match(r.body.message, msg);
    }
  });

  it('roleRef cannot change on update', async () => {
    const b = await admin('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: 'fixed' },
      roleRef: ref('ClusterRole', 'view'),
      subjects: [{ kind: 'Group', name: 'g' }],
    });
    const changed = await admin('PUT', `${RBAC}/clusterrolebindings/fixed`, {
      ...b.body,
      roleRef: ref('ClusterRole', 'edit'),
    });
    assert.equal(changed.status, 422);
    assert.match(
      changed.body.message,
      /^ClusterRoleBinding\.rbac\.authorization\.k8s\.io "fixed" is invalid: roleRef: Invalid value: .*cannot change roleRef$/,
    );
    const subjects = await admin('PUT', `${RBAC}/clusterrolebindings/fixed`, {
      ...b.body,
      subjects: [{ kind: 'Group', name: 'h' }],
    });
    assert.equal(subjects.status, 200, 'subjects may change');
  });
});

/**
 * Property-based tests (fast-check) of the RBAC evaluator. Each property is a rule stated in the Kubernetes RBAC
 * documentation ("permissions are purely additive", "`*` matches all", "a trailing `*` is a suffix glob", ...) or a
 * guarantee the authority relies on (never throws, fail closed). Expected values come from small oracles written
 * here from those rules, never from the evaluator.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  authorize,
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
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from '../../packages/envtest/src/bootstrap.js';
import { propertyParams } from '../helpers/property.js';

const G = 'rbac.authorization.k8s.io';
/** FC_RUNS deepens the search, FC_SEED/FC_PATH replay a failure (test/helpers/property.ts). */
const RUNS = propertyParams(400);

// ---- arbitraries ----
const VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'post',
  'put',
  'head',
  'impersonate',
  'bind',
  'escalate',
];
const GROUPS = ['', 'apps', G, 'authorization.k8s.io', 'authentication.k8s.io', 'example.com'];
const RESOURCES = [
  'pods',
  'configmaps',
  'secrets',
  'serviceaccounts',
  'deployments',
  'namespaces',
  'selfsubjectaccessreviews',
  'selfsubjectrulesreviews',
  'selfsubjectreviews',
  'tokenreviews',
  'subjectaccessreviews',
];
const SUBS = ['', '', 'log', 'status', 'scale', 'token'];
const NAMES = ['', '', 'a', 'b', 'web'];
const NAMESPACES = ['', 'ns1', 'ns2'];
const PATHS = [
  '/metrics',
  '/metrics/',
  '/metricsx',
  '/metric',
  '/healthz',
  '/healthz/ping',
  '/livez',
  '/readyz',
  '/version',
  '/version/',
  '/api',
  '/api/v1',
  '/apis',
  '/apis/apps/v1',
  '/openapi/v2',
  '/openid/v1/jwks',
  '/',
  '//metrics',
  '/x/y',
];
const USERNAMES = ['u1', 'u2', 'system:serviceaccount:ns1:sa', 'system:serviceaccount:ns2:sa'];
const USER_GROUPS = ['g1', 'g2', 'system:serviceaccounts', 'system:serviceaccounts:ns1'];

const pathArb = fc.oneof(
  fc.constantFrom(...PATHS),
  fc.string({ maxLength: 12 }).map((s) => '/' + s),
);
const verbArb = fc.constantFrom(...VERBS);

const ruleResourceArb = fc.oneof(
  fc.constantFrom(...RESOURCES),
  fc
    .tuple(fc.constantFrom(...RESOURCES), fc.constantFrom('log', 'status', 'scale', 'token'))
    .map(([r, s]) => `${r}/${s}`),
  fc.constant('*'),
  fc.constantFrom('log', 'status', 'scale', 'token').map((s) => `*/${s}`),
);
const ruleUrlArb = fc.oneof(
  fc.constantFrom(...PATHS),
  fc.constantFrom('*', '/metrics*', '/healthz/*', '/api/*', '/m*'),
);

const ruleArb: fc.Arbitrary<PolicyRule> = fc.oneof(
  fc.record({
    verbs: fc.oneof(fc.subarray(VERBS, { minLength: 1, maxLength: 4 }), fc.constant<string[]>(['*'])),
    apiGroups: fc.oneof(fc.subarray(GROUPS, { minLength: 1, maxLength: 2 }), fc.constant<string[]>(['*'])),
    resources: fc.array(ruleResourceArb, { minLength: 1, maxLength: 3 }),
    resourceNames: fc.oneof(fc.constant([] as string[]), fc.subarray(['a', 'b', 'web'], { minLength: 1 })),
  }),
  fc.record({
    verbs: fc.oneof(fc.subarray(VERBS, { minLength: 1, maxLength: 4 }), fc.constant<string[]>(['*'])),
    nonResourceURLs: fc.array(ruleUrlArb, { minLength: 1, maxLength: 3 }),
  }),
);

const subjectArb: fc.Arbitrary<Subject> = fc.oneof(
  fc.constantFrom(...USERNAMES, 'nobody').map((name) => ({ kind: 'User', apiGroup: G, name })),
  fc.constantFrom(...USER_GROUPS, 'nogroup').map((name) => ({ kind: 'Group', apiGroup: G, name })),
  fc
    .tuple(fc.constantFrom('sa', 'other'), fc.constantFrom(undefined, 'ns1', 'ns2'))
    .map(([name, namespace]) =>
      namespace === undefined ? { kind: 'ServiceAccount', name } : { kind: 'ServiceAccount', name, namespace },
    ),
);

const CR_NAMES = ['cr0', 'cr1', 'cr2'];
const ROLE_NAMES = ['r0', 'r1'];

const clusterRoleArb = (name: string): fc.Arbitrary<ClusterRole> =>
  fc
    .array(ruleArb, { maxLength: 3 })
    .map((rules) => ({ apiVersion: `${G}/v1`, kind: 'ClusterRole', metadata: { name }, rules }));
const roleArb: fc.Arbitrary<Role> = fc
  .tuple(fc.constantFrom('ns1', 'ns2'), fc.constantFrom(...ROLE_NAMES), fc.array(ruleArb, { maxLength: 3 }))
  .map(([namespace, name, rules]) => ({ apiVersion: `${G}/v1`, kind: 'Role', metadata: { name, namespace }, rules }));
const crbArb: fc.Arbitrary<ClusterRoleBinding> = fc
  .tuple(fc.nat(1000), fc.constantFrom(...CR_NAMES, 'missing'), fc.array(subjectArb, { minLength: 1, maxLength: 3 }))
  .map(([i, role, subjects]) => ({
    apiVersion: `${G}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: `crb-${i}` },
    roleRef: { apiGroup: G, kind: 'ClusterRole', name: role },
    subjects,
  }));
const rbArb: fc.Arbitrary<RoleBinding> = fc
  .tuple(
    fc.nat(1000),
    fc.constantFrom('ns1', 'ns2'),
    fc.oneof(
      fc.constantFrom(...CR_NAMES).map((name) => ({ kind: 'ClusterRole', name })),
      fc.constantFrom(...ROLE_NAMES, 'missing').map((name) => ({ kind: 'Role', name })),
    ),
    fc.array(subjectArb, { minLength: 1, maxLength: 3 }),
  )
  .map(([i, namespace, ref, subjects]) => ({
    apiVersion: `${G}/v1`,
    kind: 'RoleBinding',
    metadata: { name: `rb-${i}`, namespace },
    roleRef: { apiGroup: G, ...ref },
    subjects,
  }));

const worldArb: fc.Arbitrary<RbacObjects> = fc.record({
  clusterRoles: fc.tuple(...CR_NAMES.map(clusterRoleArb)),
  roles: fc.array(roleArb, { maxLength: 3 }),
  clusterRoleBindings: fc.array(crbArb, { maxLength: 3 }),
  roleBindings: fc.array(rbArb, { maxLength: 3 }),
});

const userArb: fc.Arbitrary<UserInfo> = fc.record({
  username: fc.constantFrom(...USERNAMES),
  groups: fc.subarray(USER_GROUPS),
});

const resourceAttrsArb = (user: fc.Arbitrary<UserInfo>): fc.Arbitrary<AuthzAttributes> =>
  fc.record({
    user,
    verb: verbArb,
    resourceRequest: fc.constant(true),
    namespace: fc.constantFrom(...NAMESPACES),
    apiGroup: fc.constantFrom(...GROUPS),
    resource: fc.constantFrom(...RESOURCES),
    subresource: fc.constantFrom(...SUBS),
    name: fc.constantFrom(...NAMES),
  });
const urlAttrsArb = (user: fc.Arbitrary<UserInfo>): fc.Arbitrary<AuthzAttributes> =>
  fc.record({ user, verb: verbArb, resourceRequest: fc.constant(false), path: pathArb });
const attrsArb = (user: fc.Arbitrary<UserInfo> = userArb) => fc.oneof(resourceAttrsArb(user), urlAttrsArb(user));

const empty = (): RbacObjects => ({ clusterRoles: [], clusterRoleBindings: [], roles: [], roleBindings: [] });
/** A world where exactly one ClusterRole with `rules` is bound cluster-wide to user `p` (who is in no group). */
const grantOnly = (rules: PolicyRule[]): RbacObjects => ({
  clusterRoles: [{ metadata: { name: 'granted' }, rules }],
  clusterRoleBindings: [
    {
      metadata: { name: 'granted' },
      roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'granted' },
      subjects: [{ kind: 'User', apiGroup: G, name: 'p' }],
    },
  ],
  roles: [],
  roleBindings: [],
});
const p: UserInfo = { username: 'p', groups: [] };
const bootstrapWorld = (): RbacObjects => ({
  ...empty(),
  clusterRoles: bootstrapClusterRoles(),
  clusterRoleBindings: bootstrapClusterRoleBindings(),
});

describe('RBAC evaluator properties', () => {
  it('a rule with verbs `*` allows a request exactly when the same rule with that specific verb does', () => {
    fc.assert(
      fc.property(ruleArb, attrsArb(fc.constant(p)), (rule, attrs) => {
        const star = authorize(grantOnly([{ ...rule, verbs: ['*'] }]), attrs).allowed;
        const specific = authorize(grantOnly([{ ...rule, verbs: [attrs.verb] }]), attrs).allowed;
        assert.equal(star, specific);
      }),
      RUNS,
    );
  });

  it('a rule never allows a verb it does not list (and does not list `*`)', () => {
    fc.assert(
      fc.property(ruleArb, attrsArb(fc.constant(p)), (rule, attrs) => {
        fc.pre(!rule.verbs.includes('*') && !rule.verbs.includes(attrs.verb));
        assert.equal(authorize(grantOnly([rule]), attrs).allowed, false);
      }),
      RUNS,
    );
  });

  it('permissions are purely additive: adding a binding or role never removes a permission', () => {
    const extraArb = fc.oneof(
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
      crbArb.map((b) => ({ clusterRoleBindings: [b] }) as Partial<RbacObjects>),
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
      rbArb.map((b) => ({ roleBindings: [b] }) as Partial<RbacObjects>),
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
      roleArb.map((r) => ({ roles: [r] }) as Partial<RbacObjects>),
    );
    fc.assert(
      fc.property(worldArb, extraArb, attrsArb(), (w, extra, attrs) => {
        // a Role of a name its namespace already has would replace that Role, not add one (names are unique)
        const taken = (r: Role) =>
          w.roles.some((x) => x.metadata.name === r.metadata.name && x.metadata.namespace === r.metadata.namespace);
        fc.pre(!(extra.roles ?? []).some(taken));
        const before = authorize(w, attrs).allowed;
        const bigger: RbacObjects = {
          clusterRoles: w.clusterRoles,
          roles: [...w.roles, ...(extra.roles ?? [])],
          clusterRoleBindings: [...w.clusterRoleBindings, ...(extra.clusterRoleBindings ?? [])],
          roleBindings: [...w.roleBindings, ...(extra.roleBindings ?? [])],
        };
        if (before) assert.equal(authorize(bigger, attrs).allowed, true);
      }),
      RUNS,
    );
  });

  it('adding a rule to a bound ClusterRole never removes a permission', () => {
    fc.assert(
      fc.property(worldArb, fc.constantFrom(...CR_NAMES), ruleArb, attrsArb(), (w, name, rule, attrs) => {
        const before = authorize(w, attrs).allowed;
        const bigger = {
          ...w,
          clusterRoles: w.clusterRoles.map((c) =>
            c.metadata.name === name ? { ...c, rules: [...(c.rules ?? []), rule] } : c,
          ),
        };
        if (before) assert.equal(authorize(bigger, attrs).allowed, true);
      }),
      RUNS,
    );
  });

  it('the decision does not depend on the order of bindings (only the reason may)', () => {
    fc.assert(
      fc.property(worldArb, attrsArb(), (w, attrs) => {
        const reversed = {
          ...w,
          clusterRoleBindings: [...w.clusterRoleBindings].reverse(),
          roleBindings: [...w.roleBindings].reverse(),
        };
        assert.equal(authorize(reversed, attrs).allowed, authorize(w, attrs).allowed);
      }),
      RUNS,
    );
  });

  it('a RoleBinding never grants a non-resource URL', () => {
    fc.assert(
      fc.property(worldArb, urlAttrsArb(userArb), fc.constantFrom(undefined, 'ns1', 'ns2'), (w, attrs, ns) => {
        const onlyRoleBindings = { ...w, clusterRoleBindings: [] };
        const a = ns === undefined ? attrs : { ...attrs, namespace: ns };
        assert.equal(authorize(onlyRoleBindings, a).allowed, false);
      }),
      RUNS,
    );
  });

  it('RoleBindings of other namespaces never matter', () => {
    fc.assert(
      fc.property(worldArb, resourceAttrsArb(userArb), (w, attrs) => {
        const ns = attrs.namespace ?? '';
        const local = { ...w, roleBindings: w.roleBindings.filter((b) => b.metadata.namespace === ns) };
        assert.equal(authorize(w, attrs).allowed, authorize(local, attrs).allowed);
      }),
      RUNS,
    );
  });

  it('a cluster-wide request (no namespace) is decided by ClusterRoleBindings alone', () => {
    fc.assert(
      fc.property(worldArb, attrsArb(), (w, attrs) => {
        const a = { ...attrs, namespace: '' };
        assert.equal(authorize(w, a).allowed, authorize({ ...w, roleBindings: [] }, a).allowed);
      }),
      RUNS,
    );
  });

  it('a rule with resourceNames never allows a request without a name (create, list, deletecollection)', () => {
    fc.assert(
      fc.property(ruleArb, resourceAttrsArb(fc.constant(p)), (rule, attrs) => {
        fc.pre((rule.resourceNames ?? []).length > 0);
        assert.equal(authorize(grantOnly([rule]), { ...attrs, name: '' }).allowed, false);
      }),
      RUNS,
    );
  });

  it('a prefix rule `p*` allows exactly the paths starting with p', () => {
    const stemArb = fc
      .oneof(fc.constantFrom('/metrics', '/healthz/', '/api', '/', ''), fc.string({ maxLength: 8 }))
      .filter((s) => !s.endsWith('*'));
    // Paths near the stem: the stem itself, the stem with something appended, a proper prefix of it, or any path.
    const stemAndPath = stemArb.chain((stem) =>
      fc.tuple(
        fc.constant(stem),
        fc.oneof(
          pathArb,
          fc.string({ maxLength: 4 }).map((s) => stem + s),
          fc.nat(stem.length).map((n) => stem.slice(0, n)),
        ),
      ),
    );
    fc.assert(
      fc.property(stemAndPath, ([stem, path]) => {
        const allowed = authorize(grantOnly([{ nonResourceURLs: [stem + '*'], verbs: ['get'] }]), {
          user: p,
          verb: 'get',
          resourceRequest: false,
          path,
        }).allowed;
        assert.equal(allowed, path.startsWith(stem));
      }),
      RUNS,
    );
  });

  it('an exact nonResourceURL (no `*`) allows exactly that path', () => {
    const exactArb = fc
      .oneof(
        fc.constantFrom(...PATHS),
        fc.string({ maxLength: 10 }).map((s) => '/' + s),
      )
      .filter((s) => !s.includes('*'));
    const exactAndPath = exactArb.chain((u) =>
      fc.tuple(
        fc.constant(u),
        fc.oneof(
          pathArb,
          fc.constant(u),
          fc.constant(u + '/'),
          fc.nat(u.length).map((n) => u.slice(0, n)),
        ),
      ),
    );
    fc.assert(
      fc.property(exactAndPath, ([u, path]) => {
        const allowed = authorize(grantOnly([{ nonResourceURLs: [u], verbs: ['get'] }]), {
          user: p,
          verb: 'get',
          resourceRequest: false,
          path,
        }).allowed;
        assert.equal(allowed, path === u);
      }),
      RUNS,
    );
  });

  it('system:masters is allowed everything, with an empty reason', () => {
    const mastersArb = fc.record({
      username: fc.string(),
      groups: fc.subarray(USER_GROUPS).map((g) => [...g, 'system:masters']),
    });
    fc.assert(
      fc.property(worldArb, attrsArb(mastersArb), (w, attrs) => {
        assert.deepEqual(authorize(w, attrs), { allowed: true, reason: '' });
      }),
      RUNS,
    );
  });

  it("reasons have kube-apiserver's shapes", () => {
    const allowRe =
      /^RBAC: allowed by (ClusterRoleBinding "[^"]*" of ClusterRole|RoleBinding "[^"]*\/ns[12]" of (Role|ClusterRole)) "[^"]*" to (User|Group|ServiceAccount) "[^"]*"$/;
    fc.assert(
      fc.property(worldArb, attrsArb(), (w, attrs) => {
        const d = authorize(w, attrs);
        if (d.allowed) assert.match(d.reason, allowRe);
        else assert.ok(d.reason === '' || /^RBAC: (\[.*\]|.* not found)$/.test(d.reason), d.reason);
      }),
      RUNS,
    );
  });
});

describe('bootstrap policy properties', () => {
  /** Oracle from the documented default roles: what any authenticated, non-service-account user may do. */
  const DISCOVERY_EXACT = new Set([
    '/api',
    '/apis',
    '/healthz',
    '/livez',
    '/openapi',
    '/readyz',
    '/version',
    '/version/',
  ]);
  const DISCOVERY_PREFIX = ['/api/', '/apis/', '/openapi/'];
  const PUBLIC = new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']);
  const SELF_REVIEWS = new Set([
    'authorization.k8s.io/selfsubjectaccessreviews',
    'authorization.k8s.io/selfsubjectrulesreviews',
    'authentication.k8s.io/selfsubjectreviews',
  ]);

  const plainUserArb = fc.record({
    username: fc.constantFrom('alice', 'bob', 'ci-bot@example.com'),
    groups: fc.subarray(['developers', 'ops']).map((g) => [...g, 'system:authenticated']),
  });

  it('an authenticated user with no bindings may only do what system:discovery, system:public-info-viewer and system:basic-user grant', () => {
    fc.assert(
      fc.property(attrsArb(plainUserArb), (attrs) => {
        let expected: boolean;
        if (attrs.resourceRequest) {
          expected =
            attrs.verb === 'create' && !attrs.subresource && SELF_REVIEWS.has(`${attrs.apiGroup}/${attrs.resource}`);
        } else {
          const path = attrs.path ?? '';
          expected =
            attrs.verb === 'get' && (DISCOVERY_EXACT.has(path) || DISCOVERY_PREFIX.some((pre) => path.startsWith(pre)));
        }
        assert.equal(authorize(bootstrapWorld(), attrs).allowed, expected);
      }),
      RUNS,
    );
  });

  it('an unauthenticated request may only get the public health and version paths', () => {
    const anonArb = fc.constant<UserInfo>({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
    fc.assert(
      fc.property(attrsArb(anonArb), (attrs) => {
        const expected = !attrs.resourceRequest && attrs.verb === 'get' && PUBLIC.has(attrs.path ?? '');
        assert.equal(authorize(bootstrapWorld(), attrs).allowed, expected);
      }),
      RUNS,
    );
  });

  it('a user in no special group is denied everything', () => {
    const loneArb = fc.record({
      username: fc.string({ minLength: 1 }),
      groups: fc.subarray(['developers', 'ops', 'g1']),
    });
    fc.assert(
      fc.property(attrsArb(loneArb), (attrs) => {
        assert.deepEqual(authorize(bootstrapWorld(), attrs), { allowed: false, reason: '' });
      }),
      RUNS,
    );
  });

  it('no default binding lets anyone but system:masters and system:monitoring get /metrics', () => {
    const someoneArb = fc.record({
      username: fc.oneof(fc.string(), fc.constantFrom('system:serviceaccount:ns1:sa', 'admin')),
      groups: fc.subarray([
        'system:authenticated',
        'system:unauthenticated',
        'system:serviceaccounts',
        'system:serviceaccounts:ns1',
        'developers',
      ]),
    });
    fc.assert(
      fc.property(someoneArb, fc.constantFrom('/metrics', '/metrics/', '/metrics/slis'), (user, path) => {
        assert.equal(authorize(bootstrapWorld(), { user, verb: 'get', resourceRequest: false, path }).allowed, false);
      }),
      RUNS,
    );
  });
});

describe('robustness', () => {
  it('never throws on malformed objects or attributes, and fails closed', () => {
    const junk = fc.oneof(
      fc.constant(null),
      fc.constant(undefined),
      fc.constant({}),
      fc.constant({ metadata: {} }),
      fc.constant({ metadata: { name: 'x' }, rules: [null] }),
      fc.constant({ metadata: { name: 'x' }, subjects: [null], roleRef: { kind: 'ClusterRole', name: 'cr0' } }),
    );
    fc.assert(
      fc.property(
        worldArb,
        fc.array(junk, { maxLength: 3 }),
        fc.array(junk, { maxLength: 3 }),
        attrsArb(fc.constant<UserInfo>({ username: 'nobody-bound', groups: [] })),
        (w, j1, j2, attrs) => {
          const everything: ClusterRole = {
            metadata: { name: 'everything' },
            aggregationRule: { clusterRoleSelectors: [{}, null as never] },
          };
          const messy = {
            clusterRoles: [...w.clusterRoles, everything, ...(j1 as ClusterRole[])],
            roles: [...w.roles, ...(j2 as Role[])],
            clusterRoleBindings: [...w.clusterRoleBindings, ...(j1 as ClusterRoleBinding[])],
            roleBindings: [...w.roleBindings, ...(j2 as RoleBinding[])],
          };
          const d = authorize(messy, attrs);
          assert.equal(d.allowed, false);
        },
      ),
      RUNS,
    );
  });

  it('never throws while resolving an aggregated role over malformed ClusterRoles', () => {
    const junk = fc.oneof(
      fc.constant(null),
      fc.constant({}),
      fc.constant({ metadata: {} }),
      fc.constant({ metadata: { name: 'j', labels: null } }),
      fc.constant({ metadata: { name: 'k' }, rules: [null, { verbs: null }] }),
    );
    fc.assert(
      fc.property(worldArb, fc.array(junk, { maxLength: 4 }), attrsArb(fc.constant(p)), (w, j, attrs) => {
        const everything: ClusterRole = {
          metadata: { name: 'everything' },
          aggregationRule: { clusterRoleSelectors: [{}, null as never, { matchExpressions: [null as never] }] },
        };
        const messy: RbacObjects = {
          ...w,
          clusterRoles: [...w.clusterRoles, everything, ...(j as ClusterRole[])],
          clusterRoleBindings: [
            {
              metadata: { name: 'all' },
              roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'everything' },
              subjects: [{ kind: 'User', name: 'p' }],
            },
          ],
        };
        const d = authorize(messy, attrs);
        assert.equal(typeof d.allowed, 'boolean');
        // The empty selector picks every well-formed ClusterRole, so the union grants what any of cr0..cr2 grants.
        const anyDirect = w.clusterRoles.some((c) => authorize(grantOnly(c.rules ?? []), attrs).allowed);
        assert.equal(d.allowed, anyDirect);
      }),
      RUNS,
    );
  });

  it('malformed rule fields never crash and never widen a grant', () => {
    const bad = fc.constantFrom<unknown>('get', '*', 42, { 0: '*' }, true);
    fc.assert(
      fc.property(
        ruleArb,
        fc.constantFrom('verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'),
        bad,
        attrsArb(fc.constant(p)),
        (rule, field, value, attrs) => {
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
          const broken = { ...rule, [field]: value } as unknown as PolicyRule;
          const d = authorize(grantOnly([broken]), attrs);
          const relevant =
            field === 'verbs' || (attrs.resourceRequest ? field !== 'nonResourceURLs' : field === 'nonResourceURLs');
          if (relevant) assert.equal(d.allowed, false, `${field}=${JSON.stringify(value)}`);
          else assert.equal(d.allowed, authorize(grantOnly([rule]), attrs).allowed);
        },
      ),
      RUNS,
    );
  });

  it('a request without a user is denied', () => {
    assert.deepEqual(
      authorize(bootstrapWorld(), {
        verb: 'get',
        resourceRequest: false,
        path: '/version',
      } as unknown as AuthzAttributes),
      { allowed: false, reason: '' },
    );
  });

  it('aggregation cycles terminate', () => {
    const cyc = (name: string, selects: string, label: string): ClusterRole => ({
      metadata: { name, labels: { [label]: 'true' } },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selects]: 'true' } }] },
      rules: [],
    });
    const w: RbacObjects = {
      ...empty(),
      clusterRoles: [
        cyc('a', 'to-b', 'to-a'),
        cyc('b', 'to-a', 'to-b'),
        {
          metadata: { name: 'leaf', labels: { 'to-b': 'true' } },
          rules: [{ nonResourceURLs: ['/leaf'], verbs: ['get'] }],
        },
      ],
      clusterRoleBindings: [
        {
          metadata: { name: 'a' },
          roleRef: { apiGroup: G, kind: 'ClusterRole', name: 'a' },
          subjects: [{ kind: 'User', name: 'p' }],
        },
      ],
    };
    assert.equal(authorize(w, { user: p, verb: 'get', resourceRequest: false, path: '/leaf' }).allowed, true);
    assert.equal(authorize(w, { user: p, verb: 'get', resourceRequest: false, path: '/other' }).allowed, false);
  });
});

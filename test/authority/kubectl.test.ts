// The real kubectl (1.32, default flags: client-side validation, protobuf request bodies, discovery, OpenAPI v3)
// against the embedded authority through the kubeconfig the authority writes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { editProject, initProject } from '../../packages/cli/src/scaffold/index.js';
import { ROOT, run } from '../helpers/process.js';
import { SECOND_NODE_SKIP } from '../helpers/second-node.js';
import type { Obj } from './https.js';

describe('kubectl against the authority', { skip: SECOND_NODE_SKIP }, () => {
  let a: Authority;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  const kubectl = (...args: string[]) =>
    run('kubectl', ['--kubeconfig', a.kubeconfig, ...args], { env, timeoutMs: 30_000 });
  /** kubectl that must succeed; returns stdout. */
  const ok = async (...args: string[]) => {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authority-kubectl-'));
    // a private discovery/HTTP cache, so runs never share kubectl's ~/.kube/cache
    env = { ...process.env, KUBECACHEDIR: join(dir, 'cache'), HOME: dir, KUBECONFIG: '' };
    a = await startAuthority({ listen: '127.0.0.1:0', kubeconfigOut: join(dir, 'kubeconfig') });
  });
  after(async () => {
    await a?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('version, api-resources and get ns work with the written kubeconfig', async () => {
    const v = JSON.parse(await ok('version', '-o', 'json')) as Obj;
    assert.equal(v.serverVersion.major, '1');
    const res = await ok('api-resources');
    for (const line of [
      /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m,
      /^clusterroles\s+rbac\.authorization\.k8s\.io\/v1\s+false\s+ClusterRole$/m,
      /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m,
    ]) {
      assert.match(res, line);
    }
    const ns = await ok('get', 'ns');
    assert.match(ns, /^NAME\s+STATUS\s+AGE$/m);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      assert.match(ns, new RegExp(`^${n}\\s+Active\\s+\\d+s$`, 'm'));
  });

  it('create namespace / serviceaccount / clusterrole / clusterrolebinding / token, then auth can-i', async () => {
    assert.match(await ok('create', 'namespace', 'mon'), /^namespace\/mon created$/m);
    assert.match(await ok('create', 'serviceaccount', 'scraper', '-n', 'mon'), /^serviceaccount\/scraper created$/m);
    assert.match(
      await ok('create', 'clusterrole', 'metrics-reader', '--non-resource-url=/metrics', '--verb=get'),
      /clusterrole.rbac.authorization.k8s.io\/metrics-reader created/,
    );
    const role = JSON.parse(await ok('get', 'clusterrole', 'metrics-reader', '-o', 'json')) as Obj;
    assert.deepEqual(role.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);

    const before = await kubectl('auth', 'can-i', 'get', '/metrics', '--as=system:serviceaccount:mon:scraper');
    assert.equal(before.stdout.trim(), 'no');
    assert.notEqual(before.code, 0);

    assert.match(
      await ok(
        'create',
        'clusterrolebinding',
        'scraper-metrics',
        '--clusterrole=metrics-reader',
        '--serviceaccount=mon:scraper',
      ),
      /clusterrolebinding.rbac.authorization.k8s.io\/scraper-metrics created/,
    );
    const crb = JSON.parse(await ok('get', 'clusterrolebinding', 'scraper-metrics', '-o', 'json')) as Obj;
    assert.deepEqual(crb.subjects, [{ kind: 'ServiceAccount', name: 'scraper', namespace: 'mon' }]);
    assert.deepEqual(crb.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'metrics-reader',
    });

    const yes = await kubectl('auth', 'can-i', 'get', '/metrics', '--as=system:serviceaccount:mon:scraper');
    assert.equal(yes.stdout.trim(), 'yes');
    assert.equal(yes.code, 0);
    assert.equal(
      (await kubectl('auth', 'can-i', 'get', '/metrics/other', '--as=system:serviceaccount:mon:scraper')).stdout.trim(),
      'no',
    );
    assert.equal(
      (await kubectl('auth', 'can-i', 'get', '/metrics', '--as=system:serviceaccount:mon:someone-else')).stdout.trim(),
      'no',
    );

    const token = (await ok('create', 'token', 'scraper', '-n', 'mon', '--duration=20m')).trim();
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Obj;
    assert.equal(claims.sub, 'system:serviceaccount:mon:scraper');
    assert.equal(claims.exp - claims.iat, 1200);

    // the token works as a kubectl credential too: the scraper may not list namespaces
    const denied = await run('kubectl', ['--kubeconfig', a.kubeconfig, '--token', token, 'get', 'ns'], {
      env,
      timeoutMs: 30_000,
    });
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /namespaces is forbidden: User "system:serviceaccount:mon:scraper" cannot list resource "namespaces" in API group "" at the cluster scope/,
    );
  });

  it('create -f of a TokenReview and a SubjectAccessReview with -o json', async () => {
    await ok('create', 'namespace', 'rev');
    await ok('create', 'serviceaccount', 'app', '-n', 'rev');
    const token = (await ok('create', 'token', 'app', '-n', 'rev')).trim();
    const sa = JSON.parse(await ok('get', 'sa', 'app', '-n', 'rev', '-o', 'json')) as Obj;
    const tr = JSON.parse(
      await ok(
        'create',
        '-o',
        'json',
        '-f',
        file('tr.yaml', `apiVersion: authentication.k8s.io/v1\nkind: TokenReview\nspec:\n  token: ${token}\n`),
      ),
    ) as Obj;
    assert.equal(tr.status.authenticated, true);
    assert.equal(tr.status.user.username, 'system:serviceaccount:rev:app');
    assert.equal(tr.status.user.uid, sa.metadata.uid);
    assert.deepEqual(tr.status.user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:rev',
      'system:authenticated',
    ]);

    const sarYaml = (path: string) =>
      `apiVersion: authorization.k8s.io/v1\nkind: SubjectAccessReview\nspec:\n  user: system:serviceaccount:rev:app\n  groups: [system:serviceaccounts, system:serviceaccounts:rev, system:authenticated]\n  nonResourceAttributes:\n    path: ${path}\n    verb: get\n`;
    const denied = JSON.parse(await ok('create', '-o', 'json', '-f', file('sar1.yaml', sarYaml('/metrics')))) as Obj;
    assert.equal(denied.status.allowed, false);
    const version = JSON.parse(await ok('create', '-o', 'json', '-f', file('sar2.yaml', sarYaml('/version')))) as Obj;
    assert.equal(version.status.allowed, true);
    // /version is in both system:discovery and system:public-info-viewer; kube names whichever binding it visits first
    assert.match(
      version.status.reason,
      /^RBAC: allowed by ClusterRoleBinding "(system:discovery|system:public-info-viewer)" of ClusterRole "\1" to Group "system:authenticated"$/,
    );
  });

  it('label namespace, get -o yaml, and AlreadyExists / NotFound errors', async () => {
    await ok('create', 'namespace', 'lab');
    assert.match(await ok('label', 'namespace', 'lab', 'metrics=enabled'), /^namespace\/lab labeled$/m);
    const y = await ok('get', 'namespace', 'lab', '-o', 'yaml');
    assert.match(y, /^ {4}metrics: enabled$/m);
    assert.match(y, /^ {4}kubernetes\.io\/metadata\.name: lab$/m);
    const sel = await ok('get', 'ns', '-l', 'metrics=enabled', '-o', 'name');
    assert.equal(sel.trim(), 'namespace/lab');
    const dup = await kubectl('create', 'namespace', 'lab');
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /Error from server \(AlreadyExists\): namespaces "lab" already exists/);
    const missing = await kubectl('get', 'configmap', 'nope', '-n', 'lab');
    assert.match(missing.stderr, /Error from server \(NotFound\): configmaps "nope" not found/);
  });

  it('apply -f twice (client-side: last-applied annotation + patch), then server-side, diff and delete', async () => {
    await ok('create', 'namespace', 'app');
    const cm = (v: string, extra = '') =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: app\n  labels: {tier: web}\ndata:\n  mode: ${v}\n${extra}`;
    const p = file('cm.yaml', cm('a', '  keep: "1"\n'));
    assert.match(await ok('apply', '-f', p), /^configmap\/settings created$/m);
    writeFileSync(p, cm('b'));
    assert.match(await ok('apply', '-f', p), /^configmap\/settings configured$/m);
    const got = JSON.parse(await ok('get', 'cm', 'settings', '-n', 'app', '-o', 'json')) as Obj;
    assert.deepEqual(got.data, { mode: 'b' }, 'the key dropped from the file is removed (three-way merge)');
    assert.ok(got.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    assert.match(await ok('apply', '-f', p), /^configmap\/settings unchanged$/m);
    writeFileSync(p, cm('c'));
    assert.match(await ok('apply', '--server-side', '-f', p), /^configmap\/settings serverside-applied$/m);
    assert.equal((JSON.parse(await ok('get', 'cm', 'settings', '-n', 'app', '-o', 'json')) as Obj).data.mode, 'c');
    // server-side apply owns what it applied: a key dropped from the manifest goes, a label set by `kubectl label` stays
    await ok('label', 'cm', 'settings', '-n', 'app', 'owner=someone-else');
    writeFileSync(p, cm('c', '  extra: "x"\n'));
    await ok('apply', '--server-side', '-f', p);
    writeFileSync(p, cm('c'));
    await ok('apply', '--server-side', '-f', p);
    const ssa = JSON.parse(
      await ok('get', 'cm', 'settings', '-n', 'app', '-o', 'json', '--show-managed-fields'),
    ) as Obj;
    assert.deepEqual(ssa.data, { mode: 'c' });
    assert.equal(ssa.metadata.labels.owner, 'someone-else');
    assert.ok((ssa.metadata.managedFields as Obj[]).some((e) => e.manager === 'kubectl' && e.operation === 'Apply'));
    const diff = await kubectl('diff', '-f', p);
    assert.equal(diff.code, 0, `no difference expected: ${diff.stdout}${diff.stderr}`);
    assert.match(await ok('delete', '-f', p), /configmap "settings" deleted/);
    assert.match((await kubectl('get', 'cm', 'settings', '-n', 'app')).stderr, /NotFound/);
  });

  it("unknown fields: rejected under kubectl's default strict validation, a warning with --validate=warn", async () => {
    await ok('create', 'namespace', 'typos');
    const p = file(
      'typo.yaml',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typo\n  namespace: typos\n  lables: {a: b}\ndatas:\n  k: v\n',
    );
    const strict = await kubectl('apply', '-f', p);
    assert.notEqual(strict.code, 0);
    assert.match(
      strict.stderr,
      /Error from server \(BadRequest\): error when creating ".*typo\.yaml": ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datas", unknown field "metadata\.lables"/,
    );
    const warned = await kubectl('apply', '-f', p, '--validate=warn');
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /^Warning: unknown field "datas"$/m);
  });

  it('a CRD, then get servicemonitor -n ns prints NAME and AGE', async () => {
    await ok('create', 'namespace', 'smon');
    await ok(
      'apply',
      '-f',
      file(
        'crd.yaml',
        `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor, shortNames: [smon]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
      ),
    );
    await ok(
      'apply',
      '-f',
      file(
        'sm.yaml',
        'apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: controller-manager-metrics-monitor\n  namespace: smon\nspec:\n  endpoints:\n  - port: https\n    scheme: https\n',
      ),
    );
    // a List on stdin is validated by kubectl against OpenAPI v2 (protobuf)
    const list = {
      apiVersion: 'v1',
      kind: 'List',
      items: [
        {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name: 'from-list', namespace: 'smon' },
          spec: {},
        },
      ],
    };
    const piped = await run('kubectl', ['--kubeconfig', a.kubeconfig, 'apply', '-f', '-'], {
      env,
      timeoutMs: 30_000,
      input: JSON.stringify(list),
    });
    assert.equal(piped.code, 0, piped.stderr);
    assert.match(piped.stdout, /^servicemonitor.monitoring.coreos.com\/from-list created$/m);
    await ok('delete', 'servicemonitor', 'from-list', '-n', 'smon');
    const out = await ok('get', 'servicemonitor', '-n', 'smon');
    const lines = out.trim().split('\n');
    assert.match(lines[0], /^NAME\s+AGE$/);
    assert.match(lines[1], /^controller-manager-metrics-monitor\s+\d+s$/);
    assert.equal(lines.length, 2);
  });

  it('apply -k of a scaffolded project config/default, then the manager SA may create TokenReviews', async () => {
    const project = join(dir, 'project');
    await initProject({ projectName: 'kdemo', dir: project });
    const out = await ok('apply', '-k', join(project, 'config', 'default'));
    assert.match(out, /^namespace\/kdemo-system created$/m);
    assert.match(out, /^serviceaccount\/kdemo-controller-manager created$/m);
    assert.match(out, /^clusterrole.rbac.authorization.k8s.io\/kdemo-metrics-auth-role created$/m);
    assert.match(out, /^deployment.apps\/kdemo-controller-manager created$/m);
    assert.match(
      await ok('apply', '-k', join(project, 'config', 'default')),
      /^deployment.apps\/kdemo-controller-manager unchanged$/m,
    );
    const sa = 'system:serviceaccount:kdemo-system:kdemo-controller-manager';
    assert.equal(
      (await kubectl('auth', 'can-i', 'create', 'tokenreviews.authentication.k8s.io', `--as=${sa}`)).stdout.trim(),
      'yes',
    );
    assert.equal(
      (
        await kubectl('auth', 'can-i', 'create', 'subjectaccessreviews.authorization.k8s.io', `--as=${sa}`)
      ).stdout.trim(),
      'yes',
    );
    // the reader role is scaffolded but not bound, as in kubebuilder
    assert.equal((await kubectl('auth', 'can-i', 'get', '/metrics', `--as=${sa}`)).stdout.trim(), 'no');
    // delete -k: the namespace terminates while its objects are deleted one by one, as in a cluster
    const del = await kubectl('delete', '-k', join(project, 'config', 'default'));
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /^namespace "kdemo-system" deleted$/m);
    assert.match(del.stdout, /^deployment.apps "kdemo-controller-manager" deleted$/m);
    assert.match(
      (await kubectl('get', 'namespace', 'kdemo-system')).stderr,
      /NotFound/,
      'kubectl delete waited for the namespace to go',
    );
  });

  it('create deployment (protobuf body) and the columns kube prints for built-in kinds', async () => {
    await ok('create', 'namespace', 'cols');
    assert.match(
      await ok('create', 'deployment', 'web', '--image=nginx:1.27', '--port=8080', '--replicas=2', '-n', 'cols'),
      /^deployment.apps\/web created$/m,
    );
    const dep = JSON.parse(await ok('get', 'deploy', 'web', '-n', 'cols', '-o', 'json')) as Obj;
    assert.equal(dep.spec.replicas, 2);
    assert.deepEqual(dep.spec.selector, { matchLabels: { app: 'web' } });
    assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:1.27');
    assert.equal(dep.spec.template.spec.containers[0].ports[0].containerPort, 8080);
    assert.equal(dep.spec.strategy.type, 'RollingUpdate', 'defaulted as kube does');
    const wide = (await ok('get', 'deploy', '-n', 'cols', '-o', 'wide')).trim().split('\n');
    assert.match(wide[0], /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/);
    assert.match(wide[1], /^web\s+0\/2\s+0\s+0\s+\d+s\s+nginx\s+nginx:1\.27\s+app=web$/);
    assert.match(
      await ok('scale', 'deployment', 'web', '--replicas=3', '-n', 'cols'),
      /^deployment.apps\/web scaled$/m,
    );
    const scaled = JSON.parse(await ok('get', 'deploy', 'web', '-n', 'cols', '-o', 'json')) as Obj;
    assert.equal(scaled.spec.replicas, 3);
    assert.equal(scaled.metadata.generation, 2, 'a spec change bumps the generation');
    const stale = await kubectl('scale', 'deployment', 'web', '--replicas=1', '--current-replicas=2', '-n', 'cols');
    assert.notEqual(stale.code, 0);
    assert.match(stale.stderr, /Expected replicas to be 2, was 3/);
    // events: stored like any object, listed with kube's event columns, and found by describe's field selector
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1', namespace: 'cols' },
      involvedObject: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        namespace: 'cols',
        uid: dep.metadata.uid,
      },
      reason: 'ScalingReplicaSet',
      message: 'Scaled up replica set web-1 to 2',
      type: 'Normal',
      lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    const ev = await run('kubectl', ['--kubeconfig', a.kubeconfig, 'create', '-f', '-'], {
      env,
      timeoutMs: 30_000,
      input: JSON.stringify(event),
    });
    assert.equal(ev.code, 0, ev.stderr);
    const events = (await ok('get', 'events', '-n', 'cols')).trim().split('\n');
    assert.match(events[0], /^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/);
    assert.match(events[1], /^\d+s\s+Normal\s+ScalingReplicaSet\s+deployment\/web\s+Scaled up replica set web-1 to 2$/);
    assert.match(
      await ok('describe', 'deployment', 'web', '-n', 'cols'),
      /Normal\s+ScalingReplicaSet\s+\S+\s+Scaled up replica set web-1 to 2/,
    );
    await ok('create', 'configmap', 'two', '--from-literal=a=1', '--from-literal=b=2', '-n', 'cols');
    assert.match(await ok('get', 'cm', 'two', '-n', 'cols'), /^two\s+2\s+\d+s$/m);
    await ok('create', 'service', 'clusterip', 'svc', '--tcp=8443:8443', '-n', 'cols');
    assert.match(
      await ok('get', 'svc', 'svc', '-n', 'cols'),
      /^svc\s+ClusterIP\s+\d+\.\d+\.\d+\.\d+\s+<none>\s+8443\/TCP\s+\d+s$/m,
    );
    assert.match(await ok('get', 'clusterrole', 'view'), /^NAME\s+CREATED AT\nview\s+\d{4}-\d\d-\d\dT/);
    await ok('create', 'rolebinding', 'rb', '--clusterrole=view', '--serviceaccount=cols:default', '-n', 'cols');
    const rb = (await ok('get', 'rolebinding', 'rb', '-n', 'cols', '-o', 'wide')).trim().split('\n');
    assert.match(rb[0], /^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS$/);
    assert.match(rb[1], /^rb\s+ClusterRole\/view\s+\d+s\s+cols\/default$/);
  });

  it('impersonation with --as and --as-group, and subresource permissions (serviceaccounts/token)', async () => {
    const can = async (...args: string[]) => (await kubectl('auth', 'can-i', ...args)).stdout.trim();
    assert.equal(await can('get', '/metrics', '--as=jane'), 'no');
    assert.equal(
      await can('get', '/metrics', '--as=jane', '--as-group=system:monitoring'),
      'yes',
      'system:monitoring is bound to /metrics by default',
    );
    // as in a cluster, the anonymous user may not even ask (system:basic-user is bound to system:authenticated only)
    const anon = await kubectl(
      'auth',
      'can-i',
      'get',
      '/healthz',
      '--as=system:anonymous',
      '--as-group=system:unauthenticated',
    );
    assert.notEqual(anon.code, 0);
    assert.match(
      anon.stderr,
      /selfsubjectaccessreviews\.authorization\.k8s\.io is forbidden: User "system:anonymous" cannot create resource "selfsubjectaccessreviews"/,
    );
    await ok('create', 'namespace', 'subres');
    await ok('create', 'serviceaccount', 'deployer', '-n', 'subres');
    await ok(
      'create',
      'rolebinding',
      'deployer-edit',
      '--clusterrole=edit',
      '--serviceaccount=subres:deployer',
      '-n',
      'subres',
    );
    const as = '--as=system:serviceaccount:subres:deployer';
    assert.equal(
      await can('create', 'serviceaccounts', '--subresource=token', '-n', 'subres', as),
      'yes',
      'edit grants serviceaccounts/token create',
    );
    assert.equal(
      await can('create', 'serviceaccounts', '--subresource=token', '-n', 'default', as),
      'no',
      'only in its namespace',
    );
    assert.equal(
      await can('get', 'serviceaccounts', '--subresource=token', '-n', 'subres', as),
      'no',
      'the subresource is granted for create only',
    );
    assert.equal(
      await can('get', 'serviceaccounts', '-n', 'subres', as),
      'yes',
      'the resource itself is readable (view)',
    );
    const token = await kubectl('create', 'token', 'default', '-n', 'subres', as);
    assert.equal(token.code, 0, token.stderr);
    assert.equal(token.stdout.trim().split('.').length, 3);
    const denied = await kubectl('create', 'token', 'default', '-n', 'default', as);
    assert.match(
      denied.stderr,
      /serviceaccounts "default" is forbidden: User "system:serviceaccount:subres:deployer" cannot create resource "serviceaccounts\/token" in API group "" in the namespace "default"/,
    );
  });

  it('apply -k of an overlay with Prometheus, cert-manager, metrics TLS and network policy once their CRDs exist', async () => {
    const project = join(dir, 'full');
    await initProject({ projectName: 'kfull', dir: project });
    await editProject(project, { enable: ['prometheus', 'certmanager', 'metrics-tls', 'network-policy'] });
    const overlay = join(project, 'config', 'default');
    const without = await kubectl('apply', '-k', overlay);
    assert.notEqual(without.code, 0, 'as in a cluster without cert-manager');
    assert.match(without.stderr, /no matches for kind "Certificate" in version "cert-manager.io\/v1"/);
    await ok('apply', '-f', join(ROOT, 'test', 'authority', 'fixtures', 'operator-crds.yaml'));
    const out = await ok('apply', '-k', overlay);
    for (const line of [
      /^certificate.cert-manager.io\/kfull-metrics-certs created$/m,
      /^issuer.cert-manager.io\/kfull-selfsigned-issuer created$/m,
      /^servicemonitor.monitoring.coreos.com\/kfull-controller-manager-metrics-monitor (created|unchanged)$/m,
      /^networkpolicy.networking.k8s.io\/kfull-allow-metrics-traffic (created|unchanged)$/m,
    ])
      assert.match(out, line);
    // the CRD's printer columns, with a JSONPath filter on the status conditions
    const before = (await ok('get', 'certificates', '-n', 'kfull-system')).trim().split('\n');
    assert.match(before[0], /^NAME\s+READY\s+SECRET\s+AGE$/);
    assert.match(before[1], /^kfull-metrics-certs\s+metrics-server-cert\s+\d+s$/);
    await ok(
      'patch',
      'certificate',
      'kfull-metrics-certs',
      '-n',
      'kfull-system',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"conditions":[{"type":"Issuing","status":"False"},{"type":"Ready","status":"True"}]}}',
    );
    assert.match(
      await ok('get', 'certificates', '-n', 'kfull-system'),
      /^kfull-metrics-certs\s+True\s+metrics-server-cert\s+\d+s$/m,
    );
  });

  it('auth can-i --list and auth whoami', async () => {
    const list = await ok('auth', 'can-i', '--list', '--as=system:serviceaccount:mon:scraper');
    assert.match(list, /^\s+\[\/metrics\]\s+\[\]\s+\[get\]$/m);
    assert.match(list, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    const me = await ok('auth', 'whoami', '-o', 'json');
    const info = (JSON.parse(me) as Obj).status.userInfo;
    assert.equal(info.username, 'admin');
    assert.deepEqual(info.groups, ['system:masters', 'system:authenticated']);
  });
});

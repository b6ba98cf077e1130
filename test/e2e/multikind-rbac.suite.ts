// The role `generate rbac` writes for a project with every kind of API — Kubernetes' own (a Deployment controller, a
// Pod webhook), a third party's from its CRD (cert-manager's Certificate) and two groups of its own (multigroup) —
// taken by an API server as kubectl applies it, and granting the manager what its controllers need, checked with
// SubjectAccessReviews. Run against the authority (test/e2e/multikind-rbac.test.ts) and a real kube-apiserver
// (test/real-api/multikind-rbac-live.test.ts); both build first, and the suite runs the built CLI (dist/cli.js).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { CRD_SETS } from '../../packages/envtest/src/index.js';
import type { KubeClient } from '../../packages/ctrlmetrics/src/index.js';
import { ROOT, run } from '../helpers/process.js';

/** The built CLI (faster than through tsx: the suite runs it seven times). */
const runCli = (args: string[], opts: { cwd?: string; timeoutMs?: number }) =>
  run(process.execPath, [join(ROOT, 'packages/cli/dist/cli.js'), ...args], opts);

/** Where the suite runs: a cluster-admin client and kubeconfig, and how to let go of the server. */
export interface RbacTarget {
  admin: KubeClient;
  kubeconfig: string;
  stop(): Promise<void>;
}

/**
 * Registers the suite. `id` goes into the project's name and domain, so its ClusterRole, binding and namespace are
 * this run's own on a shared cluster.
 */
export function multikindRbacSuite(name: string, start: () => Promise<RbacTarget>, id: string): void {
  describe(name, { timeout: 300_000 }, () => {
    let target: RbacTarget;
    let work: string;
    const project = `fleet-${id}`;
    const domain = `${id}.example.org`;
    const role = `${project}-manager-role`;
    const dir = () => join(work, project);
    const cli = async (args: string[]) => {
      const r = await runCli(args, { cwd: dir(), timeoutMs: 120_000 });
      assert.equal(r.code, 0, `ctrlmetrics ${args.join(' ')}: ${r.stderr}`);
    };

    before(async () => {
      work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-rbac-'));
      const init = await runCli(
        ['init', '--project-name', project, '--domain', domain, '--multigroup', '--dir', dir()],
        { timeoutMs: 120_000 },
      );
      assert.equal(init.code, 0, init.stderr);
      writeFileSync(
        join(work, 'cert-manager.yaml'),
        CRD_SETS['cert-manager'].crds.map((c) => stringify(c)).join('---\n'),
      );
      await cli(['create', 'api', '--group', 'apps', '--version', 'v1', '--kind', 'Deployment', '--resource=false']);
      await cli([
        'create',
        'api',
        '--group',
        'cert-manager',
        '--version',
        'v1',
        '--kind',
        'Certificate',
        '--resource=false',
        '--external-api-path',
        join(work, 'cert-manager.yaml'),
        '--external-api-domain',
        'io',
      ]);
      await cli(['create', 'api', '--group', 'ship', '--version', 'v1', '--kind', 'Frigate']);
      await cli(['create', 'api', '--group', 'crew', '--version', 'v1', '--kind', 'Captain']);
      await cli(['create', 'webhook', '--group', 'core', '--version', 'v1', '--kind', 'Pod', '--defaulting']);
      await cli(['generate', 'rbac', '--role-name', role]);
      target = await start();
    });
    after(async () => {
      await target?.stop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    it('kubectl applies the generated role (server dry run, then for real), and it grants each controller its kinds', async () => {
      const file = join(dir(), 'config/rbac/role.yaml');
      assert.match(readFileSync(file, 'utf8'), new RegExp(`name: ${role}\\n`));
      const kubectl = (args: string[]) =>
        run('kubectl', ['--kubeconfig', target.kubeconfig, ...args], { timeoutMs: 60_000 });
      const dry = await kubectl(['apply', '--dry-run=server', '-f', file]);
      assert.equal(dry.code, 0, dry.stderr);
      assert.equal(dry.stdout.trim(), `clusterrole.rbac.authorization.k8s.io/${role} created (server dry run)`);
      const applied = await kubectl(['apply', '-f', file]);
      assert.equal(applied.code, 0, applied.stderr);
      // the manager's service account, bound to the role
      const ns = project;
      await target.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await target.admin.create(`/api/v1/namespaces/${ns}/serviceaccounts`, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'controller-manager', namespace: ns },
      });
      await target.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${project}-manager-rolebinding` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', name: 'controller-manager', namespace: ns }],
      });
      const can = async (group: string, resource: string, verb: string, subresource = '') => {
        const review = await target.admin.create<{ status: { allowed: boolean } }>(
          '/apis/authorization.k8s.io/v1/subjectaccessreviews',
          {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: `system:serviceaccount:${ns}:controller-manager`,
              groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
              resourceAttributes: { group, resource, verb, subresource, namespace: 'default' },
            },
          },
        );
        return review.status.allowed;
      };
      const checks: Array<[string, string, string, string?]> = [
        ['apps', 'deployments', 'watch'],
        ['apps', 'deployments', 'update'],
        ['apps', 'deployments', 'patch', 'status'],
        ['cert-manager.io', 'certificates', 'list'],
        ['cert-manager.io', 'certificates', 'update', 'status'],
        [`ship.${domain}`, 'frigates', 'create'],
        [`ship.${domain}`, 'frigates', 'update', 'finalizers'],
        [`crew.${domain}`, 'captains', 'patch', 'status'],
      ];
      const granted = [];
      for (const [g, r, v, s] of checks) granted.push(`${v} ${r}${s ? `/${s}` : ''}.${g}: ${await can(g, r, v, s)}`);
      assert.deepEqual(
        granted,
        checks.map(([g, r, v, s]) => `${v} ${r}${s ? `/${s}` : ''}.${g}: true`),
      );
      // and nothing the markers do not name
      assert.equal(await can('', 'secrets', 'get'), false);
      assert.equal(await can(`crew.${domain}`, 'captains', 'deletecollection'), false);
    });
  });
}

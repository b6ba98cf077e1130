/**
 * `ctrlmetrics grant`, `token`, `label-namespace` and `monitors` as a user runs them: the CLI as a child process
 * against an API server (real HTTPS, real RBAC), compared with real kubectl for the same operation. Run against the
 * embedded authority (test/cli/cluster-commands.test.ts) and a real kube-apiserver
 * (test/real-api/cluster-commands.test.ts).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { ApiCluster } from '../helpers/cluster.js';
import { run, runCli } from '../helpers/process.js';
import { CRD_SETS } from '../../packages/envtest/src/crds.js';

/**
 * Registers the suite in the calling file; `start` gives the API server (a fresh one: the suite creates
 * cluster-wide objects under fixed names).
 */
export function clusterCommandsSuite(start: () => Promise<ApiCluster>): void {
  let cluster: ApiCluster;
  const PROJECT = 'cmdtest';
  const READER = `${PROJECT}-metrics-reader`;

  function env(): NodeJS.ProcessEnv {
    return { ...process.env, KUBECONFIG: cluster.kubeconfig, CTRLMETRICS_LOG_LEVEL: 'warn' };
  }
  const cli = (args: string[]) => runCli(args, { env: env(), timeoutMs: 30_000 });
  const kubectl = (args: string[]) =>
    run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { timeoutMs: 30_000 });

  async function ok(p: Promise<{ code: number; stdout: string; stderr: string }>, what: string): Promise<string> {
    const r = await p;
    assert.equal(r.code, 0, `${what} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  }

  before(async () => {
    cluster = await start();
    // setup through the admin client (fast); kubectl is used where its output is the reference
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: READER },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await cluster.serviceAccountToken('monitoring', 'prometheus'); // creates the namespace and the service account
  });

  after(async () => {
    await cluster?.stop();
  });

  describe('ctrlmetrics grant', () => {
    test('--dry-run=client -o yaml|json|name prints exactly what kubectl create clusterrolebinding prints', async () => {
      // independent commands run side by side to keep the file fast on a busy machine
      await Promise.all(
        ['yaml', 'json', 'name'].map(async (o) => {
          const [ours, theirs] = await Promise.all([
            ok(
              cli([
                'grant',
                '--serviceaccount',
                'monitoring:prometheus',
                '--clusterrole',
                READER,
                '--name',
                'scrape',
                '--dry-run=client',
                '-o',
                o,
              ]),
              `grant -o ${o}`,
            ),
            ok(
              kubectl([
                'create',
                'clusterrolebinding',
                'scrape',
                `--clusterrole=${READER}`,
                '--serviceaccount=monitoring:prometheus',
                '--dry-run=client',
                '-o',
                o,
              ]),
              `kubectl -o ${o}`,
            ),
          ]);
          assert.equal(ours, theirs, `-o ${o} differs from kubectl`);
        }),
      );
      await assert.rejects(
        cluster.admin.get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/scrape'),
        /not found/,
        'a client dry run must not create the binding',
      );
    });

    test('creates the binding (role found in the cluster), then accepts it unchanged; kubectl sees the same object', async () => {
      const firstRun = await cli(['grant', '--serviceaccount', 'monitoring:prometheus']);
      const first = await ok(Promise.resolve(firstRun), 'grant');
      // what a user trying the grant at once needs to know: a token already denied stays denied for a while
      assert.equal(
        firstRun.stderr,
        'note: a manager that already answered 403 to a token of monitoring:prometheus keeps answering 403 to that token for up to 30 s ' +
          '(it caches denials, as controller-runtime does); a new token is allowed at once: ctrlmetrics token -n monitoring prometheus\n',
      );
      const name = `${READER}:monitoring:prometheus`;
      assert.equal(first, `clusterrolebinding.rbac.authorization.k8s.io/${name} created\n`);
      const [again, yaml, kubectlYaml] = await Promise.all([
        ok(cli(['grant', '--serviceaccount', 'monitoring:prometheus', '--clusterrole', READER]), 'grant again'),
        ok(cli(['grant', '--serviceaccount', 'monitoring:prometheus', '-o', 'yaml']), 'grant -o yaml'),
        ok(kubectl(['get', 'clusterrolebinding', name, '-o', 'yaml']), 'kubectl get -o yaml'),
      ]);
      assert.equal(again, `clusterrolebinding.rbac.authorization.k8s.io/${name} unchanged\n`);
      assert.equal(yaml, kubectlYaml);
      // the grant works: the API now allows this service account to GET /metrics
      const sar = await cluster.admin.create<{ status: { allowed: boolean } }>(
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: 'system:serviceaccount:monitoring:prometheus',
            groups: ['system:serviceaccounts'],
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        },
      );
      assert.equal(sar.status.allowed, true);
    });

    test('a conflicting binding of the same name is an error that says what differs', async () => {
      await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'taken' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ kind: 'ServiceAccount', name: 'other', namespace: 'monitoring' }],
      });
      const r = await cli([
        'grant',
        '--serviceaccount',
        'monitoring:prometheus',
        '--clusterrole',
        READER,
        '--name',
        'taken',
      ]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        /^error: clusterrolebinding "taken" already exists and differs: roleRef is ClusterRole\/view, wanted ClusterRole\/cmdtest-metrics-reader; subjects are \[ServiceAccount monitoring\/other\], wanted \[ServiceAccount monitoring\/prometheus\]/,
      );
    });

    test('usage errors: a bad --serviceaccount, an unknown role, an unknown -o', async () => {
      const [bad, role, out] = await Promise.all([
        cli(['grant', '--serviceaccount', 'prometheus']),
        cli(['grant', '--serviceaccount', 'monitoring:prometheus', '--clusterrole', 'nope-metrics-reader']),
        cli([
          'grant',
          '--serviceaccount',
          'monitoring:prometheus',
          '--clusterrole',
          READER,
          '--dry-run=client',
          '-o',
          'wide',
        ]),
      ]);
      assert.equal(bad.code, 1);
      assert.match(
        bad.stderr,
        /--serviceaccount must be NAMESPACE:NAME.*\nSee 'ctrlmetrics grant --help' for usage\.\n$/,
      );
      assert.equal(role.code, 1);
      assert.match(role.stderr, /clusterrole "nope-metrics-reader" not found/);
      assert.equal(out.code, 1);
      assert.match(out.stderr, /allowed formats are: yaml,json,name\nSee 'ctrlmetrics grant --help' for usage\.\n$/);
    });
  });

  describe('ctrlmetrics grant checks the role it binds', () => {
    const ROLES = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    const BINDINGS = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';

    test('a role without get on /metrics is refused (nothing bound); a wildcard one is bound; an aggregated one is bound with a warning', async () => {
      await cluster.admin.create(ROLES, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'pod-reader' },
        rules: [
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
          { nonResourceURLs: ['/healthz'], verbs: ['get'] },
        ],
      });
      await cluster.admin.create(ROLES, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'prefix-reader' },
        rules: [{ nonResourceURLs: ['/met*'], verbs: ['*'] }],
      });
      await cluster.admin.create(ROLES, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'aggregated-reader' },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'example.com/aggregate-to-metrics': 'true' } }] },
        rules: [],
      });
      await cluster.serviceAccountToken('monitoring', 'checked');

      const refused = await cli(['grant', '--serviceaccount', 'monitoring:checked', '--clusterrole', 'pod-reader']);
      assert.equal(refused.code, 1);
      assert.equal(
        refused.stderr,
        'error: clusterrole "pod-reader" does not allow get on /metrics (its rules: get,list pods; get /healthz): a scraper bound to it would get 403. ' +
          'Bind the project\'s metrics-reader role (--clusterrole <prefix>-metrics-reader), or add the rule {nonResourceURLs: ["/metrics"], verbs: ["get"]} to it\n',
      );
      await assert.rejects(
        cluster.admin.get(`${BINDINGS}/pod-reader:monitoring:checked`),
        /not found/,
        'nothing was bound',
      );

      const prefix = await cli(['grant', '--serviceaccount', 'monitoring:checked', '--clusterrole', 'prefix-reader']);
      assert.equal(prefix.code, 0, prefix.stderr);
      assert.doesNotMatch(prefix.stderr, /warning/);
      // the authority's own RBAC agrees: the identity may now get /metrics
      const sar = await cluster.admin.create<{ status: { allowed: boolean } }>(
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: 'system:serviceaccount:monitoring:checked',
            groups: ['system:serviceaccounts', 'system:serviceaccounts:monitoring'],
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        },
      );
      assert.equal(sar.status.allowed, true);

      const aggregated = await cli([
        'grant',
        '--serviceaccount',
        'monitoring:checked',
        '--clusterrole',
        'aggregated-reader',
      ]);
      assert.equal(aggregated.code, 0, aggregated.stderr);
      assert.match(
        aggregated.stdout,
        /^clusterrolebinding\.rbac\.authorization\.k8s\.io\/aggregated-reader:monitoring:checked created\n$/,
      );
      assert.match(
        aggregated.stderr,
        /^warning: clusterrole "aggregated-reader" does not allow get on \/metrics \(its rules: none\); it aggregates other roles, so a scraper bound to it gets 403 until one of them grants it\n/m,
      );
    });
  });

  describe('ctrlmetrics token', () => {
    test('prints only the token, which the API accepts for that service account with the requested audience and lifetime', async () => {
      const [out, kubectlOut] = await Promise.all([
        ok(
          cli(['token', '--namespace', 'monitoring', 'prometheus', '--duration', '2h', '--audience', 'metrics-test']),
          'token',
        ),
        ok(
          kubectl([
            'create',
            'token',
            'prometheus',
            '--namespace',
            'monitoring',
            '--duration',
            '2h',
            '--audience',
            'metrics-test',
          ]),
          'kubectl create token',
        ),
      ]);
      // the same request as kubectl create token: the same claims apart from the times and the token's own id
      const claimsOf = (t: string) => {
        const {
          iat: _i,
          exp: _e,
          nbf: _n,
          jti: _j,
          ...rest
        } = JSON.parse(Buffer.from(t.trim().split('.')[1], 'base64url').toString()) as Record<string, unknown>;
        return rest;
      };
      assert.deepEqual(claimsOf(out), claimsOf(kubectlOut));
      assert.match(out, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/);
      const token = out.trim();
      const review = await cluster.admin.create<{
        status: { authenticated?: boolean; user?: { username?: string }; audiences?: string[] };
      }>('/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token, audiences: ['metrics-test'] },
      });
      assert.equal(review.status.authenticated, true);
      assert.equal(review.status.user?.username, 'system:serviceaccount:monitoring:prometheus');
      const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as {
        exp: number;
        iat: number;
      };
      assert.equal(claims.exp - claims.iat, 7200);
    });

    test('-o json and -o yaml print the TokenRequest as kubectl create token -o does', async () => {
      const args = ['--namespace', 'monitoring', '--duration', '1h', '--audience', 'metrics-test'];
      const [json, kubectlJson, yaml] = await Promise.all([
        ok(cli(['token', 'prometheus', ...args, '-o', 'json']), 'token -o json'),
        ok(kubectl(['create', 'token', 'prometheus', ...args, '-o', 'json']), 'kubectl create token -o json'),
        ok(cli(['token', 'prometheus', ...args, '-o', 'yaml']), 'token -o yaml'),
      ]);
      // the token and the times differ per request; the rest is the same object, in the same layout
      const mask = (text: string) =>
        text
          .replace(/"token": "[^"]+"/, '"token": "T"')
          .replace(/"(expirationTimestamp|creationTimestamp)": "[^"]+"/g, '"$1": "TIME"');
      assert.equal(mask(json), mask(kubectlJson));
      const parsed = JSON.parse(json) as { kind: string; status: { token: string; expirationTimestamp: string } };
      assert.equal(parsed.kind, 'TokenRequest');
      assert.match(parsed.status.token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      assert.ok(Date.parse(parsed.status.expirationTimestamp) > Date.now());
      const fromYaml = parseYaml(yaml) as { kind: string; spec: { audiences: string[]; expirationSeconds: number } };
      assert.equal(fromYaml.kind, 'TokenRequest');
      assert.deepEqual(fromYaml.spec.audiences, ['metrics-test']);
      assert.equal(fromYaml.spec.expirationSeconds, 3600);
      const wide = await cli(['token', 'prometheus', '-n', 'monitoring', '-o', 'wide']);
      assert.equal(wide.code, 1);
      assert.match(wide.stderr, /allowed formats are: json,yaml\nSee 'ctrlmetrics token --help' for usage\.\n$/);
    });

    test('a missing service account and a too short duration are clear errors', async () => {
      const [missing, short] = await Promise.all([
        cli(['token', '-n', 'monitoring', 'ghost']),
        cli(['token', '-n', 'monitoring', 'prometheus', '--duration', '1m']),
      ]);
      assert.equal(missing.code, 1);
      assert.equal(missing.stdout, '');
      assert.match(
        missing.stderr,
        /^error: serviceaccount "ghost" not found in namespace "monitoring": create it with kubectl create serviceaccount ghost -n monitoring\n$/,
      );
      assert.equal(short.code, 1);
      assert.match(short.stderr, /at least 10m.*\nSee 'ctrlmetrics token --help' for usage\.\n$/);
    });

    test('a kubeconfig that does not exist is one clear line', async () => {
      const r = await runCli(['token', '-n', 'monitoring', 'prometheus', '--kubeconfig', '/nonexistent/kubeconfig'], {
        env: env(),
      });
      assert.equal(r.code, 1);
      assert.equal(r.stderr, 'error: kubeconfig /nonexistent/kubeconfig does not exist\n');
    });
  });

  describe('ctrlmetrics label-namespace', () => {
    test('sets metrics=enabled, reports unchanged namespaces, and fails (after the others) on a missing one', async () => {
      await cluster.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'scrapers' },
      });
      const r = await cli(['label-namespace', 'scrapers', 'monitoring', 'missing-ns']);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, 'namespace/scrapers labeled\nnamespace/monitoring labeled\n');
      assert.match(r.stderr, /error: namespaces "missing-ns" not found/);
      const [again, theirs] = await Promise.all([
        ok(cli(['label-namespace', 'scrapers']), 'label again'),
        ok(kubectl(['label', 'namespace', 'monitoring', 'metrics=enabled', '--overwrite']), 'kubectl label'),
      ]);
      assert.equal(again, 'namespace/scrapers not labeled\n');
      assert.equal(theirs, 'namespace/monitoring not labeled\n', 'kubectl reports an unchanged label the same way');
      const labelled = await cluster.admin.get<{ items: Array<{ metadata: { name: string } }> }>('/api/v1/namespaces', {
        query: { labelSelector: 'metrics=enabled' },
      });
      assert.deepEqual(labelled.items.map((n) => n.metadata.name).sort(), ['monitoring', 'scrapers']);
    });

    test("another value of the label is kept without --overwrite (kubectl's error), replaced with it; --dry-run changes nothing", async () => {
      for (const name of ['taken', 'theirs']) {
        await cluster.admin.create('/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name, labels: { metrics: 'disabled' } },
        });
      }
      const [refused, kubectlRefused] = await Promise.all([
        cli(['label-namespace', 'taken']),
        kubectl(['label', 'namespace', 'theirs', 'metrics=enabled']),
      ]);
      assert.equal(refused.code, 1);
      assert.equal(refused.stdout, '');
      assert.equal(kubectlRefused.code, 1);
      assert.equal(refused.stderr.split('\n')[0], kubectlRefused.stderr.trim(), 'the same words as kubectl label');
      assert.equal(
        kubectlRefused.stderr.trim(),
        "error: 'metrics' already has a value (disabled), and --overwrite is false",
      );

      const [dry, kubectlDry] = await Promise.all([
        ok(cli(['label-namespace', 'taken', '--overwrite', '--dry-run=client']), 'label --dry-run'),
        ok(
          kubectl(['label', 'namespace', 'theirs', 'metrics=enabled', '--overwrite', '--dry-run=client']),
          'kubectl label --dry-run',
        ),
      ]);
      assert.equal(dry, 'namespace/taken labeled (dry run)\n');
      assert.equal(dry.replace('taken', 'theirs'), kubectlDry);
      const label = async () =>
        (await cluster.admin.get<{ metadata: { labels: Record<string, string> } }>('/api/v1/namespaces/taken')).metadata
          .labels.metrics;
      assert.equal(await label(), 'disabled', 'a dry run changes nothing');
      assert.equal(
        await ok(cli(['label-namespace', 'taken', '--overwrite']), 'label --overwrite'),
        'namespace/taken labeled\n',
      );
      assert.equal(await label(), 'enabled');
      const server = await cli(['label-namespace', 'taken', '--dry-run=server']);
      assert.equal(server.code, 1);
      assert.match(
        server.stderr,
        /^error: --dry-run=server is not supported: use --dry-run=client\nSee 'ctrlmetrics label-namespace --help' for usage\.\n$/,
      );
    });
  });

  describe('ctrlmetrics monitors', () => {
    test('says plainly that the ServiceMonitor CRD is missing', async () => {
      const r = await cli(['monitors', '-n', 'monitoring']);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        /^error: the ServiceMonitor CRD \(servicemonitors\.monitoring\.coreos\.com\) is not installed: no Prometheus operator runs in this cluster/,
      );
      assert.match(
        r.stderr,
        /on ctrlmetrics' embedded API, start it with --crds prometheus-operator \(ctrlmetrics authority or demo\)\n$/,
      );
      assert.doesNotMatch(r.stderr, /404|NotFound/);
    });

    test('lists ServiceMonitors as kubectl get servicemonitors does (NAME, AGE), -A and -o name too', async () => {
      const crd = CRD_SETS['prometheus-operator'].crds[0]; // the CRD `authority --crds prometheus-operator` installs
      await cluster.admin.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      const empty = await ok(
        cli(['monitors', '-n', 'monitoring']).then((r) => {
          assert.equal(r.stderr, 'No resources found in monitoring namespace.\n');
          return r;
        }),
        'monitors (empty)',
      );
      assert.equal(empty, '');
      for (const [ns, name] of [
        ['monitoring', 'a-long-servicemonitor-name'],
        ['monitoring', 'b'],
        ['scrapers', 'c'],
      ]) {
        await cluster.admin.create(`/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors`, {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name, namespace: ns },
          // the CRD requires a selector, as upstream's does
          spec: { endpoints: [{ port: 'https' }], selector: {} },
        });
      }
      // AGE moves while the two commands run: compare the table with the age column normalised
      const norm = (s: string) => s.replace(/\b\d+s\b/g, 'Ns');
      await Promise.all(
        [['-n', 'monitoring'], ['-A'], ['-n', 'monitoring', '-o', 'name']].map(async (args) => {
          const [ours, theirs] = await Promise.all([
            ok(cli(['monitors', ...args]), `monitors ${args.join(' ')}`),
            ok(kubectl(['get', 'servicemonitors', ...args]), `kubectl get servicemonitors ${args.join(' ')}`),
          ]);
          assert.equal(norm(ours), norm(theirs), `monitors ${args.join(' ')}`);
        }),
      );
      // without -n: the kubeconfig context's namespace, as kubectl
      const kc = parseYaml(readFileSync(cluster.kubeconfig, 'utf8')) as {
        contexts: Array<{ context: Record<string, unknown> }>;
      };
      for (const c of kc.contexts) c.context.namespace = 'scrapers';
      const scopedKubeconfig = `${cluster.kubeconfig}.scrapers`;
      writeFileSync(scopedKubeconfig, stringifyYaml(kc), { mode: 0o600 });
      const [scopedOurs, scopedTheirs] = await Promise.all([
        ok(cli(['monitors', '--kubeconfig', scopedKubeconfig]), 'monitors (context namespace)'),
        ok(
          run('kubectl', ['--kubeconfig', scopedKubeconfig, 'get', 'servicemonitors']),
          'kubectl get servicemonitors (context namespace)',
        ),
      ]);
      assert.match(scopedOurs, /^NAME +AGE\nc +\d+s\n$/);
      assert.equal(norm(scopedOurs), norm(scopedTheirs));
      const yaml = await ok(cli(['monitors', '-n', 'scrapers', '-o', 'yaml']), 'monitors -o yaml');
      assert.match(
        yaml,
        /^apiVersion: v1\nitems:\n- apiVersion: monitoring\.coreos\.com\/v1\n {2}kind: ServiceMonitor\n/,
      );
    });

    test('-o wide adds where each endpoint is scraped, how TLS is checked and which Services are selected', async () => {
      await cluster.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'wide' },
      });
      const monitors = '/apis/monitoring.coreos.com/v1/namespaces/wide/servicemonitors';
      // kubebuilder's monitor.yaml, before and after monitor_tls_patch.yaml
      const endpoint = {
        path: '/metrics',
        port: 'https',
        scheme: 'https',
        bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      };
      const selector = { matchLabels: { 'control-plane': 'controller-manager', 'app.kubernetes.io/name': 'p' } };
      await cluster.admin.create(monitors, {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'insecure' },
        spec: { endpoints: [{ ...endpoint, tlsConfig: { insecureSkipVerify: true } }], selector },
      });
      await cluster.admin.create(monitors, {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'verified' },
        spec: {
          endpoints: [{ ...endpoint, tlsConfig: { insecureSkipVerify: false, serverName: 'p-svc.p-system.svc' } }],
          selector,
        },
      });
      const out = await ok(cli(['monitors', '-n', 'wide', '-o', 'wide']), 'monitors -o wide');
      const lines = out.trimEnd().split('\n');
      assert.match(lines[0], /^NAME +AGE +ENDPOINTS +TLS +SELECTOR$/);
      assert.match(
        lines[1],
        /^insecure +\d+s +https:https\/metrics +insecure +app\.kubernetes\.io\/name=p,control-plane=controller-manager$/,
      );
      assert.match(
        lines[2],
        /^verified +\d+s +https:https\/metrics +verify p-svc\.p-system\.svc +app\.kubernetes\.io\/name=p,control-plane=controller-manager$/,
      );
      assert.equal(lines.length, 3);
    });
  });
}

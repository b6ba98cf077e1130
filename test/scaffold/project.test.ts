/**
 * The generated project end to end, against the embedded authority:
 *  - `kubectl apply -k config/default` (real kubectl) succeeds and creates the manager's RBAC, also with every option
 *    on (with minimal CRDs for cert-manager's and the Prometheus Operator's kinds);
 *  - the project installs with `ctrlmetrics` from the working tree (compiled to a temporary directory, packed with
 *    `npm pack` and unpacked into the project's node_modules), builds with its own `npm run build`,
 *    and its `dist/main.js`, running as the manager's ServiceAccount, serves /metrics over HTTPS behind the
 *    TokenReview/SubjectAccessReview filter.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  cpSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { kubeconfigFor } from '../../packages/ctrlmetrics/src/kube/config.js';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { editProject } from '../../packages/cli/src/scaffold/edit.js';
import { putCliOnPath } from '../helpers/cli-on-path.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

const ROOT = resolve(import.meta.dirname, '../..');
const P = 'demo-op';
const NS = `${P}-system`;
const SA = `${P}-controller-manager`;

let work: string;
let cluster: TestCluster;
let project: string;

function sh(
  cmd: string,
  args: string[],
  opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, timeout: opts.timeoutMs ?? 120_000, maxBuffer: 32 << 20, env: opts.env ?? process.env },
      (err, stdout, stderr) =>
        err ? rej(new Error(`${cmd} ${args.join(' ')} failed: ${stderr || err.message}`)) : res({ stdout, stderr }),
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

function get(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request(
      url,
      { rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 5_000 },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => res({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', rej);
    req.end();
  });
}

async function eventually<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

function getPlain(url: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = httpRequest(url, { timeout: 5_000 }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => res({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', rej);
    req.end();
  });
}

/** The protocol the server picks when a client offers h2 and http/1.1. */
function alpn(port: number): Promise<string | false> {
  return new Promise((res, rej) => {
    const s = tlsConnect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'], timeout: 5_000 },
      () => {
        const p = s.alpnProtocol ?? false;
        s.end();
        res(p);
      },
    );
    s.on('timeout', () => s.destroy(new Error('timeout')));
    s.on('error', rej);
  });
}

interface RunningManager {
  metricsPort: number;
  healthPort: number;
  /** Polls `fn` until it returns a value; fails early (with the logs) if the manager exits. */
  until<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T>;
  stop(): Promise<void>;
}

/** Starts the generated manager (dist/main.js) on ephemeral loopback ports. */
async function runManager(app: string, kubeconfig: string, extra: string[]): Promise<RunningManager> {
  const metricsPort = await freePort();
  const healthPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      'dist/main.js',
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${healthPort}`,
      '--kubeconfig',
      kubeconfig,
      ...extra,
    ],
    { cwd: app, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '' } },
  );
  let logs = '';
  child.stdout.on('data', (c: Buffer) => (logs += c.toString()));
  child.stderr.on('data', (c: Buffer) => (logs += c.toString()));
  return {
    metricsPort,
    healthPort,
    until: (what, timeoutMs, fn) =>
      eventually(what, timeoutMs, async () => {
        if (child.exitCode !== null) throw new Error(`manager exited with ${child.exitCode}: ${logs.slice(-2000)}`);
        return fn();
      }).catch((err: Error) => {
        throw new Error(`${err.message}\nmanager logs:\n${logs.slice(-3000)}`);
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await new Promise<void>((res) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          res();
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          res();
        });
      });
    },
  };
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-project-'));
  project = join(work, P);
  cluster = await startTestCluster();
});
after(async () => {
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('kubectl apply -k config/default against the embedded authority succeeds', async () => {
  await initProject({ projectName: P, dir: project, ctrlmetricsVersion: '^0.1.0' });
  const kubeconfig = cluster.authority.kubeconfig;
  const { stdout } = await sh('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-k', join(project, 'config/default')], {
    timeoutMs: 60_000,
  });
  for (const line of [
    `namespace/${NS} created`,
    `serviceaccount/${SA} created`,
    `clusterrole.rbac.authorization.k8s.io/${P}-metrics-reader created`,
    `clusterrolebinding.rbac.authorization.k8s.io/${P}-metrics-auth-rolebinding created`,
    `service/${P}-controller-manager-metrics-service created`,
    `deployment.apps/${P}-controller-manager created`,
  ]) {
    assert.ok(stdout.includes(line), `kubectl apply output has "${line}":\n${stdout}`);
  }
  const svc = await cluster.admin.get<{ spec: { ports: Array<{ port: number; name: string }> } }>(
    `/api/v1/namespaces/${NS}/services/${P}-controller-manager-metrics-service`,
  );
  assert.deepEqual(
    svc.spec.ports.map((p) => [p.name, p.port]),
    [['https', 8443]],
  );
  // applying again is a no-op, as with a real API server
  const again = await sh('kubectl', ['--kubeconfig', kubeconfig, 'apply', '-k', join(project, 'config/default')], {
    timeoutMs: 60_000,
  });
  assert.match(again.stdout, new RegExp(`deployment.apps/${P}-controller-manager (unchanged|configured)`));
});

test('npm run build-installer writes dist/install.yaml on a new project (no dist/ yet), naming IMG', async () => {
  const dir = join(work, 'installer-op');
  await initProject({ projectName: 'installer-op', dir, ctrlmetricsVersion: '^0.1.0' });
  putCliOnPath(dir);
  assert.equal(existsSync(join(dir, 'dist')), false);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'IMG'));
  await sh('npm', ['run', 'build-installer'], { cwd: dir, env, timeoutMs: 60_000 });
  let installer = readFileSync(join(dir, 'dist/install.yaml'), 'utf8');
  const kinds = [...installer.matchAll(/^kind: (\w+)$/gm)].map((m) => m[1]);
  for (const kind of ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Service', 'Deployment']) {
    assert.ok(kinds.includes(kind), `install.yaml holds a ${kind}`);
  }
  assert.match(installer, /^ {2}name: installer-op-controller-manager$/m);
  assert.match(installer, /^ {8}image: controller:latest$/m, "kubebuilder's default IMG");
  // IMG=… npm run build-installer, as make build-installer IMG=…
  await sh('npm', ['run', 'build-installer'], {
    cwd: dir,
    env: { ...env, IMG: 'registry.example.com:5000/installer-op:v0.0.1' },
    timeoutMs: 60_000,
  });
  installer = readFileSync(join(dir, 'dist/install.yaml'), 'utf8');
  assert.match(installer, /^ {8}image: registry\.example\.com:5000\/installer-op:v0\.0\.1$/m);
  assert.doesNotMatch(installer, /image: controller:latest/);
});

/** A minimal CRD (schema-less) so the authority serves the kind, as cert-manager's and the Prometheus Operator's do. */
function crd(group: string, kind: string, plural: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

test('kubectl apply -k with every option on (CRDs of cert-manager and the Prometheus Operator installed) succeeds', async () => {
  const FULL = 'full-op';
  const dir = join(work, FULL);
  await initProject({ projectName: FULL, dir, ctrlmetricsVersion: '^0.1.0' });
  await editProject(dir, { enable: ['prometheus', 'certmanager', 'metrics-tls', 'network-policy', 'grafana'] });
  const kubeconfig = cluster.authority.kubeconfig;
  const cacheDir = mkdtempSync(join(work, 'kubectl-cache-'));
  const crds = join(work, 'crds.yaml');
  writeFileSync(
    crds,
    [
      crd('monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors'),
      crd('cert-manager.io', 'Certificate', 'certificates'),
      crd('cert-manager.io', 'Issuer', 'issuers'),
    ]
      .map((c) => stringify(c))
      .join('---\n'),
  );
  await sh('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, 'apply', '-f', crds], {
    timeoutMs: 60_000,
  });
  const { stdout } = await eventually('kubectl apply -k of the full overlay', 30_000, () =>
    sh('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, 'apply', '-k', join(dir, 'config/default')], {
      timeoutMs: 60_000,
    }),
  );
  for (const line of [
    `servicemonitor.monitoring.coreos.com/${FULL}-controller-manager-metrics-monitor created`,
    `certificate.cert-manager.io/${FULL}-metrics-certs created`,
    `issuer.cert-manager.io/${FULL}-selfsigned-issuer created`,
    `networkpolicy.networking.k8s.io/${FULL}-allow-metrics-traffic created`,
    `configmap/${FULL}-grafana-dashboards created`,
    `deployment.apps/${FULL}-controller-manager created`,
  ]) {
    assert.ok(stdout.includes(line), `kubectl apply output has "${line}":\n${stdout}`);
  }
  const ns = `${FULL}-system`;
  const svc = `${FULL}-controller-manager-metrics-service`;
  const cert = await cluster.admin.get<{ spec: { dnsNames: string[]; secretName: string } }>(
    `/apis/cert-manager.io/v1/namespaces/${ns}/certificates/${FULL}-metrics-certs`,
  );
  assert.deepEqual(cert.spec.dnsNames, [`${svc}.${ns}.svc`, `${svc}.${ns}.svc.cluster.local`]);
  const sm = await cluster.admin.get<{
    spec: { endpoints: Array<{ tlsConfig: { serverName: string; insecureSkipVerify: boolean } }> };
  }>(`/apis/monitoring.coreos.com/v1/namespaces/${ns}/servicemonitors/${FULL}-controller-manager-metrics-monitor`);
  assert.deepEqual(
    [sm.spec.endpoints[0].tlsConfig.serverName, sm.spec.endpoints[0].tlsConfig.insecureSkipVerify],
    [`${svc}.${ns}.svc`, false],
  );
  const deploy = await cluster.admin.get<{ spec: { template: { spec: { containers: Array<{ args: string[] }> } } } }>(
    `/apis/apps/v1/namespaces/${ns}/deployments/${FULL}-controller-manager`,
  );
  assert.ok(
    deploy.spec.template.spec.containers[0].args.includes('--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs'),
  );
});

test(
  'the generated project installs ctrlmetrics from the working tree, builds, and serves /metrics against the authority',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    // 1. the runtime from the working tree: compile to a temporary package and pack it (what npm would publish)
    const pkgDir = join(work, 'ctrlmetrics-pkg');
    await sh(
      process.execPath,
      [
        join(ROOT, 'node_modules/typescript/bin/tsc'),
        '-p',
        join(ROOT, 'packages/ctrlmetrics/tsconfig.json'),
        '--outDir',
        join(pkgDir, 'dist'),
        // not the build's own incremental state
        '--tsBuildInfoFile',
        join(pkgDir, 'tsbuildinfo'),
        '--sourceMap',
        'false',
      ],
      {
        timeoutMs: 180_000,
      },
    ).catch((err: Error) => {
      // type errors in files other parts are still editing do not stop the emit; a missing emit does
      if (!existsSync(join(pkgDir, 'dist/src/index.js'))) throw err;
    });
    cpSync(join(ROOT, 'packages/ctrlmetrics/package.json'), join(pkgDir, 'package.json'));
    await sh('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
      cwd: pkgDir,
      timeoutMs: 60_000,
    });
    const tarball = readdirSync(work).find((f) => /^ctrlmetrics-.*\.tgz$/.test(f));
    assert.ok(tarball, 'npm pack produced a tarball');

    // 2. a fresh project depending on it. The machine has no registry access, so the install is done the way npm
    //    lays it out: the tarball unpacked in node_modules/ctrlmetrics, its dependencies and the project's dev tools
    //    linked from this repository's node_modules (same pinned versions). Then the project's own `npm run build`.
    const app = join(work, 'app');
    await initProject({ projectName: P, dir: app, ctrlmetricsVersion: `file:${join(work, tarball)}` });
    const installed = join(app, 'node_modules/ctrlmetrics');
    mkdirSync(installed, { recursive: true });
    await sh('tar', ['-xzf', join(work, tarball), '-C', installed, '--strip-components=1'], { timeoutMs: 60_000 });
    assert.ok(existsSync(join(installed, 'dist/src/index.d.ts')), 'the packed package has its type declarations');
    symlinkSync(join(ROOT, 'node_modules'), join(installed, 'node_modules'), 'dir');
    symlinkSync(join(ROOT, 'node_modules/typescript'), join(app, 'node_modules/typescript'), 'dir');
    symlinkSync(join(ROOT, 'node_modules/@types'), join(app, 'node_modules/@types'), 'dir');
    mkdirSync(join(app, 'node_modules/.bin'));
    symlinkSync('../typescript/bin/tsc', join(app, 'node_modules/.bin/tsc'));
    await sh('npm', ['run', 'build'], { cwd: app, timeoutMs: 180_000 });
    assert.ok(existsSync(join(app, 'dist/main.js')));

    // 3. run it as the manager's ServiceAccount (RBAC from the applied config/default, see the first test)
    await cluster.serviceAccountToken(NS, SA).catch(() => undefined);
    const managerToken = await cluster.serviceAccountToken(NS, SA, { expirationSeconds: 3600 });
    const kubeconfig = join(work, 'manager.kubeconfig');
    writeFileSync(
      kubeconfig,
      stringify(
        kubeconfigFor({
          server: cluster.authority.url,
          caPem: cluster.authority.caPem,
          token: managerToken,
          userName: SA,
        }),
      ),
    );
    const reader = await cluster.readerToken();

    // 3a. defaults: HTTPS, authn/authz on every scrape, HTTP/1.1 only
    const secure = await runManager(app, kubeconfig, []);
    try {
      const url = `https://127.0.0.1:${secure.metricsPort}/metrics`;
      const ok = await secure.until('the generated manager to serve /metrics', 30_000, async () => {
        const r = await get(url, reader);
        return r.status === 200 ? r : undefined;
      });
      assert.match(ok.body, /^# TYPE controller_runtime_reconcile_total counter$/m);
      assert.equal((await get(url)).status, 401, 'no token: 401');
      const stranger = await cluster.serviceAccountToken('default', 'stranger');
      assert.equal((await get(url, stranger)).status, 403, 'a token without metrics-reader: 403');
      assert.equal(
        await alpn(secure.metricsPort),
        'http/1.1',
        '--enable-http2 defaults to false: ALPN picks http/1.1 over h2',
      );
      assert.equal(
        (await getPlain(`http://127.0.0.1:${secure.healthPort}/healthz`)).status,
        200,
        'health probe on --health-probe-bind-address',
      );

      // the sample controller's custom metric, after a ConfigMap appears
      await cluster.admin.create('/api/v1/namespaces/default/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'sample', namespace: 'default', labels: { 'app.kubernetes.io/part-of': 'demo-op' } },
        data: { a: '1', b: '2' },
      });
      const after = await secure.until('demo_op_configmap_keys for default/sample', 20_000, async () => {
        const r = await get(url, reader);
        return /^demo_op_configmap_keys\{name="sample",namespace="default"\} 2$/m.test(r.body) ? r : undefined;
      });

      // every metric family the generated Grafana dashboards query is served by the generated manager
      const queried = new Set<string>();
      for (const f of readdirSync(join(app, 'config/grafana')).filter((n) => n.endsWith('.json'))) {
        const dash = JSON.parse(readFileSync(join(app, 'config/grafana', f), 'utf8')) as {
          panels: Array<{ targets: Array<{ expr: string }> }>;
        };
        for (const t of dash.panels.flatMap((p) => p.targets)) {
          for (const m of t.expr.matchAll(/\b([a-z_][a-z0-9_]*)\{/g)) queried.add(m[1].replace(/_bucket$/, ''));
        }
      }
      assert.ok(queried.size >= 10, `dashboards query metric families: ${[...queried].join(', ')}`);
      const missing = [...queried].filter((name) => !new RegExp(`^# TYPE ${name} `, 'm').test(after.body));
      assert.deepEqual(missing, [], 'metric families queried by config/grafana but not served');
    } finally {
      await secure.stop();
    }

    // 3b. --metrics-secure=false: plain HTTP without authentication (the flag is wired to secureServing and the filter)
    const plain = await runManager(app, kubeconfig, ['--metrics-secure=false']);
    try {
      const r = await plain.until('plain-HTTP /metrics', 30_000, async () => {
        const res = await getPlain(`http://127.0.0.1:${plain.metricsPort}/metrics`);
        return res.status === 200 ? res : undefined;
      });
      assert.match(r.body, /^# TYPE controller_runtime_reconcile_total counter$/m);
    } finally {
      await plain.stop();
    }
  },
);

// it runs the project the test before built, and is skipped with it
test(
  'the generated manager refuses a --metrics-cert-path without certificate files',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = join(work, 'app');
    if (!existsSync(join(app, 'dist/main.js'))) assert.fail('the previous test did not build the project');
    const empty = mkdtempSync(join(work, 'certs-'));
    const r = await new Promise<{ code: number | null; out: string }>((res) => {
      const c = spawn(
        process.execPath,
        [
          'dist/main.js',
          `--metrics-cert-path=${empty}`,
          '--metrics-bind-address=127.0.0.1:0',
          '--kubeconfig',
          cluster.authority.kubeconfig,
        ],
        {
          cwd: app,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d));
      c.stderr.on('data', (d: Buffer) => (out += d));
      const t = setTimeout(() => c.kill('SIGKILL'), 20_000);
      c.on('exit', (code) => {
        clearTimeout(t);
        res({ code, out });
      });
    });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /metrics-cert-path .*missing .*tls\.crt/);
  },
);

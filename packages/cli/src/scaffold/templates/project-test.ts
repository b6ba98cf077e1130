/**
 * The generated project's own end-to-end test (`npm test`), in the spirit of kubebuilder's scaffolded test/e2e:
 * the embedded authority stands in for the cluster, so it passes out of the box with no cluster and no kubectl.
 */
import type { ProjectParams } from './params.js';

/** Where the compiled test lands (kept out of dist/, which the image ships). */
export const TEST_OUT_DIR = 'dist-test';
export const E2E_TEST = 'test/e2e/metrics.test.ts';

export function projectTestFiles(p: ProjectParams): Record<string, string> {
  const prefix = p.projectName.replace(/-/g, '_');
  const tsconfig = {
    extends: '../tsconfig.json',
    // the project's sources are compiled along, so tests import them from ../../src as they are
    compilerOptions: { rootDir: '..', outDir: `../${TEST_OUT_DIR}` },
    include: ['**/*.ts', '../src/**/*.ts'],
  };
  const e2e = `/**
 * End-to-end test of the manager, in the spirit of kubebuilder's test/e2e. Instead of a Kind cluster it starts
 * ctrlmetrics' embedded authority (a Kubernetes-API-compatible server) with this project's namespace, service
 * account and RBAC from config/, runs the built manager (dist/main.js) as that service account, grants a scraper
 * the metrics-reader ClusterRole with \`ctrlmetrics grant\`, requests its token with \`ctrlmetrics token\`, and
 * scrapes /metrics over HTTPS.
 *
 * The objects are applied as config/ holds them, without kustomize's name prefix and namespace (so no kubectl is
 * needed): the namespace is \`system\`, the reader role \`metrics-reader\`. \`npm test\` builds and runs it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from 'ctrlmetrics';
import { kubeconfigFor } from 'ctrlmetrics/config';
import { startAuthority, type Authority } from '@ctrlmetrics/envtest';

/** The project root (this file runs from ${TEST_OUT_DIR}/test/e2e/). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WAIT_MS = 30_000;

let work: string;
let authority: Authority;
let admin: KubeClient;
let manager: ChildProcess | undefined;
let managerOutput = '';
let metricsPort: number;

/** The CLI of the installed @ctrlmetrics/cli. */
function ctrlmetricsCli(): string {
  const pkgFile = createRequire(import.meta.url).resolve('@ctrlmetrics/cli/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(pkgFile), pkg.bin['ctrlmetrics']!);
}

/** Runs \`ctrlmetrics <args>\` against the authority as its admin and returns what it prints. */
function ctrlmetrics(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [ctrlmetricsCli(), ...args, '--kubeconfig', authority.kubeconfig], { timeout: WAIT_MS }, (err, stdout, stderr) => {
      if (err) reject(new Error('ctrlmetrics ' + args.join(' ') + ': ' + (stderr || err.message)));
      else resolve(stdout);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** GET /metrics from the manager; it serves a self-signed certificate, which this test does not verify. */
function scrape(token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token ? { authorization: 'Bearer ' + token } : {};
    const req = request({ host: '127.0.0.1', port: metricsPort, path: '/metrics', rejectUnauthorized: false, timeout: 5_000, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5s')));
    req.on('error', reject);
    req.end();
  });
}

/** Polls \`check\` until it returns a value; fails after WAIT_MS, or at once if the manager exited. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  let last = '';
  while (Date.now() < deadline && manager?.exitCode === null) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const state = manager?.exitCode === null ? 'timed out' : 'the manager exited (' + String(manager?.exitCode) + ')';
  throw new Error(state + ' waiting for ' + what + (last ? ': ' + last : '') + '\\nmanager output:\\n' + managerOutput.slice(-4000));
}

async function serviceAccount(namespace: string, name: string): Promise<void> {
  await admin.create('/api/v1/namespaces/' + namespace + '/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), '${p.projectName}-e2e-'));
  const rbac = readdirSync(join(ROOT, 'config/rbac'))
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => join(ROOT, 'config/rbac', f));
  authority = await startAuthority({ apply: [join(ROOT, 'config/manager/manager.yaml'), ...rbac], kubeconfigOut: join(work, 'admin.kubeconfig') });
  admin = new KubeClient(authority.restConfig);

  // The manager runs as its own service account, with only what config/rbac grants it.
  const token = (await ctrlmetrics('token', 'controller-manager', '-n', 'system')).trim();
  const kubeconfig = join(work, 'manager.kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify(kubeconfigFor({ server: authority.url, caPem: authority.caPem, token, userName: 'controller-manager' })));
  metricsPort = await freePort();
  const healthPort = await freePort();
  manager = spawn(
    process.execPath,
    [join(ROOT, 'dist/main.js'), '--metrics-bind-address=127.0.0.1:' + metricsPort, '--health-probe-bind-address=127.0.0.1:' + healthPort, '--kubeconfig', kubeconfig],
    // this test is about /metrics: the manager runs without its admission webhooks (their certificate comes from
    // cert-manager in a cluster; test/webhooks/ tests them through the authority)
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, KUBECONFIG: '', ENABLE_WEBHOOKS: 'false' } },
  );
  manager.stdout!.on('data', (chunk: Buffer) => (managerOutput += chunk.toString()));
  manager.stderr!.on('data', (chunk: Buffer) => (managerOutput += chunk.toString()));
});

after(async () => {
  const running = manager;
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    const kill = setTimeout(() => running.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(kill);
  }
  admin?.close();
  await authority?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('/metrics answers 401 without a token', async () => {
  const res = await eventually('the manager to serve /metrics', async () => {
    const r = await scrape();
    return r.status === 401 ? r : undefined;
  });
  assert.equal(res.status, 401);
});

test('a service account granted metrics-reader scrapes the reconcile metrics', async () => {
  await serviceAccount('default', 'prometheus');
  assert.match(await ctrlmetrics('grant', '--serviceaccount', 'default:prometheus', '--clusterrole', 'metrics-reader'), /clusterrolebinding.* created/);
  const token = (await ctrlmetrics('token', 'prometheus', '-n', 'default')).trim();

  // the sample controller reconciles the ConfigMaps labelled for it, and no other
  await admin.create('/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'unlabelled', namespace: 'default' },
    data: { a: '1' },
  });
  await admin.create('/api/v1/namespaces/default/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'sample', namespace: 'default', labels: { 'app.kubernetes.io/part-of': '${p.projectName}' } },
    data: { a: '1', b: '2' },
  });
  const res = await eventually('the reconcile of default/sample in /metrics', async () => {
    const r = await scrape(token);
    return r.status === 200 && /^${prefix}_configmap_keys\\{name="sample",namespace="default"\\} 2$/m.test(r.body) ? r : undefined;
  });
  assert.doesNotMatch(res.body, /^${prefix}_configmap_keys\\{name="unlabelled"/m, 'an unlabelled ConfigMap is not reconciled');
  assert.match(res.body, /^controller_runtime_reconcile_total\\{controller="configmap",result="success"\\} [1-9]/m);
  assert.match(res.body, /^# TYPE controller_runtime_reconcile_time_seconds histogram$/m);
  assert.match(res.body, /^# TYPE workqueue_depth gauge$/m);
});

test('a token without metrics-reader is refused with 403', async () => {
  await serviceAccount('default', 'stranger');
  const token = (await ctrlmetrics('token', 'stranger', '-n', 'default')).trim();
  const res = await eventually('an answer to the stranger', async () => scrape(token));
  assert.equal(res.status, 403);
});
`;
  return { 'test/tsconfig.json': JSON.stringify(tsconfig, null, 2) + '\n', [E2E_TEST]: e2e };
}

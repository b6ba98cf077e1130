/**
 * What `ctrlmetrics create api --resource=false` writes for a built-in kind (a Deployment, a ConfigMap, …): a
 * controller that watches it, typed by `kubernetes-types`, with RBAC markers for its real group and resource, and
 * a test on the authority that creates one and waits for the controller's successful reconcile.
 */
import type { BuiltinKind } from '../builtin-kinds.js';
import { constantName } from './api.js';

/** The controller of a built-in kind: the file, its function and its test. */
export const builtinControllerPath = (k: BuiltinKind) => `src/controllers/${k.kind.toLowerCase()}-controller.ts`;
export const builtinControllerTestPath = (k: BuiltinKind) =>
  `test/controllers/${k.kind.toLowerCase()}-controller.test.ts`;
export const builtinControllerFunction = (k: BuiltinKind) => `new${k.kind}Controller`;

export function builtinControllerFile(k: BuiltinKind): string {
  const c = constantName(k.kind);
  const type = k.typesModule ? k.kind : 'KubeObject';
  const imports = k.typesModule
    ? `import { Controller, ignoreNotFound, type ReconcileContext, type Request, type Result } from 'ctrlmetrics';\nimport type { ${k.kind} } from '${k.typesModule}';`
    : `import { Controller, ignoreNotFound, type KubeObject, type ReconcileContext, type Request, type Result } from 'ctrlmetrics';`;
  return `/**
 * The ${k.kind} controller: reconciles each ${k.kind} (${k.apiVersion}, ${k.external ? "a kind of another project's CRD" : 'a built-in kind of Kubernetes'}) whenever
 * it changes.
 */
${imports}

/** The kind the controller watches. */
export const ${c} = { apiVersion: '${k.apiVersion}', kind: '${k.kind}' } as const;

/** The controller; src/main.ts adds it to the manager. */
export function ${builtinControllerFunction(k)}(): Controller {
  return new Controller({
    name: '${k.kind.toLowerCase()}',
    watches: [${c}],
    reconciler: reconcile,
  });
}

// What the controller may do; \`npm run manifests\` writes config/rbac/role.yaml from these markers.
// +kubebuilder:rbac:groups=${k.rbacGroup},resources=${k.plural},verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=${k.rbacGroup},resources=${k.plural}/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=${k.rbacGroup},resources=${k.plural}/finalizers,verbs=update

/**
 * Moves the cluster toward what the ${k.kind} asks for. Reconciling must be idempotent: it runs again on every
 * change, on restarts and on resyncs. TODO(user): act on the ${k.kind}. It is not this project's kind: change only
 * what your operator owns (the objects it creates, the labels or annotations it sets).
 */
async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
  const obj = await ctx.client.get<${type}>(${c}, req).catch(ignoreNotFound);
  if (!obj) return; // deleted: nothing to do
  ctx.log.debug('reconciled', { generation: obj.metadata?.generation });
}
`;
}

/**
 * The test of a controller for a kind the project does not define: a built-in kind, or (with `crds`, paths from the
 * project root) a kind of another project's CRDs, which the test environment installs first.
 */
export function builtinControllerTestFile(
  k: BuiltinKind,
  sample: Record<string, unknown>,
  crds: string[] = [],
): string {
  const name = k.kind.toLowerCase();
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  const collection = `${base}${k.namespaced ? '/namespaces/default' : ''}/${k.plural}`;
  return `/**
 * The ${k.kind} controller against ctrlmetrics' embedded authority (what envtest is to Go): ${crds.length ? `its CRD installed (${crds.join(', ')}), ` : ''}the manager
 * started with the controller, a ${k.kind} created, and its reconcile seen succeed in the controller's
 * controller_runtime_reconcile_total. \`npm test\` builds and runs it; \`USE_EXISTING_CLUSTER=true npm test\` runs it
 * on the cluster of KUBECONFIG (envtest's switch), removing the ${k.kind} after.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
${crds.length ? "import { join } from 'node:path';\nimport { fileURLToPath } from 'node:url';\n" : ''}import { KubeClient, Manager, metrics } from 'ctrlmetrics';
import { startTestEnvironment, type TestEnvironment } from '@ctrlmetrics/envtest';
import { ${builtinControllerFunction(k)} } from '../../src/controllers/${name}-controller.js';

${crds.length ? "/** The project root (this file runs from dist-test/test/controllers/). */\nconst ROOT = fileURLToPath(new URL('../../../', import.meta.url));\n\n" : ''}/** A ${k.kind} the API server accepts; TODO(user): make it one your controller acts on. */
const SAMPLE = ${JSON.stringify(sample, null, 2)};

let env: TestEnvironment | undefined;
let client: KubeClient;
const stop = new AbortController();
let running: Promise<void> | undefined;

before(async () => {
  env = await startTestEnvironment(${crds.length ? `{ crdDirectoryPaths: [${crds.map((c) => `join(ROOT, '${c}')`).join(', ')}] }` : ''});
  client = new KubeClient(env.restConfig);
  const mgr = new Manager({ restConfig: env.restConfig, handleSignals: false, metrics: { bindAddress: '0' }, healthProbeBindAddress: '0' });
  mgr.add(${builtinControllerFunction(k)}());
  running = mgr.start(stop.signal);
  await mgr.ready();
});

after(async () => {
  stop.abort();
  await running;
  await client?.delete(\`${collection}/\${SAMPLE.metadata.name}\`).catch(() => undefined);
  client?.close();
  await env?.stop();
});

/** The controller's successful reconciles so far, from the global registry the manager's metrics use. */
async function successfulReconciles(): Promise<number> {
  const text = await (await metrics.registry.collect()).text();
  const line = text.split('\\n').find((l) => l.startsWith('controller_runtime_reconcile_total{') && l.includes('controller="${name}"') && l.includes('result="success"'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

test('a ${k.kind} is reconciled', async () => {
  const atStart = await successfulReconciles();
  await client.create('${collection}', SAMPLE);
  // bounded: the reconcile runs as soon as the manager's cache sees the new ${k.kind}
  let now = atStart;
  for (let i = 0; i < 200 && now <= atStart; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    now = await successfulReconciles();
  }
  assert.ok(now > atStart, \`no successful reconcile of the ${k.kind} (\${atStart} before its create, \${now} after)\`);
});
`;
}

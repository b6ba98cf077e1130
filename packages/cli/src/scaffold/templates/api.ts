/**
 * What `ctrlmetrics create api` writes for one kind, after kubebuilder's go/v4 and kustomize/v2 templates: the API
 * types with their markers, the controller with its RBAC markers and its test on the authority, the sample, and
 * the admin/editor/viewer roles.
 */
import { posix } from 'node:path';
import { commonLabels, type ProjectParams } from './params.js';

/** The names of one API kind, derived as kubebuilder derives them. */
export interface ApiResource {
  /** Short group (`cache`); `''` when the domain alone is the group. */
  group: string;
  /** `<group>.<domain>` (or whichever is set). */
  qualifiedGroup: string;
  version: string;
  kind: string;
  /** The lower-cased kind (`FirstMate` → `firstmate`), as kubebuilder's `%[kind]`. */
  lowerKind: string;
  plural: string;
  /** Set when `plural` is not the regular plural (then written as `+kubebuilder:resource:path`). */
  irregularPlural: boolean;
  namespaced: boolean;
  /** A multi-group project (kubebuilder's layout: `src/api/<group>/<version>/`, `src/controllers/<group>/`). */
  multigroup?: boolean;
}

/** `FirstMate` → `FIRST_MATE`: the constant holding apiVersion and kind. */
export function constantName(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1_$2')
    .toUpperCase();
}

/** The folder of a kind's group in a multi-group project (`<group>/`), else nothing. */
const groupDir = (r: ApiResource) => (r.multigroup && r.group ? `${r.group}/` : '');
export const typesPath = (r: ApiResource) => `src/api/${groupDir(r)}${r.version}/${r.lowerKind}-types.ts`;
export const controllerPath = (r: ApiResource) => `src/controllers/${groupDir(r)}${r.lowerKind}-controller.ts`;
/** Tests stay one folder deep (the project's `npm test` runs test/*\/*.test.js): a group prefixes the name instead. */
const groupPrefix = (r: ApiResource) => (r.multigroup && r.group ? `${r.group}-` : '');
export const controllerTestPath = (r: ApiResource) =>
  `test/controllers/${groupPrefix(r)}${r.lowerKind}-controller.test.ts`;
export const samplePath = (r: ApiResource) =>
  `config/samples/${r.group ? `${r.group}_` : ''}${r.version}_${r.lowerKind}.yaml`;
export const crdFile = (r: ApiResource) => `${r.qualifiedGroup}_${r.plural}.yaml`;
export const roleFiles = (r: ApiResource) =>
  ['admin', 'editor', 'viewer'].map(
    (k) => `config/rbac/${r.multigroup && r.group ? `${r.group}_` : ''}${r.lowerKind}_${k}_role.yaml`,
  );
/** The controller's name: the lower-cased kind, prefixed with its group in a multi-group project (kubebuilder's). */
export const controllerName = (r: ApiResource) => `${r.multigroup && r.group ? `${r.group}-` : ''}${r.lowerKind}`;

/** The relative ESM import of project file `to` (a .ts path) from project file `from`. */
export function importPath(from: string, to: string): string {
  const rel = posix.relative(posix.dirname(from), to.replace(/\.ts$/, '.js'));
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/** The URL from a compiled test (dist-test/<its path>.js) back to the project root. */
export function rootFromTest(testPath: string): string {
  return '../'.repeat(testPath.split('/').length);
}
export const controllerFunction = (r: ApiResource) => `new${r.kind}Controller`;

export function typesFile(r: ApiResource): string {
  const c = constantName(r.kind);
  const resource = [r.irregularPlural ? `path=${r.plural}` : '', r.namespaced ? '' : 'scope=Cluster']
    .filter(Boolean)
    .join(',');
  return `/**
 * The ${r.kind} API (${r.qualifiedGroup}/${r.version}). \`npm run manifests\` writes its CRD,
 * config/crd/bases/${crdFile(r)}, from these types and their markers.
 */
// +groupName=${r.qualifiedGroup}
// +versionName=${r.version}
import type { Condition, ObjectMeta } from 'ctrlmetrics';

/** apiVersion and kind of ${r.kind}, for watches and clients. */
export const ${c} = { apiVersion: '${r.qualifiedGroup}/${r.version}', kind: '${r.kind}' } as const;

/** ${r.kind}Spec defines the desired state of ${r.kind}. */
export interface ${r.kind}Spec {
  // INSERT ADDITIONAL SPEC FIELDS - desired state of cluster
  // Important: run "npm run manifests" to regenerate the CRD after modifying this file.
  // Numbers say which they are: int32 or int64 from ctrlmetrics, or a +kubebuilder:validation:Type marker.

  /** foo is an example field of ${r.kind}. Edit ${r.lowerKind}-types.ts to remove or update it. */
  // +optional
  foo?: string;
}

/** ${r.kind}Status defines the observed state of ${r.kind}. */
export interface ${r.kind}Status {
  // INSERT ADDITIONAL STATUS FIELDS - observed state of cluster

  /**
   * conditions represent the current state of the ${r.kind} resource.
   * Each condition has a unique type and reflects the status of a specific aspect of the resource.
   */
  // +listType=map
  // +listMapKey=type
  // +optional
  conditions?: Condition[];
}

/** ${r.kind} is the Schema for the ${r.plural} API. */
// +kubebuilder:subresource:status
${resource ? `// +kubebuilder:resource:${resource}\n` : ''}export interface ${r.kind} {
  apiVersion: typeof ${c}.apiVersion;
  kind: typeof ${c}.kind;
  metadata: ObjectMeta;
  // +required
  spec: ${r.kind}Spec;
  // +optional
  status?: ${r.kind}Status;
}

// The library answers ${r.kind}s in this type: \`ctx.client.get(${c}, key)\` is a ${r.kind} without a cast.
declare module 'ctrlmetrics' {
  interface KnownKinds {
    '${r.qualifiedGroup}/${r.version}/${r.kind}': ${r.kind};
  }
}
`;
}

const STORAGE_MARKER = '// +kubebuilder:storageversion';

/** Whether a kind's types file marks it as the storage version. */
export function hasStorageVersion(types: string): boolean {
  return types.split('\n').some((l) => l.trim() === STORAGE_MARKER);
}

/**
 * A types file with (`on`) or without the storage-version marker on its kind, placed with the kind's other markers
 * right above `export interface <Kind>`. Undefined when the file has no such interface.
 */
export function withStorageVersion(types: string, kind: string, on: boolean): string | undefined {
  const lines = types.split('\n').filter((l) => l.trim() !== STORAGE_MARKER);
  const at = lines.findIndex((l) => new RegExp(`^export interface ${kind}\\b`).test(l));
  if (at < 0) return undefined;
  if (on) lines.splice(at, 0, STORAGE_MARKER);
  return lines.join('\n');
}

const posixDir = (p: string) => posix.dirname(p);

export function controllerFile(r: ApiResource): string {
  const c = constantName(r.kind);
  return `/**
 * The ${r.kind} controller: reconciles each ${r.kind} (${r.qualifiedGroup}/${r.version}) whenever it changes.
 */
import { Controller, ignoreNotFound, setStatusCondition, type ReconcileContext, type Request, type Result } from 'ctrlmetrics';
import { ${c}, type ${r.kind} } from '${importPath(controllerPath(r), typesPath(r))}';

/** The controller; src/main.ts adds it to the manager. */
export function ${controllerFunction(r)}(): Controller {
  return new Controller({
    name: '${controllerName(r)}',
    watches: [${c}],
    reconciler: reconcile,
  });
}

// What the controller may do; \`npm run manifests\` writes config/rbac/role.yaml from these markers.
// +kubebuilder:rbac:groups=${r.qualifiedGroup},resources=${r.plural},verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=${r.qualifiedGroup},resources=${r.plural}/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=${r.qualifiedGroup},resources=${r.plural}/finalizers,verbs=update

/**
 * Moves the cluster toward what the ${r.kind} asks for. Reconciling must be idempotent: it runs again on every
 * change, on restarts and on resyncs. TODO(user): compare the ${r.kind} with the cluster's state and act on the
 * difference; this scaffold only reports that it saw the object, as the condition Available.
 */
async function reconcile(req: Request, ctx: ReconcileContext): Promise<Result | void> {
  const obj = await ctx.client.get<${r.kind}>(${c}, req).catch(ignoreNotFound);
  if (!obj) return; // deleted: nothing to do

  const conditions = [...(obj.status?.conditions ?? [])].map((x) => ({ ...x }));
  const changed = setStatusCondition(conditions, {
    type: 'Available',
    status: 'True',
    reason: 'Reconciled',
    message: \`${r.kind} \${obj.metadata.name} was reconciled\`,
    observedGeneration: obj.metadata.generation,
  });
  if (changed) await ctx.client.status().update({ ...obj, status: { ...obj.status, conditions } });
}
`;
}

export function controllerTestFile(r: ApiResource): string {
  const base = r.namespaced
    ? `/apis/${r.qualifiedGroup}/${r.version}/namespaces/default/${r.plural}`
    : `/apis/${r.qualifiedGroup}/${r.version}/${r.plural}`;
  return `/**
 * The ${r.kind} controller against ctrlmetrics' embedded authority (what envtest is to Go): the CRDs of
 * config/crd/bases and the sample of ${samplePath(r)} applied, the manager started with the controller, and the
 * sample seen reconciled. \`npm test\` builds and runs it; \`USE_EXISTING_CLUSTER=true npm test\` runs it on the
 * cluster of KUBECONFIG (envtest's switch), removing the CRDs and the sample after.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, Manager } from 'ctrlmetrics';
import { startTestEnvironment, type TestEnvironment } from '@ctrlmetrics/envtest';
import { ${controllerFunction(r)} } from '${importPath(controllerTestPath(r), controllerPath(r))}';
import type { ${r.kind} } from '${importPath(controllerTestPath(r), typesPath(r))}';

/** The project root (this file runs from dist-test/${posixDir(controllerTestPath(r))}/). */
const ROOT = fileURLToPath(new URL('${rootFromTest(controllerTestPath(r))}', import.meta.url));

let env: TestEnvironment | undefined;
let client: KubeClient;
const stop = new AbortController();
let running: Promise<void> | undefined;

before(async () => {
  env = await startTestEnvironment({ crdDirectoryPaths: [join(ROOT, 'config/crd/bases')], apply: [join(ROOT, '${samplePath(r)}')] });
  client = new KubeClient(env.restConfig);
  const mgr = new Manager({ restConfig: env.restConfig, handleSignals: false, metrics: { bindAddress: '0' }, healthProbeBindAddress: '0' });
  mgr.add(${controllerFunction(r)}());
  running = mgr.start(stop.signal);
  await mgr.ready();
});

after(async () => {
  stop.abort();
  await running;
  client?.close();
  await env?.stop();
});

test('the sample ${r.kind} is reconciled', async () => {
  // bounded: the reconcile runs right after the manager's cache has synced
  let seen: ${r.kind} | undefined;
  for (let i = 0; i < 200 && !seen?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 50));
    seen = await client.get<${r.kind}>('${base}/${r.lowerKind}-sample');
  }
  const available = seen?.status?.conditions?.find((c) => c.type === 'Available');
  assert.equal(available?.status, 'True', JSON.stringify(seen?.status));
  assert.equal(available?.reason, 'Reconciled');
});
`;
}

export function sampleFile(r: ApiResource, p: ProjectParams): string {
  return `apiVersion: ${r.qualifiedGroup}/${r.version}
kind: ${r.kind}
metadata:
  labels:
${commonLabels(p, '    ')}
  name: ${r.lowerKind}-sample
spec:
  # TODO(user): Add fields here
  foo: bar
`;
}

export function roleFile(r: ApiResource, p: ProjectParams, which: 'admin' | 'editor' | 'viewer'): string {
  const what = {
    admin: `full permissions ('*') over ${r.qualifiedGroup}.\n# It lets cluster admins delegate the management of these resources.`,
    editor: `permissions to create, update and delete resources within the ${r.qualifiedGroup} group.\n# It lets users edit their own ${r.kind}s.`,
    viewer: `read-only access to resources within the ${r.qualifiedGroup} group.\n# It lets users view ${r.kind}s without changing them.`,
  }[which];
  const verbs = {
    admin: ["'*'"],
    editor: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    viewer: ['get', 'list', 'watch'],
  }[which];
  return `# This rule is not used by the project ${p.projectName} itself.
# It is provided to allow the cluster admin to help manage permissions for users.
#
# Grants ${what}
#
# This role is intended for users who need to manage these resources;
# bind it with a (Cluster)RoleBinding to the users or groups that should have it.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
${commonLabels(p, '    ')}
  name: ${r.lowerKind}-${which}-role
rules:
- apiGroups:
  - ${r.qualifiedGroup}
  resources:
  - ${r.plural}
  verbs:
${verbs.map((v) => `  - ${v}`).join('\n')}
- apiGroups:
  - ${r.qualifiedGroup}
  resources:
  - ${r.plural}/status
  verbs:
  - get
`;
}

export const SAMPLES_MARKER = '# +ctrlmetrics:scaffold:manifestskustomizesamples';
export const CRD_MARKER = '# +ctrlmetrics:scaffold:crdkustomizeresource';

export function samplesKustomization(): string {
  return `## Append samples of your project ##
resources:
${SAMPLES_MARKER}
`;
}

export function crdKustomization(): string {
  return `# This kustomization.yaml is not intended to be run by itself,
# since it depends on service name and namespace that are out of this kustomize package.
# It should be run by config/default
resources:
${CRD_MARKER}
`;
}

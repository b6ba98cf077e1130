/**
 * What `ctrlmetrics create webhook` writes for one kind, after kubebuilder's go/v4 and kustomize/v2 templates: the
 * webhook code with its `+kubebuilder:webhook` markers and its test on the authority, `config/webhook/`, the
 * manager's webhook patch, and cert-manager's serving certificate.
 */
import { WEBHOOK_PORT, commonLabels, type ProjectParams } from './params.js';
import { posix } from 'node:path';
import { constantName, importPath, rootFromTest, typesPath, type ApiResource } from './api.js';

const dirname = (p: string) => posix.dirname(p);

/** Which webhooks a kind gets. */
export interface WebhookKinds {
  defaulting: boolean;
  validation: boolean;
}

export const WEBHOOK_SECRET = 'webhook-server-cert';
export const WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/** The folder of a kind's group in a multi-group project (`<group>/`), else nothing. */
const groupDir = (r: ApiResource) => (r.multigroup && r.group ? `${r.group}/` : '');
export const webhookPath = (r: ApiResource) => `src/webhooks/${groupDir(r)}${r.version}/${r.lowerKind}-webhook.ts`;
/** Tests stay one folder deep (the project's `npm test` runs test/*\/*.test.js): a group prefixes the name instead. */
const groupPrefix = (r: ApiResource) => (r.multigroup && r.group ? `${r.group}-` : '');
export const webhookTestPath = (r: ApiResource) => `test/webhooks/${groupPrefix(r)}${r.lowerKind}-webhook.test.ts`;
export const webhookFunction = (r: ApiResource) => `new${r.kind}Webhook`;

/** controller-runtime's paths: `/mutate-<group, dots as dashes>-<version>-<kind lower-cased>`. */
export function admissionPath(r: ApiResource, prefix: 'mutate' | 'validate'): string {
  return `/${prefix}-${r.qualifiedGroup.replaceAll('.', '-')}-${r.version}-${r.lowerKind}`;
}

function marker(r: ApiResource, mutating: boolean): string {
  const path = admissionPath(r, mutating ? 'mutate' : 'validate');
  const name = `${mutating ? 'm' : 'v'}${r.lowerKind}-${r.version}.kb.io`;
  return `// +kubebuilder:webhook:path=${path},mutating=${mutating},failurePolicy=fail,sideEffects=None,groups=${r.qualifiedGroup},resources=${r.plural},verbs=create;update,versions=${r.version},name=${name},admissionReviewVersions=v1`;
}

export function webhookFile(r: ApiResource, k: WebhookKinds): string {
  const c = constantName(r.kind);
  const imports = ['Webhook', ...(k.validation ? ['AdmissionDeniedError', 'type Warnings'] : [])];
  const defaulter = k.defaulting
    ? `
    // ${admissionPath(r, 'mutate')}: change the object; the API server stores what the defaulter leaves
    defaulter: {
      default(obj) {
        // the types say spec is there, but a request can come without one: the API server's schema check answers it
        if (obj.spec === undefined) return;
        // TODO(user): fill in your default values
        obj.spec.foo ||= DEFAULT_FOO;
      },
    },`
    : '';
  const validator = k.validation
    ? `
    // ${admissionPath(r, 'validate')}: return warnings, throw to refuse
    validator: {
      validateCreate: (obj) => validate(obj),
      validateUpdate: (_oldObj, obj) => validate(obj),
      // called only once the marker's verbs include delete
      validateDelete: () => undefined,
    },`
    : '';
  return `/**
 * The ${r.kind} webhooks (${r.qualifiedGroup}/${r.version}), served by the manager's webhook server on :${WEBHOOK_PORT}.
 */
import { ${imports.join(', ')} } from 'ctrlmetrics';
import { ${c}, type ${r.kind} } from '${importPath(webhookPath(r), typesPath(r))}';
${k.defaulting ? `\n/** The value the defaulter gives spec.foo when it is unset. */\nexport const DEFAULT_FOO = 'default';\n` : ''}${k.validation ? `\n/** The longest spec.foo the validator accepts. */\nexport const MAX_FOO_LENGTH = 63;\n` : ''}
// Where the API server calls them; \`npm run manifests\` writes config/webhook/manifests.yaml from these markers.
${[...(k.defaulting ? [marker(r, true)] : []), ...(k.validation ? [marker(r, false)] : [])].join('\n')}
${
  k.validation
    ? `
/** TODO(user): your validation. This scaffold refuses a spec.foo longer than MAX_FOO_LENGTH. */
function validate(obj: ${r.kind}): Warnings {
  const foo = obj.spec?.foo;
  if (foo !== undefined && foo.length > MAX_FOO_LENGTH) {
    throw AdmissionDeniedError.invalid({ group: '${r.qualifiedGroup}', kind: '${r.kind}' }, obj.metadata?.name ?? '', [
      { field: 'spec.foo', message: \`Invalid value: \${JSON.stringify(foo)}: must be no more than \${MAX_FOO_LENGTH} characters\` },
    ]);
  }
  return undefined;
}
`
    : ''
}
/** The webhooks; src/main.ts adds them to the manager. */
export function ${webhookFunction(r)}(): Webhook<${r.kind}> {
  return new Webhook<${r.kind}>({
    for: ${c},${defaulter}${validator}
  });
}
`;
}

/**
 * The start of a generated webhook test (admission or conversion): the test environment (the authority, or the
 * cluster of KUBECONFIG with USE_EXISTING_CLUSTER=true) with the project's CRDs and the webhooks of `install`, a
 * manager serving the webhook `add` makes, everything stopped and removed after.
 */
export function authorityWebhookTestPrelude(o: {
  doc: string;
  imports: string[];
  install: string;
  add: string;
  crds?: boolean;
  testPath?: string;
}): string {
  return `/**
 * ${o.doc} \`npm test\` runs it; \`USE_EXISTING_CLUSTER=true npm test\` runs it on the cluster of KUBECONFIG (envtest's
 * switch: the CRDs and webhook configurations installed there and removed after; its API server must reach the
 * webhook server on 127.0.0.1).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, Manager } from 'ctrlmetrics';
import { startTestEnvironment, type TestEnvironment } from '@ctrlmetrics/envtest';
${o.imports.join('\n')}

/** The project root (this file runs from dist-test/${dirname(o.testPath ?? 'test/webhooks/x')}/). */
const ROOT = fileURLToPath(new URL('${rootFromTest(o.testPath ?? 'test/webhooks/x')}', import.meta.url));

let env: TestEnvironment | undefined;
let client: KubeClient;
const stop = new AbortController();
let running: Promise<void> | undefined;

before(async () => {
  env = await startTestEnvironment({ ${o.crds === false ? '' : "crdDirectoryPaths: [join(ROOT, 'config/crd/bases')], "}webhookInstallOptions: ${o.install} });
  client = new KubeClient(env.restConfig);
  const mgr = new Manager({
    restConfig: env.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
    webhook: { bindAddress: env.webhooks!.bindAddress, certDir: env.webhooks!.certDir },
  });
  mgr.add(${o.add});
  running = mgr.start(stop.signal);
  await mgr.ready();
});

after(async () => {
  stop.abort();
  await running;
  client?.close();
  await env?.stop();
});
`;
}

export function webhookTestFile(r: ApiResource, k: WebhookKinds): string {
  const base = r.namespaced
    ? `/apis/${r.qualifiedGroup}/${r.version}/namespaces/default/${r.plural}`
    : `/apis/${r.qualifiedGroup}/${r.version}/${r.plural}`;
  const obj = (name: string, spec: string) =>
    `{ apiVersion: '${r.qualifiedGroup}/${r.version}', kind: '${r.kind}', metadata: { name: '${name}' }, spec: ${spec} }`;
  const tests: string[] = [];
  if (k.defaulting) {
    tests.push(`
test('the defaulter fills spec.foo when it is unset', async () => {
  const stored = await client.create<${r.kind}>('${base}', ${obj('defaulted', '{}')});
  assert.equal(stored.spec.foo, DEFAULT_FOO);
});`);
  }
  if (k.validation) {
    tests.push(`
test('the validator refuses a spec.foo that is too long, with its message', async () => {
  const foo = 'x'.repeat(MAX_FOO_LENGTH + 1);
  await assert.rejects(client.create('${base}', ${obj('too-long', '{ foo }')}), (err: Error) => {
    assert.equal(err.message, \`admission webhook "v${r.lowerKind}-${r.version}.kb.io" denied the request: ${r.kind}.${r.qualifiedGroup} "too-long" is invalid: spec.foo: Invalid value: "\${foo}": must be no more than \${MAX_FOO_LENGTH} characters\`);
    return true;
  });
});`);
  }
  const fromWebhook = [
    webhookFunction(r),
    ...(k.defaulting ? ['DEFAULT_FOO'] : []),
    ...(k.validation ? ['MAX_FOO_LENGTH'] : []),
  ];
  const prelude = authorityWebhookTestPrelude({
    doc: `The ${r.kind} webhooks called by ctrlmetrics' embedded authority, as a cluster's API server calls them (what
 * envtest's WebhookInstallOptions does for Go): the test environment makes the serving certificate and installs
 * config/webhook pointed at the manager's webhook server; writes then go through the webhooks.`,
    imports: [
      `import { ${fromWebhook.join(', ')} } from '${importPath(webhookTestPath(r), webhookPath(r))}';`,
      `import type { ${r.kind} } from '${importPath(webhookTestPath(r), typesPath(r))}';`,
    ],
    install: `{ manifests: [join(ROOT, 'config/webhook')] }`,
    add: `${webhookFunction(r)}()`,
    testPath: webhookTestPath(r),
  });
  return `${prelude}${tests.join('\n')}
`;
}

export function webhookKustomization(): string {
  return `resources:
- manifests.yaml
- service.yaml

configurations:
- kustomizeconfig.yaml
`;
}

export function webhookKustomizeConfig(): string {
  return `# Tells kustomize that the webhook configurations name the webhook Service, so the namePrefix and namespace that
# rename the Service rename their references too.
nameReference:
- kind: Service
  version: v1
  fieldSpecs:
  - kind: MutatingWebhookConfiguration
    group: admissionregistration.k8s.io
    path: webhooks/clientConfig/service/name
  - kind: ValidatingWebhookConfiguration
    group: admissionregistration.k8s.io
    path: webhooks/clientConfig/service/name

namespace:
- kind: MutatingWebhookConfiguration
  group: admissionregistration.k8s.io
  path: webhooks/clientConfig/service/namespace
  create: true
- kind: ValidatingWebhookConfiguration
  group: admissionregistration.k8s.io
  path: webhooks/clientConfig/service/namespace
  create: true
`;
}

export function webhookService(p: ProjectParams): string {
  return `apiVersion: v1
kind: Service
metadata:
  labels:
${commonLabels(p, '    ')}
  name: webhook-service
  namespace: system
spec:
  ports:
  - port: 443
    protocol: TCP
    targetPort: ${WEBHOOK_PORT}
  selector:
    control-plane: controller-manager
    app.kubernetes.io/name: ${p.projectName}
`;
}

export function managerWebhookPatch(): string {
  return `# The manager's webhook server: the cert-manager Secret ${WEBHOOK_SECRET} mounted at ${WEBHOOK_CERT_DIR},
# --webhook-cert-path pointing at it, and the container port the webhook Service targets.
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --webhook-cert-path=${WEBHOOK_CERT_DIR}
- op: add
  path: /spec/template/spec/containers/0/volumeMounts/-
  value:
    mountPath: ${WEBHOOK_CERT_DIR}
    name: webhook-certs
    readOnly: true
- op: add
  path: /spec/template/spec/containers/0/ports/-
  value:
    containerPort: ${WEBHOOK_PORT}
    name: webhook-server
    protocol: TCP
- op: add
  path: /spec/template/spec/volumes/-
  value:
    name: webhook-certs
    secret:
      secretName: ${WEBHOOK_SECRET}
`;
}

export function webhookCertificate(p: ProjectParams): string {
  return `# The webhook server's certificate. cert-manager writes it to the Secret ${WEBHOOK_SECRET}, which
# manager_webhook_patch.yaml mounts into the manager; its CA is injected into the webhook configurations.
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  labels:
${commonLabels(p, '    ')}
  name: serving-cert  # the replacements in config/default select the Certificate by this name
  namespace: system
spec:
  dnsNames:
  # SERVICE_NAME and SERVICE_NAMESPACE are substituted by kustomize (the [WEBHOOK] replacements in config/default)
  - SERVICE_NAME.SERVICE_NAMESPACE.svc
  - SERVICE_NAME.SERVICE_NAMESPACE.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: selfsigned-issuer
  secretName: ${WEBHOOK_SECRET}
`;
}

export const conversionPath = (r: ApiResource) =>
  `src/webhooks/${groupDir(r)}${r.version}/${r.lowerKind}-conversion.ts`;
export const conversionTestPath = (r: ApiResource) =>
  `test/webhooks/${groupPrefix(r)}${r.lowerKind}-conversion.test.ts`;
export const conversionFunction = (r: ApiResource) => `new${r.kind}Conversion`;
export const crdConversionPatchPath = (r: ApiResource) => `config/crd/patches/webhook_in_${r.plural}.yaml`;

/** The alias a version's types are imported under: `Frigate` for the hub, `FrigateV2` for a spoke. */
function typeAlias(r: ApiResource, version: string, hub: boolean): string {
  return hub ? r.kind : `${r.kind}${version.charAt(0).toUpperCase()}${version.slice(1)}`;
}

/** The conversion webhook: `r.version` is the hub, each spoke converts to and from it (fields copied as they are). */
export function conversionFile(r: ApiResource, spokes: string[]): string {
  const c = constantName(r.kind);
  const imports = [
    `import { ${c}, type ${r.kind} } from '${importPath(conversionPath(r), typesPath(r))}';`,
    ...spokes.map(
      (v) =>
        `import { ${c} as ${c}_${v.toUpperCase()}, type ${r.kind} as ${typeAlias(r, v, false)} } from '${importPath(conversionPath(r), typesPath({ ...r, version: v }))}';`,
    ),
  ];
  const spokeEntries = spokes.map((v) => {
    const spoke = typeAlias(r, v, false);
    return `      ${v}: {
        toHub: (o: ${spoke}): ${r.kind} => ({ ...o, apiVersion: ${c}.apiVersion, spec: { ...o.spec }, ...(o.status ? { status: { ...o.status } } : {}) }),
        fromHub: (h: ${r.kind}): ${spoke} => ({ ...h, apiVersion: ${c}_${v.toUpperCase()}.apiVersion, spec: { ...h.spec }, ...(h.status ? { status: { ...h.status } } : {}) }),
      },`;
  });
  return `/**
 * Conversion of ${r.kind} (${r.qualifiedGroup}) between its versions: ${r.version} is the hub, the version objects are stored in
 * (+kubebuilder:storageversion on its type), and ${spokes.join(', ')} convert${spokes.length === 1 ? 's' : ''} to and from it. The API server calls the
 * manager's /convert, where config/crd/patches/${crdConversionPatchPath(r).split('/').pop()} points the CRD.
 *
 * The versions start out alike, so each field is copied as it is. When a version's fields change, convert them
 * here: every field of a spoke must survive the trip to the hub and back (keep what the hub has no field for in an
 * annotation), since objects are stored in the hub version whatever version they were written in.
 */
import { ConversionWebhook } from 'ctrlmetrics/webhook';
${imports.join('\n')}

/** The conversion webhook; src/main.ts adds it to the manager. */
export function ${conversionFunction(r)}(): ConversionWebhook {
  return new ConversionWebhook({
    group: ${c}.apiVersion.split('/')[0]!,
    kind: ${c}.kind,
    hub: '${r.version}',
    spokes: {
${spokeEntries.join('\n')}
    },
  });
}
`;
}

/** The conversion's test: objects written in each spoke read back in the hub and in the spoke, through the authority. */
export function conversionTestFile(r: ApiResource, spokes: string[]): string {
  const path = (v: string) =>
    r.namespaced
      ? `/apis/${r.qualifiedGroup}/${v}/namespaces/default/${r.plural}`
      : `/apis/${r.qualifiedGroup}/${v}/${r.plural}`;
  const tests = spokes.map(
    (v) => `
test('a ${r.kind} written in ${v} is stored in ${r.version} and reads back the same in ${v}', async () => {
  const name = 'from-${v}';
  await client.create('${path(v)}', { apiVersion: '${r.qualifiedGroup}/${v}', kind: '${r.kind}', metadata: { name }, spec: { foo: 'bar' } });
  const hub = await client.get<{ apiVersion: string; spec: object }>(\`${path(r.version)}/\${name}\`);
  assert.equal(hub.apiVersion, '${r.qualifiedGroup}/${r.version}');
  assert.deepEqual(hub.spec, { foo: 'bar' });
  const back = await client.get<{ apiVersion: string; spec: object }>(\`${path(v)}/\${name}\`);
  assert.equal(back.apiVersion, '${r.qualifiedGroup}/${v}');
  assert.deepEqual(back.spec, { foo: 'bar' });
});`,
  );
  const prelude = authorityWebhookTestPrelude({
    doc: `The ${r.kind} conversion called by ctrlmetrics' embedded authority, as a cluster's API server calls it (what
 * envtest does for Go): the test environment points the CRD's conversion at the manager's /convert with a serving
 * certificate it makes; reads and writes in another version than the stored one go through it.`,
    imports: [`import { ${conversionFunction(r)} } from '${importPath(conversionTestPath(r), conversionPath(r))}';`],
    install: `{ manifests: [], conversions: ['${r.plural}.${r.qualifiedGroup}'] }`,
    add: `${conversionFunction(r)}()`,
    testPath: conversionTestPath(r),
  });
  return `${prelude}${tests.join('\n')}
`;
}

/** kubebuilder's `config/crd/patches/webhook_in_<plural>.yaml`: the CRD converted by the webhook Service's /convert. */
export function crdConversionPatch(r: ApiResource): string {
  return `# The following patch enables a conversion webhook for the CRD: the API server calls the webhook Service's
# /convert (kustomize renames the Service and its namespace) to convert ${r.kind} between its versions.
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${r.plural}.${r.qualifiedGroup}
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          namespace: system
          name: webhook-service
          path: /convert
      conversionReviewVersions:
      - v1
`;
}

/** `config/crd/kustomizeconfig.yaml`: the CRDs' conversion webhook names the webhook Service and its namespace. */
export function crdKustomizeConfig(): string {
  return `# Tells kustomize that a CRD's conversion webhook names the webhook Service, so the namePrefix and namespace that
# rename the Service rename its reference too.
nameReference:
- kind: Service
  version: v1
  fieldSpecs:
  - kind: CustomResourceDefinition
    version: v1
    group: apiextensions.k8s.io
    path: spec/conversion/webhook/clientConfig/service/name

namespace:
- kind: CustomResourceDefinition
  version: v1
  group: apiextensions.k8s.io
  path: spec/conversion/webhook/clientConfig/service/namespace
  create: false
`;
}

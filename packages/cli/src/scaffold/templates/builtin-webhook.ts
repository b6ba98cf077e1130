/**
 * What `ctrlmetrics create webhook` writes for a built-in kind (a Pod, a Deployment, …): the defaulting and
 * validation webhooks at controller-runtime's paths (`/mutate--v1-pod` for the core group), typed by
 * `kubernetes-types`, with `+kubebuilder:webhook` markers for the real group and resource, and a test in which the
 * authority calls them for an object of the kind.
 */
import type { BuiltinKind } from '../builtin-kinds.js';
import { constantName } from './api.js';
import { authorityWebhookTestPrelude, type WebhookKinds } from './webhook.js';
import { WEBHOOK_PORT } from './params.js';

export const builtinWebhookPath = (k: BuiltinKind) => `src/webhooks/${k.version}/${k.kind.toLowerCase()}-webhook.ts`;
export const builtinWebhookTestPath = (k: BuiltinKind) => `test/webhooks/${k.kind.toLowerCase()}-webhook.test.ts`;
export const builtinWebhookFunction = (k: BuiltinKind) => `new${k.kind}Webhook`;

/** controller-runtime's path of a kind's webhook: `/<prefix>-<group, dots as dashes>-<version>-<kind>`. */
function pathOf(k: BuiltinKind, prefix: 'mutate' | 'validate'): string {
  return `/${prefix}-${k.group.replaceAll('.', '-')}-${k.version}-${k.kind.toLowerCase()}`;
}

/** The webhook's name in the configuration (kubebuilder's `m<kind>-<version>.kb.io`). */
const hookName = (k: BuiltinKind, mutating: boolean) =>
  `${mutating ? 'm' : 'v'}${k.kind.toLowerCase()}-${k.version}.kb.io`;

function marker(k: BuiltinKind, mutating: boolean): string {
  return `// +kubebuilder:webhook:path=${pathOf(k, mutating ? 'mutate' : 'validate')},mutating=${mutating},failurePolicy=fail,sideEffects=None,groups=${k.rbacGroup},resources=${k.plural},verbs=create;update,versions=${k.version},name=${hookName(k, mutating)},admissionReviewVersions=v1`;
}

/** The label the scaffold's example webhooks set and check: the project's domain names it. */
const labelOf = (domain: string) => `${domain}/defaulted`;

export function builtinWebhookFile(k: BuiltinKind, w: WebhookKinds, domain: string): string {
  const c = constantName(k.kind);
  const type = k.typesModule ? k.kind : 'KubeObject';
  const lib = [
    'Webhook',
    ...(w.validation ? ['AdmissionDeniedError', 'type Warnings'] : []),
    ...(k.typesModule ? [] : ['type KubeObject']),
  ];
  const defaulter = w.defaulting
    ? `
    // ${pathOf(k, 'mutate')}: change the object; the API server stores what the defaulter leaves
    defaulter: {
      default(obj) {
        // TODO(user): your defaults. This scaffold marks the ${k.kind} with DEFAULTED_LABEL.
        const metadata = (obj.metadata ??= {});
        (metadata.labels ??= {})[DEFAULTED_LABEL] ??= 'true';
      },
    },`
    : '';
  const validator = w.validation
    ? `
    // ${pathOf(k, 'validate')}: return warnings, throw to refuse
    validator: {
      validateCreate: (obj) => validate(obj),
      validateUpdate: (_oldObj, obj) => validate(obj),
      // called only once the marker's verbs include delete
      validateDelete: () => undefined,
    },`
    : '';
  return `/**
 * The ${k.kind} webhooks (${k.apiVersion}, a built-in kind of Kubernetes), served by the manager's webhook server on
 * :${WEBHOOK_PORT}. The API server calls them for every ${k.kind} of the cluster that the configuration's rules
 * match, and with failurePolicy=fail refuses those writes while the manager is down: narrow them (a namespace or
 * object selector in config/webhook) before you deploy.
 */
import { ${lib.join(', ')} } from 'ctrlmetrics';
${k.typesModule ? `import type { ${k.kind} } from '${k.typesModule}';\n` : ''}
/** The kind the webhooks are for. */
export const ${c} = { apiVersion: '${k.apiVersion}', kind: '${k.kind}' } as const;

/** The label the scaffold's example webhooks set and check. */
export const DEFAULTED_LABEL = '${labelOf(domain)}';

// Where the API server calls them; \`npm run manifests\` writes config/webhook/manifests.yaml from these markers.
${[...(w.defaulting ? [marker(k, true)] : []), ...(w.validation ? [marker(k, false)] : [])].join('\n')}
${
  w.validation
    ? `
/** TODO(user): your validation. This scaffold refuses a ${k.kind} whose DEFAULTED_LABEL is not "true". */
function validate(obj: ${type}): Warnings {
  const value = obj.metadata?.labels?.[DEFAULTED_LABEL];
  if (value !== undefined && value !== 'true') {
    throw AdmissionDeniedError.invalid({ group: '${k.group}', kind: '${k.kind}' }, obj.metadata?.name ?? '', [
      { field: \`metadata.labels[\${DEFAULTED_LABEL}]\`, message: \`Invalid value: \${JSON.stringify(value)}: must be "true"\` },
    ]);
  }
  return undefined;
}
`
    : ''
}
/** The webhooks; src/main.ts adds them to the manager. */
export function ${builtinWebhookFunction(k)}(): Webhook<${type}> {
  return new Webhook<${type}>({
    for: ${c},${defaulter}${validator}
  });
}
`;
}

export function builtinWebhookTestFile(
  k: BuiltinKind,
  w: WebhookKinds,
  sample: Record<string, unknown>,
  domain: string,
): string {
  const base = k.group ? `/apis/${k.group}/${k.version}` : `/api/${k.version}`;
  const collection = `${base}${k.namespaced ? '/namespaces/default' : ''}/${k.plural}`;
  const name = String((sample.metadata as { name: string }).name);
  const withName = (n: string, labels?: Record<string, string>) =>
    JSON.stringify({ ...sample, metadata: { ...(sample.metadata as object), name: n, ...(labels ? { labels } : {}) } });
  const tests: string[] = [];
  if (w.defaulting) {
    tests.push(`
test('the defaulter marks a new ${k.kind} with DEFAULTED_LABEL', async () => {
  const stored = await client.create<{ metadata: { labels?: Record<string, string> } }>('${collection}', ${withName(`${name}-defaulted`)});
  assert.equal(stored.metadata.labels?.[DEFAULTED_LABEL], 'true');
});`);
  }
  if (w.validation) {
    tests.push(`
test('the validator refuses a ${k.kind} whose DEFAULTED_LABEL is not "true", with its message', async () => {
  await assert.rejects(client.create('${collection}', ${withName(`${name}-refused`, { [labelOf(domain)]: 'no' })}), (err: Error) => {
    assert.equal(err.message, \`admission webhook "${hookName(k, false)}" denied the request: ${k.kind}${k.group ? `.${k.group}` : ''} "${name}-refused" is invalid: metadata.labels[\${DEFAULTED_LABEL}]: Invalid value: "no": must be "true"\`);
    return true;
  });
});`);
  }
  const fromWebhook = [builtinWebhookFunction(k), 'DEFAULTED_LABEL'];
  const prelude = authorityWebhookTestPrelude({
    doc: `The ${k.kind} webhooks called by ctrlmetrics' embedded authority, as a cluster's API server calls them (what
 * envtest's WebhookInstallOptions does for Go): the test environment makes the serving certificate and installs
 * config/webhook pointed at the manager's webhook server; writes of ${k.kind}s then go through the webhooks.`,
    imports: [
      `import { ${fromWebhook.join(', ')} } from '../../src/webhooks/${k.version}/${k.kind.toLowerCase()}-webhook.js';`,
    ],
    install: `{ manifests: [join(ROOT, 'config/webhook')] }`,
    add: `${builtinWebhookFunction(k)}()`,
    crds: false,
  });
  return `${prelude}${tests.join('\n')}
`;
}

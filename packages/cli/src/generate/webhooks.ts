/**
 * The webhook configurations from `+kubebuilder:webhook` markers, as controller-gen's `webhook` generator writes
 * `config/webhook/manifests.yaml`: one MutatingWebhookConfiguration and one ValidatingWebhookConfiguration
 * (each only when it has webhooks), webhooks sorted by name, each calling the `webhook-service` Service in
 * `system` at its path (kustomize renames both), with no caBundle (cert-manager injects it).
 */
import { MarkerError, type Marker } from './markers.js';

const FAILURE_POLICIES: Record<string, string> = { fail: 'Fail', ignore: 'Ignore' };
const MATCH_POLICIES: Record<string, string> = { exact: 'Exact', equivalent: 'Equivalent' };
const SIDE_EFFECTS: Record<string, string> = {
  none: 'None',
  noneondryrun: 'NoneOnDryRun',
  some: 'Some',
  unknown: 'Unknown',
};
const REINVOCATION: Record<string, string> = { never: 'Never', ifneeded: 'IfNeeded' };
const VERBS: Record<string, string> = {
  create: 'CREATE',
  update: 'UPDATE',
  delete: 'DELETE',
  connect: 'CONNECT',
  '*': '*',
};

function pick(m: Marker, what: string, table: Record<string, string>, value: unknown): string {
  const v = table[String(value).toLowerCase()];
  if (!v)
    throw new MarkerError(
      m,
      `${what} must be one of ${[...new Set(Object.values(table))].join(', ')}; got ${JSON.stringify(value)}`,
    );
  return v;
}

function webhookOf(m: Marker): Record<string, unknown> {
  const a = m.value as Record<string, unknown>;
  if ((a.path === undefined) === (a.url === undefined))
    throw new MarkerError(m, 'exactly one of path and url must be set');
  if (a.path !== undefined && !String(a.path).startsWith('/'))
    throw new MarkerError(m, `path must start with "/", got ${JSON.stringify(a.path)}`);
  if (a.sideEffects === undefined)
    throw new MarkerError(
      m,
      'sideEffects is required (None or NoneOnDryRun): the API server refuses a v1 webhook without it',
    );
  const service = {
    name: String(a.serviceName ?? 'webhook-service'),
    namespace: String(a.serviceNamespace ?? 'system'),
    path: a.path,
    ...(a.servicePort !== undefined ? { port: a.servicePort } : {}),
  };
  const groups = (a.groups as string[]).map((g) => (g === 'core' ? '' : g));
  const operations = (a.verbs as string[]).map((v) => pick(m, 'verbs', VERBS, v));
  return {
    admissionReviewVersions: a.admissionReviewVersions,
    clientConfig: a.url !== undefined ? { url: a.url } : { service },
    ...(a.failurePolicy !== undefined
      ? { failurePolicy: pick(m, 'failurePolicy', FAILURE_POLICIES, a.failurePolicy) }
      : {}),
    ...(a.matchPolicy !== undefined ? { matchPolicy: pick(m, 'matchPolicy', MATCH_POLICIES, a.matchPolicy) } : {}),
    name: a.name,
    ...(a.reinvocationPolicy !== undefined
      ? { reinvocationPolicy: pick(m, 'reinvocationPolicy', REINVOCATION, a.reinvocationPolicy) }
      : {}),
    rules: [{ apiGroups: groups, apiVersions: a.versions, operations, resources: a.resources }],
    sideEffects: pick(m, 'sideEffects', SIDE_EFFECTS, a.sideEffects),
    ...(a.timeoutSeconds !== undefined ? { timeoutSeconds: a.timeoutSeconds } : {}),
  };
}

/** The configurations of the markers (mutating first); none without markers. */
export function generateWebhookConfigurations(markers: Marker[]): Array<Record<string, unknown>> {
  const byKind: Record<'mutating' | 'validating', Array<Record<string, unknown>>> = { mutating: [], validating: [] };
  const names = new Map<string, Marker>();
  for (const m of markers) {
    const a = m.value as Record<string, unknown>;
    const kind = a.mutating ? 'mutating' : 'validating';
    const key = `${kind}/${String(a.name)}`;
    if (names.has(key))
      throw new MarkerError(
        m,
        `webhook ${JSON.stringify(a.name)} is defined twice (also at ${names.get(key)!.file}:${names.get(key)!.line})`,
      );
    names.set(key, m);
    byKind[kind].push(webhookOf(m));
  }
  const out: Array<Record<string, unknown>> = [];
  for (const kind of ['mutating', 'validating'] as const) {
    if (!byKind[kind].length) continue;
    out.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration',
      metadata: { name: `${kind}-webhook-configuration` },
      webhooks: byKind[kind].sort((x, y) =>
        String(x.name) < String(y.name) ? -1 : String(x.name) > String(y.name) ? 1 : 0,
      ),
    });
  }
  return out;
}

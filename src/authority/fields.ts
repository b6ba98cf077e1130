/**
 * Unknown-field detection for the `fieldValidation` query parameter (kubectl sends `Strict`; kube's default is
 * `Warn`): the top-level fields and `metadata` fields of the built-in kinds. A typo such as `metdata:` or `rule:`
 * is therefore rejected (Strict, 400) or reported in a `Warning` header (Warn), as kube-apiserver does. Nested
 * fields and custom resources are not checked.
 */
import { badRequest } from './status.js';
import { typeKey, type KubeObject, type ResourceType } from './resources.js';

const COMMON = ['apiVersion', 'kind', 'metadata'];
const METADATA = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

const TOP_LEVEL: Record<string, string[]> = {
  namespaces: ['spec', 'status'],
  serviceaccounts: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
  services: ['spec', 'status'],
  configmaps: ['data', 'binaryData', 'immutable'],
  secrets: ['data', 'stringData', 'type', 'immutable'],
  'deployments.apps': ['spec', 'status'],
  'clusterroles.rbac.authorization.k8s.io': ['rules', 'aggregationRule'],
  'roles.rbac.authorization.k8s.io': ['rules'],
  'clusterrolebindings.rbac.authorization.k8s.io': ['subjects', 'roleRef'],
  'rolebindings.rbac.authorization.k8s.io': ['subjects', 'roleRef'],
  'networkpolicies.networking.k8s.io': ['spec'],
  'leases.coordination.k8s.io': ['spec'],
  'mutatingwebhookconfigurations.admissionregistration.k8s.io': ['webhooks'],
  'validatingwebhookconfigurations.admissionregistration.k8s.io': ['webhooks'],
  'customresourcedefinitions.apiextensions.k8s.io': ['spec', 'status'],
};

/** Unknown field paths of an object body of a built-in kind (`[]` for custom resources and non-objects). */
export function unknownFields(t: ResourceType, body: unknown): string[] {
  const known = TOP_LEVEL[typeKey(t)];
  if (!known || t.crd || !body || typeof body !== 'object' || Array.isArray(body)) return [];
  const o = body as KubeObject;
  // `$…` keys are strategic-merge-patch directives
  const out = Object.keys(o).filter((k) => !k.startsWith('$') && !COMMON.includes(k) && !known.includes(k));
  if (o.metadata && typeof o.metadata === 'object' && !Array.isArray(o.metadata)) {
    for (const k of Object.keys(o.metadata)) if (!k.startsWith('$') && !METADATA.has(k)) out.push(`metadata.${k}`);
  }
  return out;
}

/**
 * Applies the `fieldValidation` directive: `Strict` → 400 naming the unknown fields; `Warn` (the default) → the
 * `Warning` header values to send; `Ignore` → nothing. An unknown directive is a 400, as in kube.
 */
export function checkFields(t: ResourceType, body: unknown, directive: string | null): string[] {
  const mode = directive || 'Warn';
  if (!['Strict', 'Warn', 'Ignore'].includes(mode)) {
    throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got ${JSON.stringify(mode)}`);
  }
  if (mode === 'Ignore') return [];
  const unknown = unknownFields(t, body);
  if (!unknown.length) return [];
  const list = unknown.map((f) => `unknown field ${JSON.stringify(f)}`);
  if (mode === 'Strict') {
    throw badRequest(`${t.kind} in version ${JSON.stringify(t.version)} cannot be handled as a ${t.kind}: strict decoding error: ${list.join(', ')}`);
  }
  return list.map((w) => `299 - ${JSON.stringify(w)}`);
}

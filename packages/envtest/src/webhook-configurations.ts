/**
 * `admissionregistration.k8s.io/v1` MutatingWebhookConfiguration and ValidatingWebhookConfiguration: the defaults
 * kube-apiserver fills in and its validation, with its field paths, messages and order (per webhook: name, rules,
 * failurePolicy, matchPolicy, sideEffects, timeoutSeconds, reinvocationPolicy, clientConfig, then
 * admissionReviewVersions and a duplicate name). Calling the webhooks is not done here.
 */
import type { KubeObject } from './types.js';
import { isRecord, record, type JsonObject } from './json.js';
import type { FieldCause } from './status.js';
import { validateName } from './validation.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REINVOCATION = ['IfNeeded', 'Never'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** Go's `%#v` of a []string, as kube prints an invalid list. */
export function goStrings(xs: unknown[]): string {
  return `[]string{${xs.map((x) => JSON.stringify(String(x))).join(', ')}}`;
}

const unsupported = (field: string, value: unknown, allowed: string[]): FieldCause => ({
  field,
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  reason: 'FieldValueNotSupported',
});
const required = (field: string, detail = ''): FieldCause => ({
  field,
  message: detail ? `Required value: ${detail}` : 'Required value',
  reason: 'FieldValueRequired',
});
const invalidValue = (field: string, value: string, detail: string): FieldCause => ({
  field,
  message: `Invalid value: ${value}: ${detail}`,
});

/** Fills in kube-apiserver's v1 defaults, in the field order kube writes them. */
export function defaultWebhookConfiguration(o: KubeObject, mutating: boolean): void {
  if (!Array.isArray(o.webhooks)) return;
  o.webhooks = o.webhooks.map((w: unknown) => {
    if (!isRecord(w)) return w;
    const rules = Array.isArray(w.rules)
      ? w.rules.map((r: unknown) => (isRecord(r) ? { ...r, scope: r.scope ?? '*' } : r))
      : w.rules;
    const cc = record(w.clientConfig);
    const clientConfig = isRecord(cc?.service)
      ? { ...cc, service: { ...cc.service, port: cc.service.port ?? 443 } }
      : w.clientConfig;
    const out: JsonObject = {
      name: w.name,
      clientConfig,
      ...(rules !== undefined ? { rules } : {}),
      failurePolicy: w.failurePolicy ?? 'Fail',
      matchPolicy: w.matchPolicy ?? 'Equivalent',
      namespaceSelector: w.namespaceSelector ?? {},
      objectSelector: w.objectSelector ?? {},
      ...(w.sideEffects !== undefined ? { sideEffects: w.sideEffects } : {}),
      timeoutSeconds: w.timeoutSeconds ?? 10,
      ...(w.admissionReviewVersions !== undefined ? { admissionReviewVersions: w.admissionReviewVersions } : {}),
      ...(mutating ? { reinvocationPolicy: w.reinvocationPolicy ?? 'Never' } : {}),
    };
    // fields this module does not know are kept as sent
    for (const [k, v] of Object.entries(w)) if (!(k in out)) out[k] = v;
    return out;
  });
}

/** One list of a rule: required, and `*` alone. */
function wildcardList(field: string, xs: unknown, what: string): FieldCause[] {
  if (!Array.isArray(xs) || xs.length === 0) return [required(field)];
  if (xs.includes('*') && xs.length > 1)
    return [invalidValue(field, goStrings(xs), `if '*' is present, must not specify other ${what}`)];
  return [];
}

function ruleCauses(rule: JsonObject | undefined, path: string): FieldCause[] {
  const causes: FieldCause[] = [];
  const ops = rule?.operations;
  if (!Array.isArray(ops) || ops.length === 0) causes.push(required(`${path}.operations`));
  else {
    if (ops.includes('*') && ops.length > 1)
      causes.push(
        invalidValue(`${path}.operations`, goStrings(ops), "if '*' is present, must not specify other operations"),
      );
    ops.forEach((op: unknown, k: number) => {
      if (!OPERATIONS.includes(String(op))) causes.push(unsupported(`${path}.operations[${k}]`, op, OPERATIONS));
    });
  }
  causes.push(...wildcardList(`${path}.apiGroups`, rule?.apiGroups, 'API groups'));
  causes.push(...wildcardList(`${path}.apiVersions`, rule?.apiVersions, 'API versions'));
  const resources = rule?.resources;
  if (!Array.isArray(resources) || resources.length === 0) causes.push(required(`${path}.resources`));
  else if (resources.includes('*/*') && resources.length > 1)
    causes.push(
      invalidValue(`${path}.resources`, goStrings(resources), "if '*/*' is present, must not specify other resources"),
    );
  if (rule?.scope !== undefined && !SCOPES.includes(String(rule.scope)))
    causes.push(unsupported(`${path}.scope`, rule.scope, SCOPES));
  return causes;
}

export function clientConfigCauses(cc: JsonObject | undefined, path: string): FieldCause[] {
  const url = typeof cc?.url === 'string' && cc.url !== '' ? cc.url : undefined;
  const svc = record(cc?.service);
  if (!!url === !!svc) return [required(path, 'exactly one of url or service is required')];
  if (url) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return [invalidValue(`${path}.url`, JSON.stringify(url), 'host must be specified')];
    }
    const scheme = u.protocol.replace(/:$/, '');
    if (scheme !== 'https')
      return [
        invalidValue(
          `${path}.url`,
          JSON.stringify(scheme),
          "'https' is the only allowed URL scheme; desired format: https://host[/path]",
        ),
      ];
    if (u.username || u.password)
      return [invalidValue(`${path}.url`, JSON.stringify(u.username), 'user information is not permitted in the URL')];
    if (u.search)
      return [
        invalidValue(`${path}.url`, JSON.stringify(u.search.slice(1)), 'query parameters are not permitted in the URL'),
      ];
    if (u.hash)
      return [invalidValue(`${path}.url`, JSON.stringify(u.hash.slice(1)), 'fragments are not permitted in the URL')];
    return [];
  }
  if (!svc) return [];
  const causes: FieldCause[] = [];
  if (!svc.namespace) causes.push(required(`${path}.service.namespace`, 'service namespace is required'));
  if (!svc.name) causes.push(required(`${path}.service.name`, 'service name is required'));
  const port = svc.port ?? 443;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535)
    causes.push(
      invalidValue(`${path}.service.port`, String(port), 'port is not valid: must be between 1 and 65535, inclusive'),
    );
  if (svc.path !== undefined && svc.path !== '' && !String(svc.path).startsWith('/'))
    causes.push(invalidValue(`${path}.service.path`, JSON.stringify(svc.path), "must start with a '/'"));
  return causes;
}

function reviewVersionCauses(versions: unknown, path: string): FieldCause[] {
  if (!Array.isArray(versions) || versions.length === 0)
    return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const causes: FieldCause[] = [];
  const seen = new Set<string>();
  versions.forEach((v: unknown, k: number) => {
    if (seen.has(String(v))) causes.push(invalidValue(`${path}[${k}]`, JSON.stringify(v), 'duplicate version'));
    seen.add(String(v));
  });
  if (!versions.some((v) => REVIEW_VERSIONS.includes(String(v))))
    causes.push(invalidValue(path, goStrings(versions), `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return causes;
}

/** kube-apiserver's validation of a webhook configuration (after defaulting). */
export function validateWebhookConfiguration(o: KubeObject, mutating: boolean): FieldCause[] {
  const causes: FieldCause[] = [];
  const webhooks: unknown[] = Array.isArray(o.webhooks) ? o.webhooks : [];
  const names = new Set<string>();
  webhooks.forEach((raw, i) => {
    const w = record(raw) ?? {};
    const path = `webhooks[${i}]`;
    const name = typeof w.name === 'string' ? w.name : '';
    if (!name) causes.push(required(`${path}.name`));
    else {
      const bad = validateName(name, 'subdomain');
      if (bad.length) for (const e of bad) causes.push(invalidValue(`${path}.name`, JSON.stringify(name), e));
      else if (name.split('.').length < 3)
        causes.push(
          invalidValue(
            `${path}.name`,
            JSON.stringify(name),
            'should be a domain with at least three segments separated by dots',
          ),
        );
    }
    (Array.isArray(w.rules) ? w.rules : []).forEach((r: unknown, j: number) =>
      causes.push(...ruleCauses(record(r), `${path}.rules[${j}]`)),
    );
    if (!FAILURE_POLICIES.includes(String(w.failurePolicy)))
      causes.push(unsupported(`${path}.failurePolicy`, w.failurePolicy, FAILURE_POLICIES));
    if (!MATCH_POLICIES.includes(String(w.matchPolicy)))
      causes.push(unsupported(`${path}.matchPolicy`, w.matchPolicy, MATCH_POLICIES));
    if (w.sideEffects === undefined)
      causes.push(required(`${path}.sideEffects`, `must specify one of ${SIDE_EFFECTS.join(', ')}`));
    else if (!SIDE_EFFECTS.includes(String(w.sideEffects)))
      causes.push(unsupported(`${path}.sideEffects`, w.sideEffects, SIDE_EFFECTS));
    const timeout = w.timeoutSeconds;
    if (!(typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 1 && timeout <= 30))
      causes.push(
        invalidValue(`${path}.timeoutSeconds`, String(timeout), 'the timeout value must be between 1 and 30 seconds'),
      );
    if (mutating && !REINVOCATION.includes(String(w.reinvocationPolicy)))
      causes.push(unsupported(`${path}.reinvocationPolicy`, w.reinvocationPolicy, REINVOCATION));
    causes.push(...clientConfigCauses(record(w.clientConfig), `${path}.clientConfig`));
    causes.push(...reviewVersionCauses(w.admissionReviewVersions, `${path}.admissionReviewVersions`));
    if (name) {
      if (names.has(name))
        causes.push({
          field: `${path}.name`,
          message: `Duplicate value: ${JSON.stringify(name)}`,
          reason: 'FieldValueDuplicate',
        });
      names.add(name);
    }
  });
  return causes;
}

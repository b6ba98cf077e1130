/**
 * The validation kube-apiserver 1.25 runs on built-in workloads that users hit first: a workload's selector is
 * required, not empty, matches its pod template's labels and never changes; a pod template has containers, each
 * with a name and an image, and a restart policy its owner allows. Texts and paths are kube's (values printed as
 * Go prints the internal types); test/authority/builtin-workloads.suite.ts holds them to a real server's answers.
 * Everything else about built-in objects is stored as written.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FieldCause } from './status.js';
import type { KubeObject } from './types.js';
import { isRecord, record, type JsonObject } from './json.js';

type Obj = JsonObject;

const isObj = isRecord;

/** Go's `%#v` of a `map[string]string` (keys sorted, as Go prints maps). */
function goStringMap(m: unknown): string {
  if (!isObj(m)) return 'map[string]string(nil)';
  return `map[string]string{${Object.keys(m)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(String(m[k]))}`)
    .join(', ')}}`;
}

/** Go's `%#v` of a `metav1.LabelSelector`. */
function goLabelSelector(s: Obj): string {
  const expressions = Array.isArray(s.matchExpressions)
    ? `[]v1.LabelSelectorRequirement{${s.matchExpressions
        .filter(isObj)
        .map(
          (e) =>
            `v1.LabelSelectorRequirement{Key:${JSON.stringify(String(e.key ?? ''))}, Operator:${JSON.stringify(String(e.operator ?? ''))}, Values:${Array.isArray(e.values) ? `[]string{${e.values.map((v: unknown) => JSON.stringify(String(v))).join(', ')}}` : '[]string(nil)'}}`,
        )
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${goStringMap(s.matchLabels)}, MatchExpressions:${expressions}}`;
}

/** Whether a label selector selects a set of labels (`matchLabels` and `matchExpressions`). */
function selects(s: Obj, labels: Record<string, unknown>): boolean {
  if (isObj(s.matchLabels) && !Object.entries(s.matchLabels).every(([k, v]) => labels[k] === v)) return false;
  for (const e of Array.isArray(s.matchExpressions) ? s.matchExpressions.filter(isObj) : []) {
    const key = String(e.key ?? '');
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    const has = Object.prototype.hasOwnProperty.call(labels, key);
    const ok =
      e.operator === 'In'
        ? has && values.includes(String(labels[key]))
        : e.operator === 'NotIn'
          ? !has || !values.includes(String(labels[key]))
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

/** A pod template's containers and restart policy. */
function podTemplateCauses(template: unknown, at: string, restartPolicies: string[]): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = isObj(template) && isObj(template.spec) ? template.spec : {};
  const containers = Array.isArray(spec.containers) ? spec.containers : [];
  if (!containers.length)
    causes.push({ field: `${at}.spec.containers`, message: 'Required value', reason: 'FieldValueRequired' });
  containers.forEach((c: unknown, i: number) => {
    const container = isObj(c) ? c : {};
    if (!container.name)
      causes.push({
        field: `${at}.spec.containers[${i}].name`,
        message: 'Required value',
        reason: 'FieldValueRequired',
      });
    if (!container.image)
      causes.push({
        field: `${at}.spec.containers[${i}].image`,
        message: 'Required value',
        reason: 'FieldValueRequired',
      });
  });
  const policy = spec.restartPolicy;
  if (typeof policy === 'string' && !restartPolicies.includes(policy)) {
    causes.push({
      field: `${at}.spec.restartPolicy`,
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: ${restartPolicies.map((p) => JSON.stringify(p)).join(', ')}`,
      reason: 'FieldValueNotSupported',
    });
  }
  return causes;
}

/** The kinds whose selector must select their template, and the word kube's "empty selector" text uses for them. */
const WORKLOADS: Record<string, string> = {
  'apps/deployments': 'deployment',
  'apps/replicasets': 'deployment',
  'apps/statefulsets': 'statefulset',
  'apps/daemonsets': 'daemonset',
};

function workloadCauses(kindWord: string, o: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  const selector = spec.selector;
  const template = isObj(spec.template) ? spec.template : undefined;
  const rawLabels = template && isObj(template.metadata) ? template.metadata.labels : undefined;
  const labels = isObj(rawLabels) ? rawLabels : {};
  if (!isObj(selector)) {
    causes.push({ field: 'spec.selector', message: 'Required value', reason: 'FieldValueRequired' });
    // kube reads a missing selector as one that selects nothing, so the template does not match it either
    causes.push({
      field: 'spec.template.metadata.labels',
      message: `Invalid value: ${goStringMap(rawLabels)}: \`selector\` does not match template \`labels\``,
      reason: 'FieldValueInvalid',
    });
  } else if (
    !Object.keys(selector.matchLabels ?? {}).length &&
    !(Array.isArray(selector.matchExpressions) && selector.matchExpressions.length)
  ) {
    causes.push({
      field: 'spec.selector',
      message: `Invalid value: ${goLabelSelector(selector)}: empty selector is invalid for ${kindWord}`,
      reason: 'FieldValueInvalid',
    });
  } else if (!selects(selector, labels)) {
    causes.push({
      field: 'spec.template.metadata.labels',
      message: `Invalid value: ${goStringMap(rawLabels)}: \`selector\` does not match template \`labels\``,
      reason: 'FieldValueInvalid',
    });
  }
  causes.push(...podTemplateCauses(template, 'spec.template', ['Always']));
  if (
    old &&
    isObj(selector) &&
    isObj(record(old.spec)?.selector) &&
    !isDeepStrictEqual(selector, record(old.spec)?.selector)
  ) {
    causes.push({
      field: 'spec.selector',
      message: `Invalid value: ${goLabelSelector(selector)}: field is immutable`,
      reason: 'FieldValueInvalid',
    });
  }
  return causes;
}

function jobCauses(o: KubeObject, old: KubeObject | undefined): FieldCause[] {
  const causes: FieldCause[] = [];
  const spec = isObj(o.spec) ? o.spec : {};
  const template = isObj(spec.template) ? spec.template : undefined;
  const rawLabels = template && isObj(template.metadata) ? template.metadata.labels : undefined;
  const labels = isObj(rawLabels) ? rawLabels : {};
  if (!isObj(spec.selector))
    causes.push({ field: 'spec.selector', message: 'Required value', reason: 'FieldValueRequired' });
  else if (!selects(spec.selector, labels)) {
    causes.push({
      field: 'spec.template.metadata.labels',
      message: `Invalid value: ${goStringMap(rawLabels)}: \`selector\` does not match template \`labels\``,
      reason: 'FieldValueInvalid',
    });
  }
  const policy = template && isObj(template.spec) ? template.spec.restartPolicy : undefined;
  if (policy === undefined || policy === 'Always') {
    // a Job's pods must end: kube names the two policies that let them
    causes.push({
      field: 'spec.template.spec.restartPolicy',
      message: `Unsupported value: ${JSON.stringify(policy ?? '')}: supported values: "OnFailure", "Never"`,
      reason: 'FieldValueNotSupported',
    });
  }
  causes.push(
    ...podTemplateCauses(template, 'spec.template', ['Always', 'OnFailure', 'Never']).filter(
      (c) => !c.field.endsWith('.restartPolicy'),
    ),
  );
  if (
    old &&
    isObj(spec.selector) &&
    isObj(record(old.spec)?.selector) &&
    !isDeepStrictEqual(spec.selector, record(old.spec)?.selector)
  ) {
    causes.push({
      field: 'spec.selector',
      message: `Invalid value: ${goLabelSelector(spec.selector)}: field is immutable`,
      reason: 'FieldValueInvalid',
    });
  }
  return causes;
}

/** The causes of a 422 for a built-in object of `group`/`resource`; `old` is the stored object on an update. */
export function validateBuiltin(
  group: string,
  resource: string,
  o: KubeObject,
  old: KubeObject | undefined,
): FieldCause[] {
  const key = `${group}/${resource}`;
  if (WORKLOADS[key]) return workloadCauses(WORKLOADS[key], o, old);
  if (key === 'batch/jobs') return jobCauses(o, old);
  if (key === 'batch/cronjobs') {
    const spec = isObj(o.spec) ? o.spec : {};
    const causes: FieldCause[] = [];
    // a CronJob's name prefixes its Jobs' names, which take 11 characters more: kube checks it on create
    const name = String(o.metadata?.name ?? '');
    if (!old && name.length > 52)
      causes.push({
        field: 'metadata.name',
        message: `Invalid value: ${JSON.stringify(name)}: must be no more than 52 characters`,
        reason: 'FieldValueInvalid',
      });
    if (!spec.schedule)
      causes.push({ field: 'spec.schedule', message: 'Required value', reason: 'FieldValueRequired' });
    const template =
      isObj(spec.jobTemplate) && isObj(spec.jobTemplate.spec) ? spec.jobTemplate.spec.template : undefined;
    causes.push(...podTemplateCauses(template, 'spec.jobTemplate.spec.template', ['OnFailure', 'Never']));
    return causes;
  }
  return [];
}

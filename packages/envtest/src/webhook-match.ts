/**
 * Which admission webhooks a write reaches, as kube-apiserver decides it: namespace selector, object selector, then
 * the rules (operation, group, version, resource and subresource with kube's wildcards, scope), with
 * `matchPolicy: Equivalent` trying the other served versions of the same resource. Pure: the caller supplies the
 * namespace's labels and the other versions.
 */
import type { KubeObject } from './types.js';
import { labelSelectorMatches, type LabelSelector } from './rbac.js';

/** One admission attribute set: what is written, by which operation, where. */
export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  group: string;
  version: string;
  resource: string;
  /** `''` for the main resource. */
  subresource: string;
  /** `''` for cluster-scoped objects (for a Namespace: its own name, as kube sends it). */
  namespace: string;
  object: KubeObject | null;
  oldObject: KubeObject | null;
}

/** A rule of a webhook (`rules[]`), already defaulted. */
export interface WebhookRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

const has = (xs: string[] | undefined, v: string): boolean => !!xs && (xs.includes('*') || xs.includes(v));

/**
 * Whether a `resources` entry names this resource/subresource: `x` is x alone, `*` every resource but no
 * subresource, `x/*` x and all its subresources, `*\/y` subresource y of everything (kube's matcher).
 */
function resourceMatches(entries: string[] | undefined, resource: string, subresource: string): boolean {
  for (const e of entries ?? []) {
    const slash = e.indexOf('/');
    const res = slash < 0 ? e : e.slice(0, slash);
    const sub = slash < 0 ? '' : e.slice(slash + 1);
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource)) return true;
  }
  return false;
}

function scopeMatches(scope: string | undefined, a: AdmissionAttributes): boolean {
  const isNamespaceObject = a.group === '' && a.resource === 'namespaces';
  switch (scope ?? '*') {
    case 'Namespaced':
      return a.namespace !== '' && !isNamespaceObject;
    case 'Cluster':
      return a.namespace === '' || isNamespaceObject;
    default:
      return true;
  }
}

/** Whether one rule matches the attributes (all of its parts must). */
export function ruleMatches(rule: WebhookRule, a: AdmissionAttributes): boolean {
  return (
    scopeMatches(rule.scope, a) &&
    has(rule.operations, a.operation) &&
    has(rule.apiGroups, a.group) &&
    has(rule.apiVersions, a.version) &&
    resourceMatches(rule.resources, a.resource, a.subresource)
  );
}

/**
 * Whether the object selector matches: the object's or the old object's labels (an object without labels has an
 * empty set, which `DoesNotExist` matches; a missing object never matches a non-empty selector).
 */
export function objectSelectorMatches(selector: LabelSelector | undefined, a: AdmissionAttributes): boolean {
  if (isEmptySelector(selector)) return true;
  const matches = (o: KubeObject | null) =>
    !!o && typeof o === 'object' && labelSelectorMatches(selector!, o.metadata?.labels ?? {});
  return matches(a.object) || matches(a.oldObject);
}

/** Whether a selector is empty (`{}`), which matches everything without looking at labels. */
export function isEmptySelector(selector: LabelSelector | undefined | null): boolean {
  return (
    !selector ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
  );
}

/**
 * The version a webhook is called with, or undefined when its rules do not match: the request's own version, else
 * (with `matchPolicy: Equivalent`) the first of `otherVersions` a rule matches, tried rule by rule.
 */
export function matchedVersion(
  webhook: { rules?: WebhookRule[]; matchPolicy?: string },
  a: AdmissionAttributes,
  otherVersions: string[],
): string | undefined {
  const rules = webhook.rules ?? [];
  if (rules.some((r) => ruleMatches(r, a))) return a.version;
  if ((webhook.matchPolicy ?? 'Equivalent') !== 'Equivalent') return undefined;
  for (const r of rules) {
    for (const v of otherVersions) if (v !== a.version && ruleMatches(r, { ...a, version: v })) return v;
  }
  return undefined;
}

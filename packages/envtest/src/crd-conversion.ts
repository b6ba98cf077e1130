/**
 * A CustomResourceDefinition's conversion settings and version deprecation, as kube-apiserver defaults and validates
 * them: `spec.conversion` defaults to `{strategy: None}` and a service's port to 443; `Webhook` needs a client
 * config (exactly one of url or service) and review versions including v1 or v1beta1, `None` allows neither; the
 * field paths are apiextensions' internal ones (`spec.conversion.webhookClientConfig`,
 * `spec.conversion.conversionReviewVersions`), as kube prints them. Also what a deprecated version warns.
 */
import { isRecord, record, records, type JsonObject } from './json.js';
import type { KubeObject } from './types.js';
import type { FieldCause } from './status.js';
import { clientConfigCauses, goStrings } from './webhook-configurations.js';

const STRATEGIES = ['None', 'Webhook'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

/** kube's defaults of `spec.conversion` (filled in at decoding, so before validation). */
export function defaultConversion(spec: JsonObject): void {
  spec.conversion ??= { strategy: 'None' };
  const c = spec.conversion;
  if (!isRecord(c)) return;
  c.strategy ??= 'None';
  const service = record(record(record(c.webhook)?.clientConfig)?.service);
  if (service) service.port ??= 443;
}

/** The problems of `spec.conversion`, `spec.preserveUnknownFields` and the versions' deprecation warnings. */
export function conversionCauses(spec: JsonObject): FieldCause[] {
  const causes: FieldCause[] = [];
  const versions: unknown[] = Array.isArray(spec.versions) ? spec.versions : [];
  versions.forEach((v, i) => {
    if (isRecord(v) && v.deprecationWarning !== undefined && v.deprecationWarning !== null && !v.deprecated) {
      causes.push({
        field: `spec.versions[${i}].deprecationWarning`,
        message: `Invalid value: ${JSON.stringify(v.deprecationWarning)}: can only be set for deprecated versions`,
      });
    }
  });
  const c = spec.conversion;
  if (isRecord(c)) {
    const path = 'spec.conversion';
    if (typeof c.strategy !== 'string' || !STRATEGIES.includes(c.strategy)) {
      causes.push({
        field: `${path}.strategy`,
        message: `Unsupported value: ${JSON.stringify(c.strategy)}: supported values: ${STRATEGIES.map((x) => JSON.stringify(x)).join(', ')}`,
        reason: 'FieldValueNotSupported',
      });
    }
    if (spec.preserveUnknownFields === true && c.strategy !== 'None') {
      causes.push({
        field: `${path}.strategy`,
        message: `Invalid value: ${JSON.stringify(c.strategy)}: must be None if spec.preserveUnknownFields is true`,
      });
    }
    const clientConfig = record(c.webhook)?.clientConfig;
    const reviewVersions = record(c.webhook)?.conversionReviewVersions;
    if (c.strategy === 'Webhook') {
      if (!isRecord(clientConfig))
        causes.push({
          field: `${path}.webhookClientConfig`,
          message: 'Required value: required when strategy is set to Webhook',
          reason: 'FieldValueRequired',
        });
      else causes.push(...clientConfigCauses(clientConfig, `${path}.webhookClientConfig`));
      if (!Array.isArray(reviewVersions) || reviewVersions.length === 0)
        causes.push({
          field: `${path}.conversionReviewVersions`,
          message: 'Required value',
          reason: 'FieldValueRequired',
        });
      else {
        const seen = new Set<string>();
        reviewVersions.forEach((v: unknown, k: number) => {
          if (seen.has(String(v)))
            causes.push({
              field: `${path}.conversionReviewVersions[${k}]`,
              message: `Invalid value: ${JSON.stringify(v)}: duplicate version`,
            });
          seen.add(String(v));
        });
        if (!reviewVersions.some((v: unknown) => REVIEW_VERSIONS.includes(String(v)))) {
          causes.push({
            field: `${path}.conversionReviewVersions`,
            message: `Invalid value: ${goStrings(reviewVersions)}: must include at least one of ${REVIEW_VERSIONS.join(', ')}`,
          });
        }
      }
    } else {
      if (clientConfig !== undefined && clientConfig !== null)
        causes.push({
          field: `${path}.webhookClientConfig`,
          message: 'Forbidden: should not be set when strategy is not set to Webhook',
          reason: 'FieldValueForbidden',
        });
      if (Array.isArray(reviewVersions) && reviewVersions.length > 0)
        causes.push({
          field: `${path}.conversionReviewVersions`,
          message: 'Forbidden: should not be set when strategy is not set to Webhook',
          reason: 'FieldValueForbidden',
        });
    }
  }
  if (spec.preserveUnknownFields === true) {
    causes.push({
      field: 'spec.preserveUnknownFields',
      message:
        'Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    });
  }
  return causes;
}

/** kube-apiserver's version priority: GA over beta over alpha, higher numbers first, other names last by name. */
export function versionPriority(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return { rank: 0, major: 0, minor: 0, name: v };
    return {
      rank: m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1,
      major: Number(m[1]),
      minor: Number(m[3] ?? 0),
      name: v,
    };
  };
  const x = parse(a);
  const y = parse(b);
  if (x.rank !== y.rank) return y.rank - x.rank;
  if (x.rank === 0) return x.name < y.name ? -1 : x.name > y.name ? 1 : 0;
  if (x.major !== y.major) return y.major - x.major;
  return y.minor - x.minor;
}

/**
 * The warning a request to a deprecated version gets: the version's `deprecationWarning`, or kube's default naming
 * the served, non-deprecated version of highest priority when it ranks above this one.
 */
export function deprecationWarningOf(crd: KubeObject, version: string): string | undefined {
  const spec = record(crd.spec) ?? {};
  const versions = records(spec.versions);
  const v = versions.find((x) => x.name === version);
  if (!v?.deprecated) return undefined;
  if (typeof v.deprecationWarning === 'string') return v.deprecationWarning;
  const kind = String(record(spec.names)?.kind);
  const group = String(spec.group);
  let warning = `${group}/${version} ${kind} is deprecated`;
  const preferred = versions
    .filter((x) => x.served && !x.deprecated)
    .map((x) => String(x.name))
    .sort(versionPriority)[0];
  if (preferred && versionPriority(preferred, version) < 0) warning += `; use ${group}/${preferred} ${kind}`;
  return warning;
}

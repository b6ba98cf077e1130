/**
 * Name validation with the Kubernetes rules and messages (DNS-1123 subdomain/label, DNS-1035 label, path segment).
 */
import type { NameRule } from './resources.js';

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Problems with a name under a rule (empty when valid). */
export function validateName(name: string, rule: NameRule): string[] {
  const errs: string[] = [];
  switch (rule) {
    case 'label':
      if (name.length > 63) errs.push('must be no more than 63 characters');
      if (!LABEL.test(name))
        errs.push(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        );
      break;
    case 'label1035':
      if (name.length > 63) errs.push('must be no more than 63 characters');
      if (!LABEL1035.test(name))
        errs.push(
          "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        );
      break;
    case 'subdomain':
      if (name.length > 253) errs.push('must be no more than 253 characters');
      if (!SUBDOMAIN.test(name))
        errs.push(
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        );
      break;
    case 'path':
      if (name === '.' || name === '..') errs.push(`may not be '${name}'`);
      if (name.includes('/')) errs.push("may not contain '/'");
      if (name.includes('%')) errs.push("may not contain '%'");
      break;
  }
  return errs;
}

const LABEL_KEY_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Problems with `metadata.labels` (empty when valid). */
export function validateLabels(labels: unknown): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  if (labels === undefined || labels === null) return out;
  if (typeof labels !== 'object' || Array.isArray(labels)) return [{ field: 'metadata.labels', message: 'Invalid value: must be a map of strings' }];
  for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
    const slash = k.lastIndexOf('/');
    const prefix = slash >= 0 ? k.slice(0, slash) : '';
    const name = slash >= 0 ? k.slice(slash + 1) : k;
    if (name.length === 0 || name.length > 63 || !LABEL_KEY_NAME.test(name) || (slash >= 0 && (prefix.length > 253 || !SUBDOMAIN.test(prefix)))) {
      out.push({ field: 'metadata.labels', message: `Invalid value: ${JSON.stringify(k)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
    }
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      out.push({ field: `metadata.labels`, message: `Invalid value: ${JSON.stringify(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character` });
    }
  }
  return out;
}

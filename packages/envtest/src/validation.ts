/**
 * Name validation with the Kubernetes rules and messages (DNS-1123 subdomain/label, DNS-1035 label, path segment).
 */
import type { NameRule } from './types.js';

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
  if (typeof labels !== 'object' || Array.isArray(labels))
    return [{ field: 'metadata.labels', message: 'Invalid value: must be a map of strings' }];
  for (const [k, v] of Object.entries(labels as Record<string, unknown>)) {
    const slash = k.lastIndexOf('/');
    const prefix = slash >= 0 ? k.slice(0, slash) : '';
    const name = slash >= 0 ? k.slice(slash + 1) : k;
    if (
      name.length === 0 ||
      name.length > 63 ||
      !LABEL_KEY_NAME.test(name) ||
      (slash >= 0 && (prefix.length > 253 || !SUBDOMAIN.test(prefix)))
    ) {
      out.push({
        field: 'metadata.labels',
        message: `Invalid value: ${JSON.stringify(k)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      });
    }
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      out.push({
        field: `metadata.labels`,
        message: `Invalid value: ${JSON.stringify(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      });
    }
  }
  return out;
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/** Problems with a qualified name (`[prefix/]name`, as finalizers and label keys), in kube's words. */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  if (parts.length > 2)
    return [
      `a qualified name ${QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  const errs: string[] = [];
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length === 2) {
    const prefix = parts[0];
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else for (const e of validateName(prefix, 'subdomain')) errs.push(`prefix part ${e}`);
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 bytes');
  if (name.length > 0 && !QUALIFIED_NAME.test(name)) errs.push(`name part ${QUALIFIED_NAME_MSG}`);
  return errs;
}

/** The finalizers kube's garbage collector sets for the `Orphan` and `Foreground` propagation policies. */
const ORPHAN_FINALIZER = 'orphan';
const FOREGROUND_FINALIZER = 'foregroundDeletion';

/** Problems with `metadata.finalizers`, as kube's ObjectMeta validation reports them; `old` on an update. */
export function validateFinalizers(
  finalizers: unknown,
  old: { finalizers?: unknown; deletionTimestamp?: unknown } | undefined,
): Array<{ field: string; message: string; reason?: string }> {
  if (finalizers === undefined || finalizers === null) return [];
  if (!Array.isArray(finalizers) || finalizers.some((f) => typeof f !== 'string'))
    return [{ field: 'metadata.finalizers', message: 'Invalid value: must be a list of strings' }];
  const out: Array<{ field: string; message: string; reason?: string }> = [];
  for (const f of finalizers as string[])
    for (const e of qualifiedNameErrors(f))
      out.push({ field: 'metadata.finalizers', message: `Invalid value: ${JSON.stringify(f)}: ${e}` });
  if (finalizers.includes(ORPHAN_FINALIZER) && finalizers.includes(FOREGROUND_FINALIZER)) {
    out.push({
      field: 'metadata.finalizers',
      message: `Invalid value: []string{${(finalizers as string[]).map((f) => JSON.stringify(f)).join(', ')}}: finalizer ${ORPHAN_FINALIZER} and ${FOREGROUND_FINALIZER} cannot be both set`,
    });
  }
  if (old?.deletionTimestamp) {
    const before = new Set(Array.isArray(old.finalizers) ? (old.finalizers as string[]) : []);
    const added = [...new Set(finalizers as string[])].filter((f) => !before.has(f)).sort();
    if (added.length) {
      out.push({
        field: 'metadata.finalizers',
        reason: 'FieldValueForbidden',
        message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
      });
    }
  }
  return out;
}

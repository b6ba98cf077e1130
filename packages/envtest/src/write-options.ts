/**
 * The query options of writes as kube-apiserver validates them before anything else (`CreateOptions`,
 * `UpdateOptions`, `PatchOptions` in meta.k8s.io): `dryRun`, `fieldManager`, `fieldValidation`, `force`. A problem is
 * a 422 naming the options kind, e.g. `PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: …`.
 */
import { invalid, type ApiError, type FieldCause } from './status.js';

/** kube's limit on a field manager's name, in bytes. */
export const FIELD_MANAGER_MAX_BYTES = 128;

const FIELD_VALIDATION = ['', 'Ignore', 'Strict', 'Warn'];

/** Go's `%#U` of a rune: `U+000A`, or `U+0041 'A'` when printable. */
function goRune(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Unicode's printable characters as Go's `unicode.IsPrint` sees them: letters, marks, numbers, punctuation, symbols, and ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

export interface WriteQuery {
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';
  dryRun: string[];
  fieldManager: string | null;
  fieldValidation: string | null;
  /** `force` was given (PATCH only). */
  force: boolean;
  /** A server-side apply (`application/apply-patch+yaml`). */
  apply: boolean;
}

/** The 422 for invalid write options, or undefined when they are fine. */
export function writeOptionsError(q: WriteQuery): ApiError | undefined {
  const causes: FieldCause[] = [];
  if (q.kind === 'PatchOptions') {
    if (!q.apply && q.force)
      causes.push({
        field: 'force',
        message: 'Forbidden: may not be specified for non-apply patch',
        reason: 'FieldValueForbidden',
      });
    if (q.apply && !q.fieldManager)
      causes.push({
        field: 'fieldManager',
        message: 'Required value: is required for apply patch',
        reason: 'FieldValueRequired',
      });
  }
  const manager = q.fieldManager ?? '';
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_BYTES) {
    causes.push({
      field: 'fieldManager',
      message: `Too long: may not be more than ${FIELD_MANAGER_MAX_BYTES} bytes`,
      reason: 'FieldValueTooLong',
    });
  }
  let at = 0;
  for (const ch of manager) {
    if (!PRINTABLE.test(ch))
      causes.push({
        field: 'fieldManager',
        message: `Invalid value: ${JSON.stringify(manager)}: invalid character ${goRune(ch.codePointAt(0)!)} (at position ${at})`,
      });
    at += Buffer.byteLength(ch);
  }
  if (q.dryRun.some((v) => v !== 'All')) {
    causes.push({
      field: 'dryRun',
      message: `Unsupported value: []string{${q.dryRun.map((v) => JSON.stringify(v)).join(', ')}}: supported values: "All"`,
      reason: 'FieldValueNotSupported',
    });
  }
  if (q.fieldValidation !== null && !FIELD_VALIDATION.includes(q.fieldValidation)) {
    causes.push({
      field: 'fieldValidation',
      message: `Unsupported value: ${JSON.stringify(q.fieldValidation)}: supported values: ${FIELD_VALIDATION.map((v) => JSON.stringify(v)).join(', ')}`,
      reason: 'FieldValueNotSupported',
    });
  }
  return causes.length ? invalid(q.kind, 'meta.k8s.io', '', causes) : undefined;
}

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'];

/**
 * The 422 for invalid `DeleteOptions` (from the body or the query), or undefined. The authority runs no garbage
 * collector (as envtest), so a valid `propagationPolicy` is accepted and changes nothing.
 */
export function deleteOptionsError(o: {
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
  dryRun?: unknown;
}): ApiError | undefined {
  const causes: FieldCause[] = [];
  const policy = o.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (o.orphanDependents !== undefined && o.orphanDependents !== null) {
      causes.push({
        field: 'propagationPolicy',
        message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set`,
      });
    }
    if (!PROPAGATION_POLICIES.includes(String(policy))) {
      causes.push({
        field: 'propagationPolicy',
        message: `Unsupported value: ${JSON.stringify(policy)}: supported values: ${[...PROPAGATION_POLICIES, 'nil'].map((v) => JSON.stringify(v)).join(', ')}`,
        reason: 'FieldValueNotSupported',
      });
    }
  }
  const dryRun = Array.isArray(o.dryRun) ? (o.dryRun as unknown[]).map(String) : [];
  if (dryRun.some((v) => v !== 'All')) {
    causes.push({
      field: 'dryRun',
      message: `Unsupported value: []string{${dryRun.map((v) => JSON.stringify(v)).join(', ')}}: supported values: "All"`,
      reason: 'FieldValueNotSupported',
    });
  }
  return causes.length ? invalid('DeleteOptions', 'meta.k8s.io', '', causes) : undefined;
}

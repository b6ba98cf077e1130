/** `--crds a,b` of `authority` and `demo`: the CRD set names the embedded API installs at start. */
import { CRD_SETS } from '@ctrlmetrics/envtest';
import { UsageError } from './errors.js';

/** The known set names, or a usage error (exit 2) listing them. */
export function crdsOption(value: string): string[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(n in CRD_SETS));
  if (unknown.length || names.length === 0) {
    throw new UsageError(
      `--crds ${JSON.stringify(value)}: unknown CRD set ${unknown.map((u) => JSON.stringify(u)).join(', ') || '(none given)'}; known: ${Object.keys(CRD_SETS).join(', ')}`,
    );
  }
  return [...new Set(names)];
}

/** `--crds a,b` of `authority` and `demo`: the CRD set names the embedded API installs at start. */
import { parseCrdSets } from '../authority/crds.js';
import { UsageError } from './errors.js';

/** The known set names, or a usage error (exit 2) listing them. */
export function crdsOption(value: string): string[] {
  try {
    return parseCrdSets(value);
  } catch (err) {
    throw new UsageError((err as Error).message, { cause: err });
  }
}

/** The digest the operator keeps in sync: SHA-256 over the sorted keys and values of a ConfigMap's data. */
import { createHash } from 'node:crypto';

/** Hex SHA-256 of `data` (keys sorted, so the order of keys in the object does not matter). */
export function dataDigest(data: Record<string, string> | undefined): string {
  const h = createHash('sha256');
  for (const key of Object.keys(data ?? {}).sort()) {
    h.update(key)
      .update('\0')
      .update(data![key] ?? '')
      .update('\0');
  }
  return h.digest('hex');
}

/** Labels and names shared by the controllers and the demo. */
export const MANAGED_LABEL = 'ctrlmetrics.dev/managed';
export const DIGEST_OF_LABEL = 'ctrlmetrics.dev/digest-of';
export const KEYS_ANNOTATION = 'ctrlmetrics.dev/keys';
export const digestName = (source: string) => `${source}-digest`;

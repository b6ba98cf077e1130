/**
 * Cache transforms (`cache.defaultTransform` or `cache.byObject[].transform` of the manager, `transform` of an informer): what to drop from objects
 * before they are cached, as controller-runtime's `cache.TransformStripManagedFields`.
 * @module
 */
import type { InformerObject } from './informer.js';

/**
 * Drops `metadata.managedFields`, which server-side apply fills with one entry per field manager and which often
 * outweighs the rest of an object; reconcilers rarely read it. An update of an object read from such a cache sends
 * no managedFields, which the API server takes as "unchanged".
 */
export function stripManagedFields<T extends InformerObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta && 'managedFields' in meta) delete meta.managedFields;
  return obj;
}

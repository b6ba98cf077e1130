/**
 * Read-only views of cached objects: a cached object handed out without a copy is frozen through and through, so a
 * reconcile that writes to it fails at once (a TypeError in ESM's strict mode) instead of silently changing what
 * every other reader of the cache sees.
 */

/** Freezes `value` and everything it holds (already-frozen parts are not walked again); answers it. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value as object)) deepFreeze(v);
  return value;
}

/**
 * Narrowing of plain JSON — request bodies, stored objects' fields — to the types a reader expects, so that a field
 * read from an object is checked where it is read rather than trusted. Each helper answers `undefined` (or an empty
 * list) for a value of another type, which callers treat as the field being absent.
 */

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** Whether `v` is a JSON object (not null, not an array). */
export function isRecord(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` if it is a JSON object, else `undefined`. */
export function record(v: unknown): JsonObject | undefined {
  return isRecord(v) ? v : undefined;
}

/** `v` if it is a string, else `undefined`. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `v` if it is a number, else `undefined`. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** `v` if it is an array, else an empty list. */
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The JSON objects of `v` if it is an array (other items left out), else an empty list. */
export function records(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter(isRecord) : [];
}

/** The strings of `v` if it is an array (other items left out), else an empty list. */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

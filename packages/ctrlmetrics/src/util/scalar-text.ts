/**
 * A value read from JSON or from another library, as text: a string as it is, a number, boolean or bigint as
 * `String()` writes it, anything else as JSON — so an object in the wrong place shows what it holds in a message or
 * a label rather than `[object Object]`.
 */
export function scalarText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v === undefined || v === null) return '';
  return JSON.stringify(v) ?? '';
}

/**
 * A deep copy of parsed JSON (objects, arrays, strings, numbers, booleans, null): what a reader may change without
 * touching the original — a cached object handed to a reconciler, an admission request's object handed to a
 * defaulter. Written out rather than `structuredClone`, which serialises and deserialises and costs several times
 * as much on the small objects of the Kubernetes API. A key named `__proto__` (JSON.parse makes it an own property)
 * stays an own property instead of setting the copy's prototype.
 */
export function copyJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = copyJson(v[i]);
    return out as T;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = copyJson((v as Record<string, unknown>)[k]);
    if (k === '__proto__')
      Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out as T;
}

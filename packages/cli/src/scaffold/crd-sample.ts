/**
 * A small object a CRD's schema accepts, for the test `create api --external-api-path` scaffolds: the fields the
 * schema requires, each with its default, its enum's first value, its minimum, or a placeholder of its type.
 */
type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function valueOf(s: unknown): unknown {
  if (!isObj(s)) return 'sample';
  if (s.default !== undefined) return structuredClone(s.default);
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (s['x-kubernetes-int-or-string'] === true) return 1;
  switch (s.type) {
    case 'string':
      return s.format === 'date-time' ? '2026-01-01T00:00:00Z' : 'sample';
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, 1) : 1;
    case 'boolean':
      return false;
    case 'array':
      return typeof s.minItems === 'number' && s.minItems > 0
        ? Array.from({ length: s.minItems }, () => valueOf(s.items))
        : [];
    default:
      return requiredFields(s);
  }
}

/** The required fields of an object schema, each with a value its schema accepts. */
function requiredFields(s: Json): Json {
  const props = isObj(s.properties) ? s.properties : {};
  const out: Json = {};
  for (const name of Array.isArray(s.required) ? s.required.map(String) : []) out[name] = valueOf(props[name]);
  return out;
}

/** The fields of a sample object beyond apiVersion, kind and metadata: what the root schema requires. */
export function sampleOfSchema(schema: Json): Json {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = requiredFields(schema);
  return rest;
}

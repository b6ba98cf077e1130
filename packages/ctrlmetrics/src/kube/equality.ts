/**
 * apimachinery's `equality.Semantic.DeepEqual` for objects as JSON: whether two objects mean the same, whatever
 * order their keys were written in.
 *
 * A real kube-apiserver writes map fields (`data`, `labels`, …) with their keys sorted, so an object read back
 * rarely has its keys in the order a program assigned them: comparing `JSON.stringify` outputs would see a change
 * where there is none and write again on every reconcile.
 * @module
 */

/**
 * Keys whose values are maps of resource quantities in the built-in types (`resources.limits`, a PVC's
 * `requests`, a node's `capacity`, a quota's `hard`, a LimitRange's `max`, …): there `"1"`, `"1000m"` and `"1.0"`
 * are the same quantity, as `resource.Quantity.Cmp` says. Elsewhere strings are compared as written.
 */
const QUANTITY_MAPS = new Set([
  'limits',
  'requests',
  'capacity',
  'allocatable',
  'hard',
  'used',
  'overhead',
  'max',
  'min',
  'default',
  'defaultRequest',
  'maxLimitRequestRatio',
]);
/** Keys whose value is one quantity. */
const QUANTITY_FIELDS = new Set(['sizeLimit']);

/**
 * Whether `a` and `b` are semantically equal, as controller-runtime's `equality.Semantic.DeepEqual`: object keys
 * in any order; a key that is missing, `null`, `{}` or `[]` on one side equals the same on the other (Go's nil and
 * empty maps and slices are equal and both omitted); list items in order; resource quantities under their
 * built-in keys compared by value (`"500m"` equals `"0.5"`). Everything else is compared strictly.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return equalAt(a, b, undefined);
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

function equalAt(a: unknown, b: unknown, key: string | undefined, inQuantityMap = false): boolean {
  if (a === b) return true;
  if (isEmpty(a) && isEmpty(b)) return true;
  if (typeof a === 'string' || typeof a === 'number') {
    if (
      (inQuantityMap || (key !== undefined && QUANTITY_FIELDS.has(key))) &&
      (typeof b === 'string' || typeof b === 'number')
    ) {
      return sameQuantity(a, b);
    }
    return false;
  }
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => equalAt(item, b[i], undefined));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const quantities = key !== undefined && QUANTITY_MAPS.has(key);
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    if (!equalAt(ao[k], bo[k], k, quantities)) return false;
  }
  return true;
}

/** A quantity as an exact value: `mantissa × 10^exp10 × 2^exp2`. */
interface ExactQuantity {
  mantissa: bigint;
  exp10: number;
  exp2: number;
}

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
// far beyond any quantity kube accepts; bounds the BigInt powers an exponent can ask for
const MAX_EXPONENT = 1000;

/**
 * Parses a Kubernetes quantity (`128Mi`, `500m`, `1.5`, `1e3`). Hand-written: comparing two quantities exactly
 * needs their value as a fraction, and the quantity helpers of the JavaScript Kubernetes clients convert to
 * floating-point numbers, where `0.1` and `100m` need not compare equal.
 */
export function parseQuantity(s: string | number): ExactQuantity | undefined {
  const text = typeof s === 'number' ? (Number.isFinite(s) ? String(s) : '') : s;
  const m = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(text);
  if (!m) return undefined;
  const [, sign, number, exponent, suffix = ''] = m;
  const [whole, fraction = ''] = number.split('.');
  const mantissa = BigInt(`${sign === '-' ? '-' : ''}${whole || '0'}${fraction}`);
  let exp10 = -fraction.length;
  let exp2 = 0;
  if (exponent) {
    const e = Number(exponent.slice(1));
    if (Math.abs(e) > MAX_EXPONENT) return undefined;
    exp10 += e;
  } else if (suffix in BINARY_SUFFIXES) exp2 = BINARY_SUFFIXES[suffix]!;
  else exp10 += DECIMAL_SUFFIXES[suffix];
  return { mantissa, exp10, exp2 };
}

/** Whether two quantities have the same value (`"500m"` and `"0.5"`); values that do not parse are compared as written. */
export function sameQuantity(a: string | number, b: string | number): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (!x || !y) return String(a) === String(b);
  const low10 = Math.min(x.exp10, y.exp10);
  const low2 = Math.min(x.exp2, y.exp2);
  const scaled = (q: ExactQuantity) => q.mantissa * 10n ** BigInt(q.exp10 - low10) * 2n ** BigInt(q.exp2 - low2);
  return scaled(x) === scaled(y);
}

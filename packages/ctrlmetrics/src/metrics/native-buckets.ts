/**
 * The arithmetic of native (sparse, exponential) histogram buckets, as client_golang computes it: the schema a
 * bucket factor gives, the bucket key of a value, the upper bound of a key, and the spans and deltas that encode
 * a set of buckets in protobuf.
 *
 * For positive schemas the key search uses client_golang's own table of bounds (native-bounds.ts).
 */
import { nativeBoundsTable } from './native-bounds.js';

/** Lowest and highest schema of native histograms. */
export const MIN_SCHEMA = -4;
export const MAX_SCHEMA = 8;

/** The bounds of schema `s` > 0: client_golang's `0.5 · 2^(j/2^s)` for j in [0, 2^s) (see native-bounds.ts). */
export function positiveSchemaBounds(s: number): Float64Array {
  return nativeBoundsTable()[s];
}

/**
 * The schema of a bucket factor (> 1): `-floor(log2(log2(factor)))`, clamped to [-4, 8], as client_golang.
 * (At factors of exactly 2^(2^-n) the result follows V8's rounding of log2, as client_golang's follows Go's.)
 */
export function schemaForFactor(factor: number): number {
  const s = -Math.floor(Math.log2(Math.log2(factor)));
  if (s > MAX_SCHEMA) return MAX_SCHEMA;
  if (s < MIN_SCHEMA) return MIN_SCHEMA;
  return s === 0 ? 0 : s;
}

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
// little-endian: u32[1] holds the sign, exponent and top 20 bits of the mantissa
const HI = 1;

/** Go's `math.Frexp` of a finite, positive `v`: `[frac, exp]` with v = frac · 2^exp and frac in [0.5, 1). */
export function frexp(v: number): [number, number] {
  f64[0] = v;
  let e = (u32[HI] >>> 20) & 0x7ff;
  let shift = 0;
  if (e === 0) {
    // subnormal: scale into the normal range first
    f64[0] = v * 2 ** 64;
    e = (u32[HI] >>> 20) & 0x7ff;
    shift = 64;
  }
  const exp = e - 1022 - shift;
  // set the exponent field to that of [0.5, 1)
  u32[HI] = (u32[HI] & 0x800fffff) | (1022 << 20);
  return [f64[0], exp];
}

/** First index i with bounds[i] ≥ frac (Go's `sort.SearchFloat64s`). */
function lowerBound(bounds: Float64Array, frac: number): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (bounds[mid] < frac) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The bucket key of `|v|` (v outside the zero bucket, not NaN) at `schema`: bucket k holds
 * (2^((k-1)·2^-s), 2^(k·2^-s)]. ±Inf count in the bucket after that of ±MaxFloat64, as in client_golang.
 */
export function bucketKey(v: number, schema: number): number {
  const abs = Math.abs(v);
  const inf = abs === Infinity;
  const [frac, exp] = frexp(inf ? Number.MAX_VALUE : abs);
  let key: number;
  if (schema > 0) {
    const bounds = positiveSchemaBounds(schema);
    key = lowerBound(bounds, frac) + (exp - 1) * bounds.length;
  } else {
    key = frac === 0.5 ? exp - 1 : exp;
    const div = 2 ** -schema;
    key = Math.floor((key + div - 1) / div);
  }
  return inf ? key + 1 : key;
}

/** The upper bound of bucket `key` at `schema`: 2^(key · 2^-schema). */
export function bucketUpperBound(key: number, schema: number): number {
  if (schema > 0) {
    const bounds = positiveSchemaBounds(schema);
    const n = bounds.length;
    // key = j + (exp-1)·n holds (bounds[j-1]·2^exp, bounds[j]·2^exp]; its upper bound is bounds[j]·2^exp
    const j = ((key % n) + n) % n;
    const exp = (key - j) / n + 1;
    return bounds[j] * 2 ** exp;
  }
  return 2 ** (key * 2 ** -schema);
}

/** A protobuf `BucketSpan`. */
export interface BucketSpan {
  offset: number;
  length: number;
}

/**
 * Spans and deltas of a set of buckets (key → count), as client_golang writes them: keys sorted; the first span at
 * the first key; gaps of up to 2 missing keys filled with empty buckets, larger ones start a new span whose offset
 * is the number of keys skipped; each delta the count minus the previous one (the first from 0), across spans.
 */
export function spansAndDeltas(buckets: ReadonlyMap<number, number>): { spans: BucketSpan[]; deltas: number[] } {
  const keys = [...buckets.keys()].sort((a, b) => a - b);
  const spans: BucketSpan[] = [];
  const deltas: number[] = [];
  let prevKey = 0;
  let prevCount = 0;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    const count = buckets.get(key)!;
    const gap = i === 0 ? 0 : key - prevKey - 1;
    if (i === 0) spans.push({ offset: key, length: 0 });
    else if (gap > 2) spans.push({ offset: gap, length: 0 });
    else {
      for (let g = 0; g < gap; g++) {
        deltas.push(0 - prevCount);
        prevCount = 0;
        spans[spans.length - 1].length++;
      }
    }
    spans[spans.length - 1].length++;
    deltas.push(count - prevCount);
    prevCount = count;
    prevKey = key;
  }
  return { spans, deltas };
}

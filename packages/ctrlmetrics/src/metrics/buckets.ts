/** Histogram bucket helpers (the same series as client_golang's `LinearBuckets` and `ExponentialBuckets`). */

/** The default buckets: .005 … 10 seconds. */
export const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * `count` buckets, the first `start`, each `width` more than the previous one. The bounds are accumulated
 * (`b += width`), not computed as `start + i * width`, so they are bit for bit client_golang's
 * (`linearBuckets(0.1, 0.1, 10)` has 0.7999999999999999, as Go's) and Go and TypeScript series line up in queries.
 */
export function linearBuckets(start: number, width: number, count: number): number[] {
  if (!(count >= 1) || !Number.isInteger(count)) throw new RangeError('linearBuckets needs a positive integer count');
  const out: number[] = [];
  let v = start;
  for (let i = 0; i < count; i++) {
    out.push(v);
    v += width;
  }
  return out;
}

/** `count` buckets, the first `start`, each `factor` times the previous one (accumulated, as client_golang's). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  if (!(count >= 1) || !Number.isInteger(count))
    throw new RangeError('exponentialBuckets needs a positive integer count');
  if (!(start > 0)) throw new RangeError('exponentialBuckets needs a positive start');
  if (!(factor > 1)) throw new RangeError('exponentialBuckets needs a factor greater than 1');
  const out: number[] = [];
  let v = start;
  for (let i = 0; i < count; i++) {
    out.push(v);
    v *= factor;
  }
  return out;
}

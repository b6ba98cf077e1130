/**
 * The native (sparse) buckets of a histogram series, as client_golang keeps them: a schema from the bucket
 * factor, a zero bucket, positive and negative buckets by key; when there are more buckets than allowed, one step
 * per observation — a reset once the minimum reset duration has passed (else one is scheduled for then), a wider
 * zero bucket while the threshold may grow, or half the resolution.
 *
 * client_golang resets at the scheduled time with a timer; here the reset is applied at the first observation or
 * scrape after that time, dated at that time, which nobody can tell apart (no one sees the series in between) and
 * costs no timer per series.
 */
import { bucketKey, bucketUpperBound, MIN_SCHEMA, schemaForFactor } from './native-buckets.js';

/** client_golang's `DefNativeHistogramZeroThreshold`: 2^-128, the zero threshold when none is given. */
export const DEFAULT_NATIVE_HISTOGRAM_ZERO_THRESHOLD = 2 ** -128;
/** client_golang's `NativeHistogramZeroThresholdZero`: a zero threshold of exactly 0. */
export const NATIVE_HISTOGRAM_ZERO_THRESHOLD_ZERO = -1;

/** The native settings of a histogram, resolved from its options. */
export interface NativeConfig {
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly maxBucketNumber: number;
  /** ms; 0: never reset. */
  readonly minResetDurationMs: number;
  readonly maxZeroThreshold: number;
  readonly now: () => number;
}

/**
 * The options that make a histogram native: the `nativeHistogram*` fields of `HistogramOptions` (documented there),
 * and its clock. Written out rather than picked from `HistogramOptions`, so that this module does not import the
 * histogram, which imports it.
 */
export interface NativeOptions {
  nativeHistogramBucketFactor?: number;
  nativeHistogramZeroThreshold?: number;
  nativeHistogramMaxBucketNumber?: number;
  nativeHistogramMinResetDuration?: number;
  nativeHistogramMaxZeroThreshold?: number;
  now?: () => number;
}

/** The native configuration of these options, or undefined when the bucket factor does not make it native (≤ 1). */
export function nativeConfig(name: string, o: NativeOptions): NativeConfig | undefined {
  const factor = o.nativeHistogramBucketFactor ?? 0;
  if (!(factor > 1)) {
    if (factor !== 0 && !(factor <= 1))
      throw new TypeError(`histogram ${name}: nativeHistogramBucketFactor must be a number`);
    return undefined;
  }
  const num = (v: number | undefined, what: string): number => {
    if (v === undefined) return 0;
    if (typeof v !== 'number' || Number.isNaN(v)) throw new TypeError(`histogram ${name}: ${what} must be a number`);
    return v;
  };
  const zt = num(o.nativeHistogramZeroThreshold, 'nativeHistogramZeroThreshold');
  const max = num(o.nativeHistogramMaxBucketNumber, 'nativeHistogramMaxBucketNumber');
  const reset = num(o.nativeHistogramMinResetDuration, 'nativeHistogramMinResetDuration');
  if (!Number.isInteger(max) || max < 0)
    throw new TypeError(`histogram ${name}: nativeHistogramMaxBucketNumber must be a whole number ≥ 0 (0: no limit)`);
  if (reset < 0)
    throw new TypeError(`histogram ${name}: nativeHistogramMinResetDuration must be ≥ 0 ms (0: never reset)`);
  return {
    schema: schemaForFactor(factor),
    zeroThreshold: zt === 0 ? DEFAULT_NATIVE_HISTOGRAM_ZERO_THRESHOLD : zt < 0 ? 0 : zt,
    maxBucketNumber: max,
    minResetDurationMs: reset,
    maxZeroThreshold: num(o.nativeHistogramMaxZeroThreshold, 'nativeHistogramMaxZeroThreshold'),
    now: o.now ?? Date.now,
  };
}

/** The native part of one series. */
export interface NativeState {
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  positive: Map<number, number>;
  negative: Map<number, number>;
  /** Populated buckets, positive and negative. */
  buckets: number;
  /** When the series was created or last reset (ms). */
  lastReset: number;
  /** When a reset is due (ms), 0 when none is scheduled. */
  resetAt: number;
}

/** What a reset clears besides the native buckets: the series' classic part. */
export interface ResettableSeries {
  readonly counts: Float64Array;
  sum: number;
  count: number;
  created: number;
  native: NativeState | undefined;
}

export function newNativeState(cfg: NativeConfig, now: number): NativeState {
  return {
    schema: cfg.schema,
    zeroThreshold: cfg.zeroThreshold,
    zeroCount: 0,
    positive: new Map(),
    negative: new Map(),
    buckets: 0,
    lastReset: now,
    resetAt: 0,
  };
}

/** Clears the whole series (classic and native) as of `at`. */
function reset(s: ResettableSeries, cfg: NativeConfig, at: number): void {
  s.counts.fill(0);
  s.sum = 0;
  s.count = 0;
  s.native = newNativeState(cfg, at);
  s.created = at;
}

/** Applies a scheduled reset whose time has come (before an observation or a scrape). */
export function applyDueReset(s: ResettableSeries, cfg: NativeConfig): void {
  const n = s.native!;
  if (n.resetAt !== 0 && cfg.now() >= n.resetAt) reset(s, cfg, n.resetAt);
}

function add(map: Map<number, number>, key: number, by: number): boolean {
  const c = map.get(key);
  map.set(key, (c ?? 0) + by);
  return c === undefined;
}

/**
 * Counts `v` in the native buckets (the classic part has counted it already, after {@link applyDueReset}); NaN
 * counts only there. `observeClassic` counts it in the classic part again after a reset.
 */
export function observeNative(
  s: ResettableSeries,
  cfg: NativeConfig,
  v: number,
  observeClassic: (v: number) => void,
): void {
  const n = s.native!;
  if (v !== v) return;
  if (v > n.zeroThreshold) {
    if (add(n.positive, bucketKey(v, n.schema), 1)) n.buckets++;
  } else if (v < -n.zeroThreshold) {
    if (add(n.negative, bucketKey(v, n.schema), 1)) n.buckets++;
  } else n.zeroCount++;
  if (cfg.maxBucketNumber > 0 && n.buckets > cfg.maxBucketNumber) limitBuckets(s, cfg, v, observeClassic);
}

/** One step towards the bucket limit, in client_golang's order. */
function limitBuckets(s: ResettableSeries, cfg: NativeConfig, v: number, observeClassic: (v: number) => void): void {
  const n = s.native!;
  if (cfg.minResetDurationMs > 0) {
    const now = cfg.now();
    if (n.resetAt === 0 && now - n.lastReset >= cfg.minResetDurationMs) {
      reset(s, cfg, now);
      // the observation that went over the limit is kept, in the fresh series
      observeClassic(v);
      observeNative(s, cfg, v, observeClassic);
      return;
    }
    if (n.resetAt === 0) n.resetAt = n.lastReset + cfg.minResetDurationMs;
  }
  if (widenZeroBucket(n, cfg)) return;
  halveResolution(n);
}

function widenZeroBucket(n: NativeState, cfg: NativeConfig): boolean {
  if (n.zeroThreshold >= cfg.maxZeroThreshold) return false;
  let smallest = Infinity;
  for (const k of n.positive.keys()) if (k < smallest) smallest = k;
  for (const k of n.negative.keys()) if (k < smallest) smallest = k;
  if (smallest === Infinity) return false;
  const threshold = bucketUpperBound(smallest, n.schema);
  if (threshold > cfg.maxZeroThreshold) return false;
  n.zeroThreshold = threshold;
  for (const m of [n.positive, n.negative]) {
    const c = m.get(smallest);
    if (c !== undefined) {
      n.zeroCount += c;
      m.delete(smallest);
      n.buckets--;
    }
  }
  return true;
}

function halveResolution(n: NativeState): void {
  if (n.schema === MIN_SCHEMA) return;
  n.schema--;
  let buckets = 0;
  const merge = (m: Map<number, number>): Map<number, number> => {
    const out = new Map<number, number>();
    // bucket k of the finer schema lies in bucket ceil(k/2) of the coarser one
    for (const [k, c] of m) if (add(out, Math.ceil(k / 2), c)) buckets++;
    return out;
  };
  n.positive = merge(n.positive);
  n.negative = merge(n.negative);
  n.buckets = buckets;
}

/** Small statistics over repetitions. */

/** Median of the finite values; undefined when there are none. */
export function median(values: ReadonlyArray<number | null | undefined>): number | undefined {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** a / b, undefined unless both are finite and b is not 0. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return undefined;
  return a / b;
}

/** Three significant digits (integers above 1000 as is); '–' for missing values. */
export function fmt(x: number | undefined, digits = 3): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  if (Math.abs(x) >= 10 ** digits) return String(Math.round(x));
  return Number(x.toPrecision(digits)).toString();
}

/**
 * Ratios a/b of the repetitions that measured both (the alternated A/B pairs of one cell): machine noise that drifts
 * over seconds hits both runs of a pair alike, so their ratio is steadier than the ratio of two medians.
 */
export function pairedRatios(pairs: ReadonlyArray<readonly [number | undefined, number | undefined]>): number[] {
  return pairs.map(([a, b]) => ratio(a, b)).filter((r): r is number => r !== undefined);
}

/** "+1.2% (−3.0…+4.4%, 9 pairs)": the median change of paired ratios with their range; '–' when there are none. */
export function fmtPaired(ratios: readonly number[]): string {
  const m = median(ratios);
  if (m === undefined) return '–';
  const pct = (r: number) => `${r >= 1 ? '+' : '−'}${Math.abs((r - 1) * 100).toFixed(1)}%`;
  return `${pct(m)} (${pct(Math.min(...ratios))}…${pct(Math.max(...ratios))}, ${ratios.length} pairs)`;
}

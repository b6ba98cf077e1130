/** Small statistics over repetitions. */

/** Median of the finite values; undefined when there are none. */
export function median(values: ReadonlyArray<number | null | undefined>): number | undefined {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1]! + v[mid]!) / 2;
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

/** Sample values as text, the way client_golang writes them (its own module: the text sink and every format use it). */

/**
 * Formats a sample value as Go's expfmt does: `+Inf`, `-Inf`, `NaN`; integers without decimals; the shortest
 * representation that round-trips; exponent notation (`1e-05`, `1.5e+06`) when the decimal exponent is
 * below -4 or at least 6.
 */
export function formatFloat(v: number): string {
  // fast path: small integers, the common case for counters and bucket counts
  if (v === (v | 0) && v < 1e6 && v > -1e6) return '' + v;
  if (v !== v) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const a = v < 0 ? -v : v;
  // JSON.stringify spells a finite number exactly as String(v) does, but String(v) (and `'' + v`) goes through
  // V8's number-to-string cache, which allocates every string it caches in the old generation: the float sums of a
  // 10k scrape then filled ≈ 5 KB of old space per scrape, a mark-compact every 1–2 s under load and 8 MB more heap
  // committed between them (docs/performance-notes.md). JSON.stringify's string is young and dies young.
  if (a >= 1e-4 && a < 1e6) return JSON.stringify(v);
  return exponentForm(v);
}

function exponentForm(v: number): string {
  // JS gives the same shortest digits as Go; only the exponent spelling differs (`e+6` vs `e+06`)
  const s = v.toExponential();
  const e = s.indexOf('e');
  const mantissa = s.slice(0, e);
  const sign = s[e + 1];
  const digits = s.slice(e + 2);
  return `${mantissa}e${sign}${digits.length < 2 ? '0' + digits : digits}`;
}

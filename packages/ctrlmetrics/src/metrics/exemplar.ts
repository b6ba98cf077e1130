/**
 * Exemplars: a labelled sample (a trace id, a reconcile id) attached to a counter or a classic histogram bucket,
 * written in OpenMetrics after the sample (` # {trace_id="abc"} 0.2 1.7e+09`) and in protobuf (`Counter.exemplar`,
 * `Bucket.exemplar`); text 0.0.4 has none. As client_golang's `newExemplar`: label names are label names, values
 * valid UTF-8, and all names and values together at most 128 runes (OpenMetrics' limit).
 */
import {
  compareUtf8,
  escapeLabelValue,
  formatFloat,
  formatFloatLabel,
  validateLabelName,
  type ScalarCell,
} from './format.js';
import { isLegacyLabelName, quoteName } from './names.js';
import type { Exemplar } from './exposition-types.js';
export type { Exemplar } from './exposition-types.js';

/** OpenMetrics' limit on the runes of an exemplar's label names and values together. */
export const EXEMPLAR_MAX_RUNES = 128;

/** The labels an exemplar is given: label name → value. */
export type ExemplarLabels = Readonly<Record<string, string>>;

/**
 * What a metric's series share for their exemplars (one reference per series): the metric's name for errors, its
 * clock, and `on`, set once any series has an exemplar: until then OpenMetrics renders take the path without them.
 */
export interface ExemplarsUsed {
  readonly metric: string;
  readonly now: () => number;
  on: boolean;
}

/** With the `u` flag a surrogate pair is one code point, so this matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** Any UTF-16 surrogate: without one, a string's runes are its length. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** Code points (Go's runes) of `s`; -1 when it has a lone surrogate (no UTF-8 form). */
function runes(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  if (LONE_SURROGATE.test(s)) return -1;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Validates `labels` and makes the exemplar of `value` at `timestampMs`; throws a `TypeError`/`RangeError` saying what is wrong. */
export function newExemplar(labels: ExemplarLabels, value: number, timestampMs: number, metric: string): Exemplar {
  if (labels === null || typeof labels !== 'object')
    throw new TypeError(`metric ${metric}: exemplar labels must be an object of label name → value`);
  const pairs: Array<[string, string]> = [];
  let total = 0;
  for (const k in labels) {
    if (!Object.hasOwn(labels, k)) continue;
    const v = labels[k];
    if (!isLegacyLabelName(k) || k.startsWith('__')) {
      try {
        validateLabelName(k);
      } catch (err) {
        throw new TypeError(`metric ${metric}: exemplar ${(err as Error).message}`, { cause: err });
      }
    }
    const n = typeof v === 'string' ? runes(v) : -1;
    if (n < 0)
      throw new TypeError(`metric ${metric}: exemplar label ${k} needs a UTF-8 string value, got ${JSON.stringify(v)}`);
    total += runes(k) + n;
    pairs.push([k, v]);
  }
  if (total > EXEMPLAR_MAX_RUNES)
    throw new RangeError(
      `metric ${metric}: exemplar labels have ${total} runes, exceeding the limit of ${EXEMPLAR_MAX_RUNES}`,
    );
  if (typeof value !== 'number') throw new TypeError(`metric ${metric}: exemplar value must be a number`);
  // Go iterates its label map in random order; sorted here, so the same exemplar is always the same bytes
  if (pairs.length > 1) pairs.sort((a, b) => compareUtf8(a[0], b[0]));
  return { labels: pairs, value, timestampMs };
}

/**
 * ` # {k="v",…} value timestamp` to append to an OpenMetrics sample line (before its newline), or `''` for no
 * exemplar or one without labels (client_golang skips those). Names are not escaped by any scheme (as
 * client_golang); one that is not a legacy label name is quoted.
 */
export function openMetricsExemplar(e: Exemplar | undefined): string {
  if (e === undefined || e.labels.length === 0) return '';
  let s = ' # {';
  for (let i = 0; i < e.labels.length; i++) {
    const [k, v] = e.labels[i];
    if (i) s += ',';
    s += (isLegacyLabelName(k) ? k : quoteName(k)) + '="' + escapeLabelValue(v) + '"';
  }
  // seconds as client_golang computes them (UnixNano / 1e9, in floating point), so the digits are the same
  return s + '} ' + formatFloatLabel(e.value, true) + ' ' + formatFloatLabel((e.timestampMs * 1e6) / 1e9, true);
}

/** The index of the classic bucket an observation of `v` counts in (`bounds.length`: the `+Inf` bucket), as client_golang's `findBucket`. */
export function bucketOf(bounds: ArrayLike<number>, v: number): number {
  let i = 0;
  while (i < bounds.length && !(v <= bounds[i])) i++;
  return i;
}

/**
 * The sample lines of counters' or gauges' `cells[from..to)` when the fast path (`renderScalarLines`) does not
 * do: names to escape or quote (`start` builds each line's start), or OpenMetrics exemplars to append (`om`).
 */
export function renderScalarLinesSlow(
  cells: readonly ScalarCell[],
  from: number,
  to: number,
  start: (c: ScalarCell) => string,
  om: boolean,
): string {
  let s = '';
  for (let i = from; i < to; i++) {
    const c = cells[i];
    s += start(c) + formatFloat(c.value) + (om ? openMetricsExemplar(c.exemplar) : '') + '\n';
  }
  return s;
}

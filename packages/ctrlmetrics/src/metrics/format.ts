/**
 * Text helpers shared by both exposition formats: float formatting as Go's `strconv.FormatFloat(v, 'g', -1, 64)`
 * (what client_golang writes), and the escaping rules of label values and HELP text.
 */
import type { TextSink } from './text-sink.js';
import type { Exemplar, LabelLayout } from './exposition-types.js';
export type { LabelLayout } from './exposition-types.js';

export { formatFloat } from './float-text.js';
import { formatFloat } from './float-text.js';

/**
 * Formats a float that appears as a label value (`le`, `quantile`). Text format: as {@link formatFloat}.
 * OpenMetrics: canonical form, integers get `.0` (`le="1.0"`), as client_golang writes them.
 */
export function formatFloatLabel(v: number, openMetrics: boolean): string {
  const s = formatFloat(v);
  if (openMetrics && Number.isInteger(v) && !s.includes('e')) return s + '.0';
  return s;
}

const LABEL_SPECIALS = /[\\"\n]/;

/** Escapes a label value: `\` → `\\`, `"` → `\"`, newline → `\n` (both formats). */
export function escapeLabelValue(v: string): string {
  if (!LABEL_SPECIALS.test(v)) return v;
  return v.replace(/[\\"\n]/g, (c) => (c === '\\' ? '\\\\' : c === '"' ? '\\"' : '\\n'));
}

/** Escapes HELP text: `\` and newline in text 0.0.4; OpenMetrics also escapes `"`. */
export function escapeHelp(help: string, openMetrics: boolean): string {
  const re = openMetrics ? /[\\"\n]/g : /[\\\n]/g;
  return help.replace(re, (c) => (c === '\\' ? '\\\\' : c === '"' ? '\\"' : '\\n'));
}

/** The {@link LabelLayout} of labels declared in this order. */
export function labelLayout(declared: readonly string[]): LabelLayout {
  const order = declared
    .map((_, i) => i)
    .sort((a, b) => (declared[a] < declared[b] ? -1 : declared[a] > declared[b] ? 1 : 0));
  if (order.every((d, i) => d === i)) return { names: declared, order: undefined };
  return { names: order.map((d) => declared[d]), order };
}

/**
 * Compares strings in the order of their UTF-8 bytes, which is Go's string order (JavaScript's `<` compares
 * UTF-16 code units, which puts U+E000–U+FFFF after the characters beyond U+FFFF). At the first differing unit
 * the code points decide; the units before it being equal, a low surrogate there follows the same high one.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length - b.length;
  return a.codePointAt(i)! - b.codePointAt(i)!;
}

/**
 * Orders series as client_golang writes them within a family: by their label values, compared label by label in
 * written (name) order. `values` are in declared order.
 */
export function compareSeries(layout: LabelLayout, a: readonly string[], b: readonly string[]): number {
  const { order } = layout;
  for (let i = 0; i < layout.names.length; i++) {
    const d = order ? order[i] : i;
    const c = compareUtf8(a[d], b[d]);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * `{a="x",b="y"}` for a layout and the (unescaped) values in declared order, with `extra` appended as a last,
 * already formatted pair (`le="0.5"`). Empty when there are no labels at all.
 */
export function labelString(layout: LabelLayout, values: readonly string[], extra?: string): string {
  const { names, order } = layout;
  let s = '';
  for (let i = 0; i < names.length; i++) {
    if (i) s += ',';
    s += names[i] + '="' + escapeLabelValue(values[order ? order[i] : i]) + '"';
  }
  if (extra !== undefined) s += (s ? ',' : '') + extra;
  return s ? '{' + s + '}' : '';
}

/**
 * A flat copy of a string built by concatenation. V8 keeps `a + b + …` as a tree of cons cells; a string cached
 * for the life of a series (its rendered labels) would keep the whole tree, several times its own size.
 */
export function flatten(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8');
}

/** `{a="x",b="y"} ` (with the trailing space), or `' '` without labels: the cached middle of a sample line. */
export function closedLabels(layout: LabelLayout, values: readonly string[]): string {
  return layout.names.length ? flatten(labelString(layout, values) + ' ') : ' ';
}

/**
 * The storage of a counter or gauge series: its value and its rendered label text. A metric re-allocates its
 * series' cells in exposition order whenever that order changes (see `Metric.view`), so a render walks memory in
 * order instead of hopping between series objects allocated in creation order (~15% of a 100k-line render).
 */
export interface ScalarCell {
  value: number;
  /** `{labels} ` (with the trailing space), `' '` without labels; empty until the metric first places the cell. */
  text: string;
  /** The label values in declared order (the series' own array). */
  readonly values: readonly string[];
  /** The label pairs as protobuf bytes, once a protobuf scrape has encoded them. */
  pb: Uint8Array | undefined;
  /** Unix ms when the series was created (counters: sent as the protobuf created timestamp); 0 for gauges. */
  readonly created: number;
  /** A counter's latest exemplar (`addWithExemplar`). */
  exemplar: Exemplar | undefined;
}

/** A new scalar cell; `created` 0 leaves the created timestamp out. */
export function scalarCell(values: readonly string[], created: number): ScalarCell {
  return { value: 0, text: values.length ? '' : ' ', values, pb: undefined, created, exemplar: undefined };
}

/** The same series in a new cell, its label text rendered (see `Metric.view` for why cells move). */
export function movedScalarCell(old: ScalarCell, layout: LabelLayout): ScalarCell {
  return {
    value: old.value,
    text: old.text || closedLabels(layout, old.values),
    values: old.values,
    pb: old.pb,
    created: old.created,
    exemplar: old.exemplar,
  };
}

/** The sample lines `name{labels} value` of `cells[from..to)`. */
export function renderScalarLines(name: string, cells: readonly ScalarCell[], from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) {
    const c = cells[i];
    s += name + c.text + formatFloat(c.value) + '\n';
  }
  return s;
}

/** {@link renderScalarLines} written to `out` as bytes. */
export function writeScalarLines(
  out: TextSink,
  name: Uint8Array,
  cells: readonly ScalarCell[],
  from: number,
  to: number,
): void {
  for (let i = from; i < to; i++) {
    const c = cells[i];
    out.bytes(name);
    out.text(c.text);
    out.number(c.value);
    out.byte(0x0a);
  }
}

/** `{a="x",b="y",` or `{`: the cached start of a labelled line whose last label (`le`) is appended per bucket. */
export function openLabels(layout: LabelLayout, values: readonly string[]): string {
  return layout.names.length ? flatten(labelString(layout, values).slice(0, -1) + ',') : '{';
}

/** With the `u` flag a surrogate pair is one code point, so this matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Throws unless `name` is a valid metric name: any non-empty text with a UTF-8 form (no lone UTF-16 surrogate),
 * as client_golang's UTF-8 validation. Names beyond `[a-zA-Z_:][a-zA-Z0-9_:]*` are written quoted to scrapers that
 * negotiate `escaping=allow-utf-8` (Prometheus 3) and escaped for the others (see `names.ts`).
 */
export function validateMetricName(name: string): void {
  if (typeof name !== 'string' || name === '' || LONE_SURROGATE.test(name)) {
    throw new TypeError(
      `invalid metric name ${JSON.stringify(name)}: use non-empty UTF-8 text, best [a-zA-Z_:][a-zA-Z0-9_:]*`,
    );
  }
}

/** Throws unless `name` is a valid, non-reserved label name: non-empty UTF-8 text not starting with `__`. */
export function validateLabelName(name: string, reserved: readonly string[] = []): void {
  if (typeof name !== 'string' || name === '' || LONE_SURROGATE.test(name) || name.startsWith('__')) {
    throw new TypeError(
      `invalid label name ${JSON.stringify(name)}: use non-empty UTF-8 text not starting with "__", best [a-zA-Z_][a-zA-Z0-9_]*`,
    );
  }
  if (reserved.includes(name))
    throw new TypeError(`label name ${JSON.stringify(name)} is reserved for this metric type`);
}

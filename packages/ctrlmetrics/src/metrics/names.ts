/**
 * Metric and label names beyond the legacy character set, as client_golang (prometheus/common's `model`) writes
 * them: a legacy name is written bare in every format and under every scheme; any other name is written quoted
 * when the scrape negotiated `escaping=allow-utf-8`, and otherwise escaped by the negotiated scheme:
 *
 * - `underscores`: each rune that is not a legacy name rune becomes `_` (`my.metric` → `my_metric`);
 * - `dots`: `_` → `__`, `.` → `_dot_`, any other non-legacy rune → `__` (`a.b_c` → `a_dot_b__c`);
 * - `values`: `U__`, then `_` → `__` and each non-legacy rune → `_<hex code point>_` (`my.metric` → `U__my_2e_metric`).
 *
 * One deliberate difference: client_golang judges label names by the metric-name rule, so a `:` in a label name
 * stays bare (`{a:b="v"}`), which no Prometheus parses. Here a label name is legacy only by the label-name rule
 * (`[a-zA-Z_][a-zA-Z0-9_]*`): `a:b` is quoted under `allow-utf-8` and escaped (`a_b`) otherwise.
 */
import type { EscapingScheme, LabelLayout, ProtoLabelNames } from './exposition-types.js';

const LEGACY_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LEGACY_LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The two kinds of names: a `:` is a legacy rune only in metric names. */
export type NameKind = 'metric' | 'label';

/** True for `[a-zA-Z_:][a-zA-Z0-9_:]*`: written bare everywhere. */
export function isLegacyName(name: string): boolean {
  return LEGACY_NAME.test(name);
}

/** True for `[a-zA-Z_][a-zA-Z0-9_]*`: a label name written bare everywhere. */
export function isLegacyLabelName(name: string): boolean {
  return LEGACY_LABEL_NAME.test(name);
}

function isLegacy(name: string, kind: NameKind): boolean {
  return kind === 'metric' ? LEGACY_NAME.test(name) : LEGACY_LABEL_NAME.test(name);
}

/** A legacy name rune at position `first` (digits only after the first rune; `:` only in metric names). */
function isLegacyRune(cp: number, first: boolean, kind: NameKind): boolean {
  return (
    (cp >= 0x61 && cp <= 0x7a) ||
    (cp >= 0x41 && cp <= 0x5a) ||
    cp === 0x5f ||
    (cp === 0x3a && kind === 'metric') ||
    (!first && cp >= 0x30 && cp <= 0x39)
  );
}

/** `name` escaped by `scheme` (not `allow-utf-8`, under which names are quoted instead). */
export function escapeName(
  name: string,
  scheme: Exclude<EscapingScheme, 'allow-utf-8'>,
  kind: NameKind = 'metric',
): string {
  if (scheme !== 'dots' && isLegacy(name, kind)) return name;
  let out = scheme === 'values' ? 'U__' : '';
  let first = true;
  for (const ch of name) {
    const cp = ch.codePointAt(0)!;
    const legacy = isLegacyRune(cp, first, kind);
    if (scheme === 'underscores') out += legacy ? ch : '_';
    else if (scheme === 'dots') out += cp === 0x5f ? '__' : cp === 0x2e ? '_dot_' : legacy ? ch : '__';
    else out += cp === 0x5f ? '__' : legacy ? ch : `_${cp.toString(16)}_`;
    first = false;
  }
  return out;
}

/** `"name"` with `\`, newline and `"` escaped: a non-legacy name under `allow-utf-8`. */
export function quoteName(name: string): string {
  return '"' + name.replace(/[\\\n"]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\"')) + '"';
}

/** The name a scheme sends without quoting (protobuf, and the text formats before they quote): escaped or as is. */
export function sentName(name: string, scheme: EscapingScheme, kind: NameKind = 'metric'): string {
  return scheme === 'allow-utf-8' || isLegacy(name, kind) ? name : escapeName(name, scheme, kind);
}

/** A metric name for a `# HELP`/`# TYPE` line or a sample: bare when legacy, else quoted (it is already escaped). */
export function writtenName(sent: string): string {
  return LEGACY_NAME.test(sent) ? sent : quoteName(sent);
}

/** True when a family with these names is written differently under some scheme (the slow path renders it). */
export function needsEscaping(name: string, labelNames: readonly string[]): boolean {
  return !LEGACY_NAME.test(name) || labelNames.some((l) => !LEGACY_LABEL_NAME.test(l));
}

/** A family's names under one scheme, for rendering a family that {@link needsEscaping}. */
export interface ExposedFamily {
  /** The family name as sent: escaped, or as registered under `allow-utf-8` (quote it with {@link writtenName}). */
  readonly name: string;
  /** Label names in written order, each as it precedes `="v"` in the text formats (quoted when it must be). */
  readonly labels: readonly string[];
  /** Label names as sent in protobuf (escaped or as registered, never quoted), in written order. */
  readonly proto: ProtoLabelNames;
}

/** The names of a family with this name and label layout under `scheme`; label order is kept, as client_golang. */
export function exposeFamily(name: string, layout: LabelLayout, scheme: EscapingScheme): ExposedFamily {
  const proto = layout.names.map((l) => sentName(l, scheme, 'label'));
  return {
    name: sentName(name, scheme),
    labels: proto.map((l) => (LEGACY_LABEL_NAME.test(l) ? l : quoteName(l))),
    proto: { names: proto, order: layout.order },
  };
}

/** Escapes a label value (`\`, `"`, newline). */
function escapeValue(v: string): string {
  return v.replace(/[\\"\n]/g, (c) => (c === '\\' ? '\\\\' : c === '"' ? '\\"' : '\\n'));
}

/** `a="x",b="y"` (no braces) for the values in declared order; empty without labels. */
export function labelPairs(x: ExposedFamily, values: readonly string[]): string {
  const order = x.proto.order;
  let s = '';
  for (let i = 0; i < x.labels.length; i++) {
    if (i) s += ',';
    s += x.labels[i] + '="' + escapeValue(values[order ? order[i] : i]) + '"';
  }
  return s;
}

/** The start of a sample line up to its value: `s{pairs} `, `s `, or with a quoted name `{"s",pairs} `. */
export function sampleStart(sample: string, pairs: string): string {
  if (LEGACY_NAME.test(sample)) return pairs ? `${sample}{${pairs}} ` : `${sample} `;
  return `{${quoteName(sample)}${pairs ? ',' + pairs : ''}} `;
}

/** The start of a sample line whose last label is still to come (`le="…"} `): `s{pairs,` or `{"s",pairs,`. */
export function sampleOpen(sample: string, pairs: string): string {
  const rest = pairs ? pairs + ',' : '';
  return LEGACY_NAME.test(sample) ? `${sample}{${rest}` : `{${quoteName(sample)},${rest}`;
}

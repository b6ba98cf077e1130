/**
 * Metric and label names beyond the legacy character set, as client_golang (prometheus/common's `model`) writes
 * them: a legacy name is written bare in every format and under every scheme; any other name is written quoted
 * when the scrape negotiated `escaping=allow-utf-8`, and otherwise escaped by the negotiated scheme:
 *
 * - `underscores`: each rune that is not a legacy name rune becomes `_` (`my.metric` → `my_metric`);
 * - `dots`: `_` → `__`, `.` → `_dot_`, any other non-legacy rune → `__` (`a.b_c` → `a_dot_b__c`);
 * - `values`: `U__`, then `_` → `__` and each non-legacy rune → `_<hex code point>_` (`my.metric` → `U__my_2e_metric`).
 *
 * Label names are judged by the metric-name rule, as client_golang does (a `:` in a label name stays bare).
 */
import type { EscapingScheme } from './negotiate.js';

const LEGACY_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** True for `[a-zA-Z_:][a-zA-Z0-9_:]*`: written bare everywhere. */
export function isLegacyName(name: string): boolean {
  return LEGACY_NAME.test(name);
}

/** A legacy name rune at position `first` (digits only after the first rune). */
function isLegacyRune(cp: number, first: boolean): boolean {
  return (cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f || cp === 0x3a || (!first && cp >= 0x30 && cp <= 0x39);
}

/** `name` escaped by `scheme` (not `allow-utf-8`, under which names are quoted instead). */
export function escapeName(name: string, scheme: Exclude<EscapingScheme, 'allow-utf-8'>): string {
  if (scheme !== 'dots' && isLegacyName(name)) return name;
  let out = scheme === 'values' ? 'U__' : '';
  let first = true;
  for (const ch of name) {
    const cp = ch.codePointAt(0)!;
    if (scheme === 'underscores') out += isLegacyRune(cp, first) ? ch : '_';
    else if (scheme === 'dots') out += cp === 0x5f ? '__' : cp === 0x2e ? '_dot_' : isLegacyRune(cp, first) ? ch : '__';
    else out += cp === 0x5f ? '__' : isLegacyRune(cp, first) ? ch : `_${cp.toString(16)}_`;
    first = false;
  }
  return out;
}

/** `"name"` with `\`, newline and `"` escaped: a non-legacy name under `allow-utf-8`. */
export function quoteName(name: string): string {
  return '"' + name.replace(/[\\\n"]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : '\\"')) + '"';
}

/**
 * How a name is written under a scheme: bare if legacy; else quoted (`allow-utf-8`) or escaped. `quoted` tells
 * whether the result must go inside the braces (a metric name) or may stand as is.
 */
export function exposedName(name: string, scheme: EscapingScheme): { text: string; quoted: boolean } {
  if (isLegacyName(name)) return { text: name, quoted: false };
  if (scheme === 'allow-utf-8') return { text: quoteName(name), quoted: true };
  return { text: escapeName(name, scheme), quoted: false };
}

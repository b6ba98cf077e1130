/**
 * Content negotiation for `/metrics` with the outcomes of client_golang's promhttp with OpenMetrics enabled
 * (prometheus/common `expfmt.NegotiateIncludingOpenMetrics` over goautoneg's Accept parsing):
 *
 * - entries are tried by q, highest first; at equal q a concrete type before `type/*` before `*` and otherwise in
 *   the order given (goautoneg's sort, stable for the short headers Prometheus sends);
 * - protobuf (`application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited`),
 *   text 0.0.4 (`text/plain` without a version or with `version=0.0.4`), OpenMetrics 1.0.0 (`version=1.0.0`) or
 *   0.0.1 (`version=0.0.1` or none) match; anything else is skipped (`text/plain; version=1.0.0` included:
 *   client_golang writes no text 1.0.0), and when nothing matches the answer is text 0.0.4;
 * - the Content-Type always ends with `; escaping=<scheme>`: the last known `escaping=` value among the entries
 *   walked up to the match (even on entries that did not match), else `underscores`; names that are not legacy
 *   are then written as the scheme says (quoted under `allow-utf-8`, else escaped: see `names.ts`).
 *
 * Deliberate differences from client_golang, none of which changes the outcome for an Accept header any
 * Prometheus release sends:
 * - an entry with `q=0` is skipped (RFC 9110 §12.4.2: "not acceptable"; client_golang would answer it), and so
 *   is an entry whose q is not a number (client_golang reads it as 0 and answers it);
 * - media types and parameter names are compared case-insensitively and quoted parameter values are unquoted
 *   (RFC 9110 §8.3.1, §5.6.6); client_golang compares them as sent and keeps the quotes;
 * - `encoding=text` and `encoding=compact-text` (protobuf's debugging text formats) are not served: the entry is
 *   skipped instead of answered.
 */
import type { EscapingScheme, ExpositionFormat } from './exposition-types.js';
export type { EscapingScheme } from './exposition-types.js';

/** `Content-Type` of the Prometheus text format, without the `escaping` parameter. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** `Content-Type` of OpenMetrics 1.0.0, without the `escaping` parameter. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
/** `Content-Type` of OpenMetrics 0.0.1 (the same body as 1.0.0), without the `escaping` parameter. */
export const OPENMETRICS_0_0_1_CONTENT_TYPE = 'application/openmetrics-text; version=0.0.1; charset=utf-8';
/** `Content-Type` of length-delimited protobuf `io.prometheus.client.MetricFamily` messages, without `escaping`. */
export const PROTOBUF_CONTENT_TYPE =
  'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

const ESCAPING_SCHEMES: ReadonlySet<string> = new Set<EscapingScheme>(['allow-utf-8', 'underscores', 'dots', 'values']);

/** The chosen format and the `Content-Type` header to send with it. */
export interface NegotiatedFormat {
  format: ExpositionFormat;
  /** The full header value, `; escaping=<scheme>` included. */
  contentType: string;
  escaping: EscapingScheme;
}

interface AcceptEntry {
  type: string;
  subtype: string;
  params: Record<string, string>;
  q: number;
}

/** Bounds the work on a hostile header. */
const MAX_ACCEPT_LENGTH = 4096;
const MAX_ENTRIES = 32;

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A q-value as a number, or NaN when it is not one (the entry is then skipped). */
function parseQ(v: string): number {
  return DECIMAL.test(v) ? Math.min(Math.max(Number(v), 0), 1) : NaN;
}

function parseAccept(header: string): AcceptEntry[] {
  const out: AcceptEntry[] = [];
  const parts = header.slice(0, MAX_ACCEPT_LENGTH).split(',');
  for (let i = 0; i < parts.length && out.length < MAX_ENTRIES; i++) {
    const [range, ...rawParams] = parts[i].split(';');
    const slash = range.indexOf('/');
    const type = (slash < 0 ? range : range.slice(0, slash)).trim().toLowerCase();
    const subtype =
      slash < 0
        ? type === '*'
          ? '*'
          : ''
        : range
            .slice(slash + 1)
            .trim()
            .toLowerCase();
    if (!type || !subtype || subtype.includes('/')) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      if (k === 'q') q = parseQ(v);
      else params[k] = v;
    }
    if (q > 0) out.push({ type, subtype, params, q });
  }
  // Array.prototype.sort is stable: equal entries keep the order they were sent in
  return out.sort((a, b) => b.q - a.q || wildness(a) - wildness(b));
}

/** 0 for `type/subtype`, 1 for `type/*`, 2 for `*` or `*\/*`: the tie-break of goautoneg's sort. */
function wildness(e: AcceptEntry): number {
  return e.type === '*' ? 2 : e.subtype === '*' ? 1 : 0;
}

function answer(format: ExpositionFormat, base: string, escaping: EscapingScheme): NegotiatedFormat {
  return { format, contentType: `${base}; escaping=${escaping}`, escaping };
}

/** Picks the exposition format for an `Accept` header. */
export function negotiateFormat(accept?: string | string[]): NegotiatedFormat {
  const header = Array.isArray(accept) ? accept.join(',') : accept;
  let escaping: EscapingScheme = 'underscores';
  if (!header) return answer('text', TEXT_CONTENT_TYPE, escaping);
  for (const e of parseAccept(header)) {
    const esc = e.params['escaping'];
    if (esc !== undefined && ESCAPING_SCHEMES.has(esc)) escaping = esc as EscapingScheme;
    const version = e.params['version'];
    if (e.type === 'application' && e.subtype === 'vnd.google.protobuf') {
      if (e.params['proto'] === 'io.prometheus.client.MetricFamily' && e.params['encoding'] === 'delimited') {
        return answer('protobuf', PROTOBUF_CONTENT_TYPE, escaping);
      }
      continue;
    }
    if (
      e.type === 'text' &&
      e.subtype === 'plain' &&
      (version === undefined || version === '' || version === '0.0.4')
    ) {
      return answer('text', TEXT_CONTENT_TYPE, escaping);
    }
    if (e.type === 'application' && e.subtype === 'openmetrics-text') {
      if (version === '1.0.0') return answer('openmetrics', OPENMETRICS_CONTENT_TYPE, escaping);
      if (version === undefined || version === '' || version === '0.0.1')
        return answer('openmetrics', OPENMETRICS_0_0_1_CONTENT_TYPE, escaping);
    }
  }
  return answer('text', TEXT_CONTENT_TYPE, escaping);
}

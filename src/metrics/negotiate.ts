/**
 * Content negotiation for `/metrics`, as client_golang's `expfmt.Negotiate` with OpenMetrics enabled: the
 * highest-q acceptable entry wins; OpenMetrics only when `application/openmetrics-text` is asked for (version
 * absent, 0.0.1 or 1.0.0), otherwise Prometheus text 0.0.4 (also for wildcards, protobuf and anything unknown).
 */
import type { ExpositionFormat } from './family.js';

/** `Content-Type` of the Prometheus text format. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
/** `Content-Type` of OpenMetrics 1.0.0. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The chosen format and the `Content-Type` header to send with it. */
export interface NegotiatedFormat {
  format: ExpositionFormat;
  contentType: string;
}

interface AcceptEntry {
  type: string;
  params: Record<string, string>;
  q: number;
  order: number;
}

/** Bounds the work on a hostile header. */
const MAX_ACCEPT_LENGTH = 4096;
const MAX_ENTRIES = 32;

function parseAccept(header: string): AcceptEntry[] {
  const out: AcceptEntry[] = [];
  const parts = header.slice(0, MAX_ACCEPT_LENGTH).split(',');
  for (let i = 0; i < parts.length && out.length < MAX_ENTRIES; i++) {
    const [rawType, ...rawParams] = parts[i]!.split(';');
    const type = rawType!.trim().toLowerCase();
    if (!type) continue;
    const params: Record<string, string> = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (k === 'q') {
        const n = Number(v);
        q = Number.isFinite(n) ? Math.min(Math.max(n, 0), 1) : 0;
      } else params[k] = v;
    }
    if (q > 0) out.push({ type, params, q, order: i });
  }
  return out.sort((a, b) => b.q - a.q || a.order - b.order);
}

const TEXT: NegotiatedFormat = { format: 'text', contentType: TEXT_CONTENT_TYPE };

/** Picks the exposition format for an `Accept` header. */
export function negotiateFormat(accept?: string | string[]): NegotiatedFormat {
  const header = Array.isArray(accept) ? accept.join(',') : accept;
  if (!header) return TEXT;
  for (const e of parseAccept(header)) {
    const version = e.params['version'];
    if (e.type === 'application/openmetrics-text') {
      if (version === undefined || version === '1.0.0') return { format: 'openmetrics', contentType: OPENMETRICS_CONTENT_TYPE };
      if (version === '0.0.1') return { format: 'openmetrics', contentType: 'application/openmetrics-text; version=0.0.1; charset=utf-8' };
      continue;
    }
    if (e.type === 'text/plain' && (version === undefined || version === '0.0.4')) return TEXT;
  }
  return TEXT;
}

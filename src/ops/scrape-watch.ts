/** The live table of `ctrlmetrics scrape --watch`: per-controller rates and latencies from the deltas of two scrapes. */
import { controllerTotals, parseExposition, quantileFromBuckets, type ControllerTotals } from './exposition.js';
import { formatTable } from './output.js';

/** One scrape's per-controller totals and when it was taken. */
export interface WatchPoint {
  at: number;
  totals: Map<string, ControllerTotals>;
}

/** Reads a scrape body into a {@link WatchPoint}. */
export function watchPoint(body: string, at: number): WatchPoint {
  return { at, totals: controllerTotals(parseExposition(body)) };
}

/** Seconds as a latency cell: `850µs`, `12.3ms`, `1.24s`. */
export function formatLatency(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '-';
  if (seconds < 0.001) return `${Math.round(seconds * 1e6)}µs`;
  if (seconds < 1) return `${(seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1)}ms`;
  return `${seconds.toFixed(2)}s`;
}

function rate(n: number): string {
  return n.toFixed(n >= 100 ? 0 : n >= 10 ? 1 : 2);
}

/** Rows per controller; rates and quantiles need a previous point (`-` until then). */
export function watchRows(now: WatchPoint, before?: WatchPoint): string[][] {
  const seconds = before ? (now.at - before.at) / 1000 : 0;
  return [...now.totals.keys()].sort().map((name) => {
    const t = now.totals.get(name)!;
    const p = before?.totals.get(name);
    const have = before && seconds > 0;
    const rec = have ? rate(Math.max(0, t.reconciles - (p?.reconciles ?? 0)) / seconds) : '-';
    const err = have ? rate(Math.max(0, t.errors - (p?.errors ?? 0)) / seconds) : '-';
    const p50 = have ? formatLatency(quantileFromBuckets(0.5, t.buckets, p?.buckets)) : '-';
    const p99 = have ? formatLatency(quantileFromBuckets(0.99, t.buckets, p?.buckets)) : '-';
    return [name, rec, err, p50, p99, t.depth === undefined ? '-' : String(t.depth), String(t.reconciles)];
  });
}

/** The whole frame: a header line and the table (or a note when no controller metrics are exposed). */
export function renderWatchFrame(url: string, now: WatchPoint, before: WatchPoint | undefined, scrapes: number): string {
  const head = `${url}  scrape #${scrapes} at ${new Date(now.at).toISOString().slice(11, 19)}Z${before ? '' : '  (rates after the next scrape)'}\n`;
  if (now.totals.size === 0) return head + 'no controller_runtime_reconcile_* metrics in this scrape (no controller has run yet?)\n';
  return head + formatTable(['CONTROLLER', 'RECONCILES/S', 'ERRORS/S', 'P50', 'P99', 'QUEUE DEPTH', 'TOTAL'], watchRows(now, before));
}

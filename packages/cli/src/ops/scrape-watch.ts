/**
 * The live view of `ctrlmetrics scrape --watch`: per controller, the reconcile rate, the error ratio, p50/p90
 * reconcile latency (from histogram deltas, as PromQL's histogram_quantile over the interval), the queue depth and
 * a sparkline of the reconcile rate over the last minute. A counter that went down (the manager restarted) counts
 * from zero again, as Prometheus' rate() reads a reset.
 *
 * Two renderings: a screen (fits the terminal's width and height; the caller adds the one status line) and plain
 * lines, one per controller per scrape, for logs and pipes.
 */
import { controllerTotals, parseExposition, quantileFromBuckets, type ControllerTotals } from './exposition.js';

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

function formatRate(n: number): string {
  return n.toFixed(n >= 100 ? 0 : n >= 10 ? 1 : 2);
}

/** What one controller did between two scrapes. */
export interface ControllerStats {
  controller: string;
  /** Reconciles per second; undefined before the second scrape. */
  rate?: number;
  /** Failed reconciles / reconciles, 0..1; undefined when none ran. */
  errorRatio?: number;
  p50?: number;
  p90?: number;
  depth?: number;
  total: number;
}

/** A counter's increase, reading a drop as a restart from zero (Prometheus' rate()). */
function increase(now: number, before: number | undefined): number {
  if (before === undefined) return now;
  return now >= before ? now - before : now;
}

/** Bucket deltas, or the new buckets whole when the histogram was reset. */
function bucketsSince(
  now: Map<number, number>,
  before: Map<number, number> | undefined,
): Map<number, number> | undefined {
  if (!before) return undefined;
  for (const [le, v] of now) if (v < (before.get(le) ?? 0)) return undefined;
  return before;
}

/** The stats of every controller between two points (`before` absent: totals only). */
export function statsBetween(now: WatchPoint, before?: WatchPoint): ControllerStats[] {
  const seconds = before ? (now.at - before.at) / 1000 : 0;
  return [...now.totals.keys()].sort().map((controller) => {
    const t = now.totals.get(controller)!;
    const stats: ControllerStats = { controller, depth: t.depth, total: t.reconciles };
    if (!before || seconds <= 0) return stats;
    const p = before.totals.get(controller);
    const reconciles = increase(t.reconciles, p?.reconciles);
    const errors = increase(t.errors, p?.errors);
    const base = bucketsSince(t.buckets, p?.buckets);
    stats.rate = reconciles / seconds;
    if (reconciles > 0) stats.errorRatio = Math.min(1, errors / reconciles);
    stats.p50 = quantileFromBuckets(0.5, t.buckets, base);
    stats.p90 = quantileFromBuckets(0.9, t.buckets, base);
    return stats;
  });
}

const SPARKS = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/** A sparkline of `values`, scaled to their maximum; an empty one when there are none. */
export function sparkline(values: number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((v) =>
      max <= 0 ? SPARKS[0] : SPARKS[Math.min(SPARKS.length - 1, Math.round((v / max) * (SPARKS.length - 1)))],
    )
    .join('');
}

/** How much history the sparkline shows. */
const HISTORY_MS = 60_000;

/** The scrapes of a watch: the last point and the per-controller rates of the last minute. */
export class WatchHistory {
  private points: WatchPoint[] = [];

  /** Adds a scrape; answers the stats since the previous one. */
  add(point: WatchPoint): ControllerStats[] {
    const before = this.points[this.points.length - 1];
    this.points.push(point);
    // keep one point older than the window: the first rate inside it needs it
    while (this.points.length > 2 && this.points[1].at <= point.at - HISTORY_MS) this.points.shift();
    return statsBetween(point, before);
  }

  /** The latest point, if any. */
  get last(): WatchPoint | undefined {
    return this.points[this.points.length - 1];
  }

  /** The stats of the latest interval. */
  latest(): ControllerStats[] {
    const n = this.points.length;
    return n === 0 ? [] : statsBetween(this.points[n - 1], this.points[n - 2]);
  }

  /** The reconcile rate of `controller` in each interval of the last minute, oldest first. */
  rates(controller: string): number[] {
    const out: number[] = [];
    for (let i = 1; i < this.points.length; i++) {
      const [a, b] = [this.points[i - 1], this.points[i]];
      const seconds = (b.at - a.at) / 1000;
      const t = b.totals.get(controller);
      if (!t || seconds <= 0) continue;
      out.push(increase(t.reconciles, a.totals.get(controller)?.reconciles) / seconds);
    }
    return out;
  }
}

/** Cells of one controller's row. */
function cells(s: ControllerStats): string[] {
  return [
    s.controller,
    s.rate === undefined ? '-' : formatRate(s.rate),
    s.errorRatio === undefined ? '-' : `${(s.errorRatio * 100).toFixed(1)}%`,
    formatLatency(s.p50),
    formatLatency(s.p90),
    s.depth === undefined ? '-' : String(s.depth),
  ];
}

const HEADERS = ['CONTROLLER', 'RECONCILES/S', 'ERRORS', 'P50', 'P90', 'DEPTH'];
const SPARK_HEADER = 'LAST MINUTE';
const GAP = 2;

/** Cuts a line to `width` columns (each character one column: the view writes no wide characters). */
export function fit(line: string, width: number): string {
  const chars = [...line];
  if (chars.length <= width) return line;
  return width <= 1 ? chars.slice(0, width).join('') : chars.slice(0, width - 1).join('') + '…';
}

/** What the screen shows above its status line. */
export interface ScreenOptions {
  url: string;
  intervalMs: number;
  columns: number;
  /** Rows available for the screen, the status line excluded. */
  rows: number;
  /** Set while the endpoint is not answering: the table is from then. */
  staleSince?: number;
}

function clock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)}Z`;
}

/** The screen: a title, the table (width-fitted; the sparkline takes what is left) and at most `rows` lines. */
export function renderScreen(history: WatchHistory, o: ScreenOptions): string[] {
  const last = history.last;
  const when = last
    ? o.staleSince !== undefined
      ? `last scrape ${clock(last.at)}, not answering since ${clock(o.staleSince)}`
      : clock(last.at)
    : 'waiting for the first scrape';
  const lines = [fit(`${o.url}  every ${o.intervalMs / 1000}s  ${when}`, o.columns), ''];
  if (!last) return lines.slice(0, o.rows);
  const stats = history.latest();
  if (stats.length === 0) {
    lines.push(fit('no controller_runtime_reconcile_* metrics in this scrape (no controller has run yet?)', o.columns));
    return lines.slice(0, o.rows);
  }
  const rows = stats.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  // controller names give way first when the terminal is narrow
  const fixed = widths.slice(1).reduce((a, w) => a + w + GAP, 0);
  widths[0] = Math.max(4, Math.min(widths[0], o.columns - fixed - GAP));
  const used = widths.reduce((a, w) => a + w + GAP, 0);
  const sparkWidth = o.columns - used;
  const withSpark = sparkWidth >= 8;
  const line = (r: string[], spark?: string) => {
    const text =
      r.map((c, i) => fit(c, widths[i]).padEnd(widths[i] + GAP)).join('') +
      (withSpark && spark !== undefined ? spark : '');
    return fit(text.trimEnd(), o.columns);
  };
  lines.push(line(HEADERS, withSpark ? fit(SPARK_HEADER, sparkWidth) : undefined));
  for (let i = 0; i < stats.length; i++) {
    const rates = history.rates(stats[i].controller).slice(-sparkWidth);
    lines.push(line(rows[i], withSpark ? sparkline(rates) : undefined));
  }
  if (lines.length > o.rows) {
    const hidden = lines.length - (o.rows - 1);
    return [...lines.slice(0, o.rows - 1), fit(`… ${hidden} more controllers (make the terminal taller)`, o.columns)];
  }
  return lines;
}

/** Plain lines for a pipe or a log: one per controller per scrape, `key=value` after the time and the name. */
export function renderLines(at: number, stats: ControllerStats[]): string[] {
  if (stats.length === 0)
    return [`${clock(at)} no controller_runtime_reconcile_* metrics in this scrape (no controller has run yet?)`];
  return stats.map((s) => {
    const [name, rate, errors, p50, p90, depth] = cells(s);
    return `${clock(at)} ${name} reconciles/s=${rate} errors=${errors} p50=${p50} p90=${p90} depth=${depth} total=${s.total}`;
  });
}

/** A small parser of the Prometheus text exposition format, and the statistics the `scrape --watch` table shows. */

/** One sample line: metric name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseValue(s: string): number {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  return Number(s);
}

function parseLabels(text: string, start: number): { labels: Record<string, string>; end: number } | undefined {
  const labels: Record<string, string> = {};
  let i = start;
  while (i < text.length) {
    while (text[i] === ' ' || text[i] === ',') i++;
    if (text[i] === '}') return { labels, end: i + 1 };
    const eq = text.indexOf('=', i);
    if (eq < 0 || text[eq + 1] !== '"') return undefined;
    const key = text.slice(i, eq).trim();
    let j = eq + 2;
    let value = '';
    while (j < text.length && text[j] !== '"') {
      if (text[j] === '\\' && j + 1 < text.length) {
        const c = text[j + 1];
        value += c === 'n' ? '\n' : c;
        j += 2;
      } else value += text[j++];
    }
    if (j >= text.length) return undefined;
    labels[key] = value;
    i = j + 1;
  }
  return undefined;
}

/** Parses the sample lines of a text (or OpenMetrics) exposition; comments and malformed lines are skipped. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    let name: string;
    let labels: Record<string, string> = {};
    let rest: string;
    if (brace >= 0 && (space < 0 || brace < space)) {
      name = line.slice(0, brace);
      const parsed = parseLabels(line, brace + 1);
      if (!parsed) continue;
      labels = parsed.labels;
      rest = line.slice(parsed.end).trim();
    } else {
      if (space < 0) continue;
      name = line.slice(0, space);
      rest = line.slice(space + 1).trim();
    }
    const value = parseValue(rest.split(/\s+/)[0] ?? '');
    if (Number.isNaN(value) && rest.split(/\s+/)[0] !== 'NaN') continue;
    out.push({ name, labels, value });
  }
  return out;
}

/** Keeps the lines of an exposition whose metric name (for HELP/TYPE comments: the described metric) matches `re`. */
export function filterExposition(text: string, re: RegExp): string {
  const kept: string[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const m = line.startsWith('#') ? /^# (?:HELP|TYPE|UNIT) (\S+)/.exec(line) : /^[^{\s]+/.exec(line);
    const subject = m ? (m[1] ?? m[0]) : line;
    if (re.test(subject)) kept.push(line);
  }
  return kept.length ? kept.join('\n') + '\n' : '';
}

/** Per-controller figures read from one scrape. */
export interface ControllerTotals {
  reconciles: number;
  errors: number;
  /** Cumulative bucket counts of `controller_runtime_reconcile_time_seconds`, by upper bound. */
  buckets: Map<number, number>;
  depth?: number;
}

/** Groups the reconcile metrics of a scrape by controller. */
export function controllerTotals(samples: Sample[]): Map<string, ControllerTotals> {
  const by = new Map<string, ControllerTotals>();
  const get = (c: string) => {
    let t = by.get(c);
    if (!t) by.set(c, (t = { reconciles: 0, errors: 0, buckets: new Map() }));
    return t;
  };
  for (const s of samples) {
    if (s.name === 'controller_runtime_reconcile_total' && s.labels.controller)
      get(s.labels.controller).reconciles += s.value;
    else if (s.name === 'controller_runtime_reconcile_errors_total' && s.labels.controller)
      get(s.labels.controller).errors += s.value;
    else if (
      s.name === 'controller_runtime_reconcile_time_seconds_bucket' &&
      s.labels.controller &&
      s.labels.le !== undefined
    ) {
      const b = get(s.labels.controller).buckets;
      const le = parseValue(s.labels.le);
      b.set(le, (b.get(le) ?? 0) + s.value);
    } else if (s.name === 'workqueue_depth' && (s.labels.controller || s.labels.name)) {
      const t = get(s.labels.controller || s.labels.name);
      t.depth = (t.depth ?? 0) + s.value;
    }
  }
  return by;
}

/**
 * The q-quantile of the observations that fell between two scrapes, from cumulative bucket deltas, interpolating
 * linearly inside the bucket (what PromQL's histogram_quantile does). Undefined when nothing was observed.
 */
export function quantileFromBuckets(
  q: number,
  now: Map<number, number>,
  before?: Map<number, number>,
): number | undefined {
  const bounds = [...now.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => Math.max(0, (now.get(b) ?? 0) - (before?.get(b) ?? 0)));
  const total = counts[counts.length - 1] ?? 0;
  if (bounds.length === 0 || total <= 0 || bounds[bounds.length - 1] !== Infinity) return undefined;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      if (bounds[i] === Infinity) return bounds.length >= 2 ? bounds[bounds.length - 2] : undefined;
      const lower = i === 0 ? 0 : bounds[i - 1];
      const below = i === 0 ? 0 : counts[i - 1];
      const inBucket = counts[i] - below;
      if (inBucket <= 0) return bounds[i];
      return lower + (bounds[i] - lower) * ((rank - below) / inBucket);
    }
  }
  return undefined;
}

/**
 * prom-client metrics as families of ours. prom-client's own renderer is not used: its OpenMetrics mode renames
 * counters in place, and it has one format per registry. We read `getMetricsAsJSON()` / `metric.get()` and render
 * with our escaping, number format and both formats.
 *
 * Known limit (prom-client 15): its label hashing joins `key:value,` without escaping, so two label sets such
 * as `{a:"1,b:2"}` and `{a:"1",b:"2"}` are merged into one series inside prom-client before we see them. Use
 * this project's classes for label values from untrusted input. What we can do is guard: a stored label value
 * that contains `,<another label of the family>:` is exactly the shape that collides, so the first time a family
 * shows one, a warning names the family and the fix ({@link warnAmbiguousLabels}).
 */
import type { Registry as PromRegistry } from 'prom-client';
import type {
  Collector,
  FamilyView,
  MetricType,
  ProtoLabelNames,
  ProtoLabels,
  ProtoSink,
  TextFormat,
} from './family.js';
import { newExemplar, openMetricsExemplar, type Exemplar } from './exemplar.js';
import { escapeLabelValue, formatFloat, formatFloatLabel } from './format.js';
import { createLogger } from '../util/log.js';
import { scalarText } from '../util/scalar-text.js';

const log = createLogger('metrics');
/** Families already warned about (bounded: one entry per prom-client family name). */
const warnedFamilies = new Set<string>();

/** One sample of prom-client's JSON. */
interface PromValue {
  value: number;
  labels?: Record<string, string | number | undefined>;
  metricName?: string;
  /** Set by prom-client with `enableExemplars` (counters and histogram buckets); timestamp in Unix seconds. */
  exemplar?: { labelSet?: unknown; value?: unknown; timestamp?: unknown } | null;
}

/** One family of prom-client's JSON (`getMetricsAsJSON()`, `metric.get()`). */
export interface PromFamily {
  name: string;
  help?: string;
  type?: unknown;
  values?: PromValue[];
}

const FLOAT_LABELS = new Set(['le', 'quantile']);

function promType(t: unknown): MetricType {
  return t === 'counter' || t === 'gauge' || t === 'histogram' || t === 'summary' ? t : 'untyped';
}

function labelsOf(labels: Record<string, unknown> | undefined, om: boolean): string {
  if (!labels) return '';
  let s = '';
  let tail = '';
  // sorted by name, as client_golang writes labels (prom-client keeps the order they were given in)
  for (const k of Object.keys(labels).sort()) {
    const v = labels[k];
    if (v === undefined) continue;
    if (FLOAT_LABELS.has(k)) {
      const n = typeof v === 'number' ? v : v === '+Inf' ? Infinity : Number(v);
      tail += `${tail ? ',' : ''}${k}="${Number.isNaN(n) ? escapeLabelValue(scalarText(v)) : formatFloatLabel(n, om)}"`;
      continue;
    }
    s += `${s ? ',' : ''}${k}="${escapeLabelValue(scalarText(v))}"`;
  }
  // float labels go last, as client_golang writes them
  if (tail) s += (s ? ',' : '') + tail;
  return s ? '{' + s + '}' : '';
}

/** `,name:` with a valid label name: the separator prom-client writes between `name:value` pairs of its hash. */
const HASH_SEPARATOR_SHAPE = /,[a-zA-Z_][a-zA-Z0-9_]*:/;

/**
 * True when a label value has the shape prom-client's unescaped label hashing confuses with another label set
 * (it contains `,name:`). The series that absorbed the other keeps only its own labels, so the family's other
 * label names are not visible here: any valid label name counts.
 */
export function hasAmbiguousLabelValue(values: readonly PromValue[]): boolean {
  for (const v of values) {
    for (const raw of Object.values(v.labels ?? {})) {
      if (typeof raw === 'string' && HASH_SEPARATOR_SHAPE.test(raw)) return true;
    }
  }
  return false;
}

/** Logs once per family that its series may have been merged by prom-client (see the module comment). */
function warnAmbiguousLabels(family: string, values: readonly PromValue[]): void {
  if (warnedFamilies.has(family) || !hasAmbiguousLabelValue(values)) return;
  warnedFamilies.add(family);
  log.warn(
    'a prom-client metric has a label value containing ",<label>:"; prom-client 15 merges such a series with the label set it spells, so counts may be wrong. Declare it with metrics.Counter/Gauge/Histogram from ctrlmetrics, which keeps them apart',
    { family },
  );
}

/** With the `u` flag a surrogate pair is one code point, so this matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const warnedInvalidUtf8 = new Set<string>();

/**
 * The samples whose label values are valid UTF-8. prom-client accepts a lone UTF-16 surrogate, which has no UTF-8
 * form: written out as U+FFFD it would merge with another series, so such a series is left out (and the family
 * named once in a warning), as our own classes refuse the value and client_golang refuses the scrape.
 */
function withoutInvalidUtf8(family: string, values: PromValue[]): PromValue[] {
  const bad = (v: PromValue) =>
    Object.values(v.labels ?? {}).some((l) => typeof l === 'string' && LONE_SURROGATE.test(l));
  if (!values.some(bad)) return values;
  if (!warnedInvalidUtf8.has(family) && warnedInvalidUtf8.size < 1000) {
    warnedInvalidUtf8.add(family);
    log.warn(
      'a prom-client metric has series with a label value that is not valid UTF-8 (a lone UTF-16 surrogate); they are left out of /metrics',
      { family },
    );
  }
  return values.filter((v) => !bad(v));
}

/**
 * A prom-client exemplar as ours: label values as strings, its seconds as ms. One that fails our checks (prom-client
 * checks only the length) is left out rather than failing the scrape.
 */
function exemplarOf(family: string, v: PromValue): Exemplar | undefined {
  const e = v.exemplar;
  if (!e || typeof e !== 'object' || !e.labelSet || typeof e.labelSet !== 'object') return undefined;
  const labels: Record<string, string> = {};
  for (const [k, x] of Object.entries(e.labelSet as Record<string, unknown>)) labels[k] = String(x);
  if (Object.keys(labels).length === 0) return undefined;
  try {
    return newExemplar(labels, Number(e.value), Number(e.timestamp) * 1000, family);
  } catch {
    return undefined;
  }
}

/** One series of a prom-client family for protobuf: its samples grouped, with the index of its first sample. */
interface ProtoSeries {
  first: number;
  names: ProtoLabelNames;
  labels: ProtoLabels;
  value: number;
  /** Histogram upper bounds and cumulative counts, or summary quantiles and values. */
  keys: number[];
  counts: number[];
  sum: number;
  count: number;
  /** A counter's exemplar; a histogram's per bucket of `keys`, then `+Inf`'s. */
  exemplars: (Exemplar | undefined)[];
}

/** The series' labels without `le`/`quantile`, as protobuf label names (sorted) and values. */
function seriesLabels(labels: Record<string, unknown> | undefined): {
  names: ProtoLabelNames;
  labels: ProtoLabels;
  key: string;
} {
  const names: string[] = [];
  const values: string[] = [];
  for (const k of Object.keys(labels ?? {}).sort()) {
    const v = labels![k];
    if (v === undefined || FLOAT_LABELS.has(k)) continue;
    names.push(k);
    values.push(scalarText(v));
  }
  return {
    names: { names, order: undefined },
    labels: { values, pb: undefined },
    key: JSON.stringify([names, values]),
  };
}

/** A number from a prom-client `le`/`quantile` label (`+Inf` as Infinity). */
function floatLabel(v: unknown): number {
  return typeof v === 'number' ? v : v === '+Inf' ? Infinity : Number(v);
}

/**
 * prom-client's samples as protobuf series: one per sample for counters, gauges and untyped; histogram and summary
 * samples (`_bucket`/quantiles, `_sum`, `_count`) grouped by their other labels, in the order they first appear.
 */
function protoSeries(type: MetricType, name: string, values: readonly PromValue[]): ProtoSeries[] {
  const grouped = type === 'histogram' || type === 'summary';
  const byKey = new Map<string, ProtoSeries>();
  const out: ProtoSeries[] = [];
  const inf = new Map<ProtoSeries, Exemplar | undefined>();
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    const { names, labels, key } = seriesLabels(v.labels);
    let s = grouped ? byKey.get(key) : undefined;
    if (!s) {
      s = { first: i, names, labels, value: Number(v.value), keys: [], counts: [], sum: 0, count: 0, exemplars: [] };
      out.push(s);
      if (grouped) byKey.set(key, s);
    }
    if (!grouped) {
      if (type === 'counter') s.exemplars.push(exemplarOf(name, v));
      continue;
    }
    const sample = v.metricName ?? name;
    if (sample === name + '_sum') s.sum = Number(v.value);
    else if (sample === name + '_count') s.count = Number(v.value);
    else if (type === 'histogram' && sample === name + '_bucket') {
      const le = floatLabel(v.labels?.['le']);
      // client_golang writes no +Inf bucket (its count is the sample count) unless it carries an exemplar
      if (le !== Infinity) {
        s.keys.push(le);
        s.counts.push(Number(v.value));
        s.exemplars.push(exemplarOf(name, v));
      } else inf.set(s, exemplarOf(name, v));
    } else if (type === 'summary' && sample === name) {
      s.keys.push(floatLabel(v.labels?.['quantile']));
      s.counts.push(Number(v.value));
    }
  }
  for (const [s, e] of inf) s.exemplars[s.keys.length] = e;
  return out;
}

/** A family from prom-client's JSON, rendered line by line. */
export function viewOfPromFamily(f: PromFamily): FamilyView {
  const type = promType(f.type);
  const values = withoutInvalidUtf8(f.name, f.values ?? []);
  warnAmbiguousLabels(f.name, values);
  const name = f.name;
  let series: ProtoSeries[] | undefined;
  return {
    name,
    help: f.help ?? '',
    type,
    units: values.length,
    linesPerUnit: 1,
    encode(out: ProtoSink, from: number, to: number): void {
      series ??= protoSeries(type, name, values);
      for (const s of series) {
        if (s.first < from || s.first >= to) continue;
        if (type === 'counter') out.counter(s.names, s.labels, s.value, 0, s.exemplars[0]);
        else if (type === 'gauge') out.gauge(s.names, s.labels, s.value);
        else if (type === 'histogram')
          out.histogram(
            s.names,
            s.labels,
            s.keys,
            s.counts,
            true,
            s.sum,
            s.count,
            0,
            undefined,
            s.exemplars.some((e) => e) ? s.exemplars : undefined,
          );
        else if (type === 'summary') out.summary(s.names, s.labels, s.keys, s.counts, s.sum, s.count, 0);
        else out.untyped(s.names, s.labels, s.value);
      }
    },
    render(format: TextFormat, from: number, to: number): string {
      const om = format === 'openmetrics';
      let s = '';
      for (let i = from; i < to; i++) {
        const v = values[i];
        // samples keep their name in both formats (a counter without `_total` is `unknown` in OpenMetrics)
        const sample = v.metricName ?? name;
        s +=
          sample +
          labelsOf(v.labels, om) +
          ' ' +
          formatFloat(Number(v.value)) +
          (om && v.exemplar ? openMetricsExemplar(exemplarOf(name, v)) : '') +
          '\n';
      }
      return s;
    },
  };
}

/** Names that prom-client's default metrics give gauges although they end in `_total` (promtool flags them). */
function isMisnamedGauge(f: PromFamily): boolean {
  return f.type !== 'counter' && f.name.endsWith('_total');
}

/** The type of a prom-client metric object, from its class (prom-client has no type property before collecting). */
export function promMetricType(m: unknown): MetricType | undefined {
  const cls = (m as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return cls === 'Counter'
    ? 'counter'
    : cls === 'Gauge'
      ? 'gauge'
      : cls === 'Histogram'
        ? 'histogram'
        : cls === 'Summary'
          ? 'summary'
          : undefined;
}

/** A whole prom-client registry as a collector. */
export class PromRegistryCollector implements Collector {
  constructor(
    readonly promRegistry: PromRegistry,
    private readonly opts: { dropMisnamedGauges?: boolean } = {},
  ) {}

  familyNames(): readonly string[] {
    return this.promRegistry.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name);
  }

  familyTypes(): readonly (MetricType | undefined)[] {
    return this.promRegistry.getMetricsAsArray().map(promMetricType);
  }

  async collect(): Promise<FamilyView[]> {
    let json: PromFamily[];
    try {
      json = await this.promRegistry.getMetricsAsJSON();
    } catch (err) {
      throw await this.nameFailingMetric(err);
    }
    const out: FamilyView[] = [];
    for (const f of json) {
      if (this.opts.dropMisnamedGauges && isMisnamedGauge(f)) continue;
      out.push(viewOfPromFamily(f));
    }
    return out;
  }

  /**
   * prom-client rejects the whole registry when one metric's `collect()` throws, without saying which: ask each
   * metric again (only on this failure path) and name the first that fails, e.g. `metric app_queue_depth: boom`.
   */
  private async nameFailingMetric(err: unknown): Promise<Error> {
    for (const m of this.promRegistry.getMetricsAsArray()) {
      try {
        await (m as unknown as PromMetricLike).get();
      } catch (e) {
        return new Error(`metric ${(m as unknown as { name: string }).name}: ${reason(e)}`);
      }
    }
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** prom-client's own message, or the thrown value as text. */
function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One prom-client metric object (created with `registers: []`) as a collector. */
export interface PromMetricLike {
  readonly name?: string;
  /** prom-client's JSON of the metric (its `metric.get()`). */
  get(): unknown; // a value, or a promise of one
}

/** True for a prom-client metric instance (it has `get()` and is not one of ours). */
export function isPromMetric(x: unknown): x is PromMetricLike {
  return !!x && typeof (x as PromMetricLike).get === 'function' && typeof (x as Collector).familyNames !== 'function';
}

/** True for a prom-client Registry instance. */
export function isPromRegistry(x: unknown): x is PromRegistry {
  return (
    !!x &&
    typeof (x as PromRegistry).getMetricsAsJSON === 'function' &&
    typeof (x as PromRegistry).getMetricsAsArray === 'function'
  );
}

/** Adapts one prom-client metric. */
export class PromMetricCollector implements Collector {
  constructor(private readonly metric: PromMetricLike) {}

  familyNames(): readonly string[] {
    return [(this.metric as unknown as { name: string }).name];
  }

  familyTypes(): readonly (MetricType | undefined)[] {
    return [promMetricType(this.metric)];
  }

  async collect(): Promise<FamilyView[]> {
    return [viewOfPromFamily((await this.metric.get()) as PromFamily)];
  }
}

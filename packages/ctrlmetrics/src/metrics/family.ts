/**
 * The unit the registry collects and the exposition renders: one metric family, its series captured at collect
 * time, rendered in slices of `units` (a unit is one series: one line for counters and gauges, a whole bucket
 * set for histograms).
 */
import type { Exemplar } from './exemplar.js';
import type { TextSink } from './text-sink.js';
import { escapeName, isLegacyName } from './names.js';
import type { EscapingScheme, ProtoLabelNames, TextFormat } from './exposition-types.js';
export type { ExpositionFormat, ProtoLabelNames, TextFormat } from './exposition-types.js';

/** Metric types as written on the `# TYPE` line (OpenMetrics writes `untyped` as `unknown`). */
export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** One family at collect time. */
export interface FamilyView {
  /** The family name as registered (for counters possibly ending in `_total`). */
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  /** Number of render units (series). A family with none is left out of the exposition. */
  readonly units: number;
  /** Approximate lines per unit, to size render slices. */
  readonly linesPerUnit: number;
  /**
   * The sample lines of units `[from, to)`, each ending in `\n`, with names written as `escaping` says (a family
   * whose names are all legacy ignores it; default `underscores`, client_golang's).
   */
  render(format: TextFormat, from: number, to: number, escaping?: EscapingScheme): string;
  /**
   * The same lines as {@link render}, appended to `out` as bytes. Optional: a family without it is rendered
   * through `render`. Our metrics write their usual lines here without building strings (see `text-sink.ts`).
   */
  write?(out: TextSink, format: TextFormat, from: number, to: number, escaping?: EscapingScheme): void;
  /** Writes units `[from, to)` to `out` as protobuf `Metric` messages (see {@link ProtoSink}), label names as `escaping` says. */
  encode(out: ProtoSink, from: number, to: number, escaping?: EscapingScheme): void;
}

/** One series' label values (declared order), and its label pairs once encoded, kept for the next scrape. */
export interface ProtoLabels {
  readonly values: readonly string[];
  pb: Uint8Array | undefined;
}

/** A series' native buckets for a {@link ProtoSink}: bucket key → count, per sign. */
export interface ProtoNativeBuckets {
  readonly schema: number;
  readonly zeroThreshold: number;
  readonly zeroCount: number;
  readonly positive: ReadonlyMap<number, number>;
  readonly negative: ReadonlyMap<number, number>;
}

/**
 * Where families write their series for the protobuf exposition, one `Metric` message per call. Times are Unix
 * milliseconds; a created time of 0 is not sent.
 */
export interface ProtoSink {
  /** Writes one counter sample (with its creation time and exemplar). */
  counter(names: ProtoLabelNames, labels: ProtoLabels, value: number, createdMs: number, exemplar?: Exemplar): void;
  /** Writes one gauge sample. */
  gauge(names: ProtoLabelNames, labels: ProtoLabels, value: number): void;
  /** Writes one untyped sample. */
  untyped(names: ProtoLabelNames, labels: ProtoLabels, value: number): void;
  /**
   * A classic histogram: finite upper `bounds` ascending (`+Inf` implied and not written, as client_golang, unless
   * it has an exemplar), and their counts, per bucket (`cumulative` false) or already cumulative; `exemplars` per
   * bucket, the last for `+Inf`.
   */
  histogram(
    names: ProtoLabelNames,
    labels: ProtoLabels,
    bounds: ArrayLike<number>,
    counts: ArrayLike<number>,
    cumulative: boolean,
    sum: number,
    count: number,
    createdMs: number,
    native?: ProtoNativeBuckets,
    exemplars?: ArrayLike<Exemplar | undefined>,
  ): void;
  /** Writes one summary (quantiles, sum, count). */
  summary(
    names: ProtoLabelNames,
    labels: ProtoLabels,
    quantiles: ArrayLike<number>,
    values: ArrayLike<number>,
    sum: number,
    count: number,
    createdMs: number,
  ): void;
}

/** Something that yields metric families on every collect: our metrics, prom-client adapters, custom collectors. */
export interface Collector {
  /** The family names this collector produces (checked for duplicates when registering). */
  familyNames(): readonly string[];
  /**
   * The type of each family of {@link familyNames}, in the same order, when known before collecting: then a
   * family whose samples would collide with another's (a histogram `x` and a gauge `x_count`, a counter
   * `x_total` and a gauge `x`) is refused when registering, not found at scrape time.
   */
  familyTypes?(): readonly (MetricType | undefined)[];
  /** Samples the collector (runs `collect` callbacks) and returns its families at this moment. */
  collect(): FamilyView[] | Promise<FamilyView[]>;
}

/** For counters: the OpenMetrics family name (without `_total`). */
export function counterBaseName(name: string): string {
  return name.endsWith('_total') ? name.slice(0, -6) : name;
}

/**
 * Every name a family is known by in either format: its family names (text and OpenMetrics) and the names of its
 * samples, and for a name that is not legacy also those names as the `underscores` escaping writes them (what
 * Prometheus 2 scrapes). Two families collide when these sets meet: a scraper could not tell their samples apart.
 */
export function claimedNames(name: string, type: MetricType | undefined): string[] {
  const own = ownNames(name, type);
  return isLegacyName(name) ? own : [...own, ...own.map((n) => escapeName(n, 'underscores'))];
}

function ownNames(name: string, type: MetricType | undefined): string[] {
  switch (type) {
    case 'counter':
      return name.endsWith('_total') ? [name, name.slice(0, -6)] : [name];
    case 'histogram':
      return [name, name + '_bucket', name + '_count', name + '_sum'];
    case 'summary':
      return [name, name + '_count', name + '_sum'];
    default:
      return [name];
  }
}

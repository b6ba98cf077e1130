/**
 * The base of our metric classes: label validation, the children map (one pre-bound child per label-value
 * combination), registration, and the `collect` view. Label hashing happens only in `labels()`: the returned
 * child holds its own number fields, so updates through it are a plain field write.
 */
import type { Collector, FamilyView, MetricType, ProtoSink, TextFormat } from './family.js';
import { compareSeries, labelLayout, validateLabelName, validateMetricName, type LabelLayout } from './format.js';
import { escapeName, exposeFamily, needsEscaping, type ExposedFamily } from './names.js';
import type { EscapingScheme } from './negotiate.js';
import type { TextSink } from './text-sink.js';

/** Anything our metrics can register in (the global {@link Registry} or one of your own). */
export interface MetricRegistry {
  /** Registers collectors; throws `DuplicateMetricError` for a name already registered. */
  mustRegister(...collectors: Collector[]): void;
}

let defaultRegistry: MetricRegistry | undefined;

/** With the `u` flag a surrogate pair is one code point, so this matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const ESCAPING_SCHEMES: readonly EscapingScheme[] = ['allow-utf-8', 'underscores', 'dots', 'values'];

/** Set once by the registry module: where metrics register when `registers` is not given. */
export function setDefaultMetricRegistry(r: MetricRegistry): void {
  defaultRegistry = r;
}

/**
 * Options common to all our metric classes. `L` is the union of the label names: given as a literal
 * (`labelNames: ['code', 'method'] as const`, or inferred by the constructor), `labels({...})` checks its keys.
 */
export interface MetricOptions<L extends string = string> {
  /**
   * Family name: non-empty UTF-8 text, best `[a-zA-Z_:][a-zA-Z0-9_:]*`. Other names (`my.metric`) are written
   * quoted to scrapers that negotiate `escaping=allow-utf-8` and escaped for the others. Counters should end in
   * `_total`.
   */
  name: string;
  /** Description written on the `# HELP` line. */
  help: string;
  /** Label names, in the order `labels(...)` takes their values: UTF-8 text not starting with `__`, best `[a-zA-Z_][a-zA-Z0-9_]*`. */
  labelNames?: readonly L[];
  /** Registries to register in; default the global registry; `[]` registers nowhere (use `mustRegister`). */
  registers?: readonly MetricRegistry[];
  /** Called on every collect before the values are read (sample gauges here). May be async; throwing fails the scrape. */
  collect?: () => void | Promise<void>;
  /**
   * Most label-value combinations (series) this family keeps (default: no limit). A new combination past it is
   * refused: `labels()` returns a series that is never exposed (updates to it are dropped), the refusal is counted
   * in `ctrlmetrics_series_refused_total{metric}` and logged once. Guards a scrape against a label fed by
   * unbounded input (user names, paths, ids).
   */
  maxSeries?: number;
}

/** Called when a family refuses a new series for its `maxSeries` (set once by the built-in metrics module). */
let onSeriesRefused: ((metric: string, maxSeries: number, first: boolean) => void) | undefined;

/** Sets what happens when a family refuses a series (counted and logged by src/metrics/builtin.ts). */
export function setSeriesRefusedHandler(h: typeof onSeriesRefused): void {
  onSeriesRefused = h;
}

/** A label value as accepted by `labels()`. */
export type LabelValue = string | number;

/** A child: one series, with its rendered (escaped) label string. */
export interface SeriesBase {
  readonly labelValues: readonly string[];
}

/**
 * Base class of {@link Counter}, {@link Gauge}, {@link Histogram}. `C` is the series object users hold, `K` its
 * storage cell, which the metric moves (see {@link Metric.view}).
 */
export abstract class Metric<C extends SeriesBase, K = unknown, L extends string = string> implements Collector {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** The order labels are written in (sorted by name, as client_golang's). */
  protected readonly layout: LabelLayout;
  abstract readonly type: MetricType;
  /** Series by label values: one Map level per label (no key strings to build and hash on lookup). */
  private readonly children = new Map<string, unknown>();
  /**
   * Every labelled series, and their cells in exposition order (by label values, as client_golang sorts them).
   * The cell array is rebuilt at the first collect after series were added or removed, with new cells allocated
   * in that order (see {@link relocate}), and never changed after, so a collect hands it out as is; a removed
   * series is dropped at once, not kept until a scrape.
   */
  private readonly series = new Set<C>();
  private cells: readonly K[] | undefined;
  /** The last view handed out, and the cells it renders (see {@link view}). */
  private viewed: FamilyView | undefined;
  private viewedList: readonly K[] = [];
  private readonly collectFn: (() => void | Promise<void>) | undefined;
  /** The child of a metric without labels. */
  protected unlabelled: C | undefined;
  /** The family's names per escaping scheme, when some name is not legacy (else undefined: the fast path). */
  private readonly exposed: ReadonlyMap<EscapingScheme, ExposedFamily> | undefined;
  /** The name as UTF-8, written at the start of each sample line. */
  protected readonly nameBytes: Uint8Array;
  /** The family's series limit (Infinity: none). */
  readonly maxSeries: number;
  /** New series refused for the limit since the family was made. */
  refusedSeries = 0;

  protected constructor(opts: MetricOptions<L>, reservedLabels: readonly string[] = []) {
    if (!opts || typeof opts !== 'object')
      throw new TypeError('metric options are required: {name, help, labelNames?}');
    validateMetricName(opts.name);
    if (typeof opts.help !== 'string' || opts.help === '')
      throw new TypeError(`metric ${opts.name}: help text is required`);
    const labelNames = [...(opts.labelNames ?? [])];
    for (const l of labelNames) validateLabelName(l, reservedLabels);
    if (new Set(labelNames).size !== labelNames.length)
      throw new TypeError(`metric ${opts.name}: duplicate label names`);
    this.name = opts.name;
    this.nameBytes = Buffer.from(opts.name, 'utf8');
    this.help = opts.help;
    this.labelNames = labelNames;
    this.layout = labelLayout(labelNames);
    this.collectFn = opts.collect;
    if (opts.maxSeries !== undefined && !(Number.isInteger(opts.maxSeries) && opts.maxSeries >= 1))
      throw new TypeError(`metric ${opts.name}: maxSeries must be a positive integer`);
    this.maxSeries = opts.maxSeries ?? Infinity;
    if (needsEscaping(this.name, labelNames)) {
      const escaped = labelNames.map((l) => escapeName(l, 'underscores', 'label'));
      const clash = escaped.findIndex((e, i) => escaped.indexOf(e) !== i);
      if (clash >= 0) {
        const first = labelNames[escaped.indexOf(escaped[clash])];
        throw new TypeError(
          `metric ${opts.name}: label names ${JSON.stringify(first)} and ${JSON.stringify(labelNames[clash])} are both written ${JSON.stringify(escaped[clash])} to scrapers without UTF-8 names (escaping=underscores, Prometheus 2): rename one`,
        );
      }
      this.exposed = new Map(ESCAPING_SCHEMES.map((s) => [s, exposeFamily(this.name, this.layout, s)]));
    }
  }

  /** Registers in `opts.registers` (default: the global registry). Called by subclasses once fully built. */
  protected registerIn(registers: readonly MetricRegistry[] | undefined): void {
    if (this.labelNames.length === 0) this.unlabelled = this.newChild([]);
    const targets = registers ?? (defaultRegistry ? [defaultRegistry] : []);
    for (const r of targets) r.mustRegister(this);
  }

  protected abstract newChild(labelValues: readonly string[]): C;

  /** The series' current cell. */
  protected abstract cellOf(c: C): K;

  /** Gives the series a new cell holding the same values (and its rendered labels), and returns it. */
  protected abstract relocate(c: C): K;

  /**
   * Renders units `[from, to)` of `list`; `x` is given when some name is not legacy: the names to write (the cells'
   * cached label text is then not used).
   */
  protected abstract renderChildren(
    list: readonly K[],
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): string;

  /**
   * Appends units `[from, to)` of `list` to `out`: the lines {@link renderChildren} makes. Subclasses write their
   * common lines without building strings; this default (names to escape, exemplars) writes the rendered text.
   */
  protected writeChildren(
    list: readonly K[],
    out: TextSink,
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void {
    out.text(this.renderChildren(list, format, from, to, x));
  }

  /** Writes units `[from, to)` of `list` as protobuf `Metric` messages; `x` as in {@link renderChildren} (no cached label bytes then). */
  protected abstract encodeChildren(
    list: readonly K[],
    out: ProtoSink,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void;

  protected abstract get linesPerChild(): number;

  /** The series of these values if it exists (`undefined` also for non-string values: the slow path converts them). */
  private find(values: readonly unknown[]): C | undefined {
    let node: Map<string, unknown> | undefined = this.children;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      const v = values[i];
      if (typeof v !== 'string') return undefined;
      node = node.get(v) as Map<string, unknown> | undefined;
      if (!node) return undefined;
    }
    const v = values[last];
    return typeof v === 'string' ? (node.get(v) as C | undefined) : undefined;
  }

  private child(values: readonly string[]): C {
    if (values.length === 0) return (this.unlabelled ??= this.newChild(values));
    // at the limit, a new combination gets a series of its own that is never stored or exposed (no Map level is
    // made for it either, so refused values cost no memory once dropped)
    if (this.series.size >= this.maxSeries && this.find(values) === undefined) return this.refuse(values);
    let node = this.children;
    const last = values.length - 1;
    for (let i = 0; i < last; i++) {
      let next = node.get(values[i]) as Map<string, unknown> | undefined;
      if (!next) node.set(values[i], (next = new Map()));
      node = next;
    }
    let c = node.get(values[last]) as C | undefined;
    if (!c) {
      this.checkUtf8(values);
      c = this.newChild(values);
      node.set(values[last], c);
      this.series.add(c);
      this.cells = undefined;
    }
    return c;
  }

  private refuse(values: readonly string[]): C {
    this.checkUtf8(values);
    this.refusedSeries++;
    onSeriesRefused?.(this.name, this.maxSeries, this.refusedSeries === 1);
    return this.newChild(values);
  }

  /**
   * Refuses a label value with a lone UTF-16 surrogate: it has no UTF-8 form, and written out as U+FFFD two
   * different values would become the same series (client_golang refuses invalid UTF-8 label values too).
   */
  private checkUtf8(values: readonly string[]): void {
    for (let i = 0; i < values.length; i++) {
      if (LONE_SURROGATE.test(values[i])) {
        throw new TypeError(
          `metric ${this.name}: the value of label ${this.labelNames[i]} is not valid UTF-8 (a lone UTF-16 surrogate in ${JSON.stringify(values[i])})`,
        );
      }
    }
  }

  private normalize(args: readonly unknown[]): string[] {
    let values: unknown[];
    if (args.length === 1 && args[0] !== null && typeof args[0] === 'object') {
      const obj = args[0] as Record<string, unknown>;
      for (const k of Object.keys(obj)) {
        if (!(this.labelNames as readonly string[]).includes(k))
          throw new TypeError(`metric ${this.name}: unknown label ${JSON.stringify(k)}`);
      }
      values = this.labelNames.map((n) => obj[n]);
    } else values = [...args];
    if (values.length !== this.labelNames.length) {
      throw new TypeError(
        `metric ${this.name}: expected ${this.labelNames.length} label values (${this.labelNames.join(', ')}), got ${values.length}`,
      );
    }
    return values.map((v, i) => {
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      throw new TypeError(`metric ${this.name}: label ${this.labelNames[i]} needs a string value`);
    });
  }

  /**
   * The child of one label-value combination, created on first use. Values are positional (in `labelNames`
   * order) or one object keyed by label name. Keep the child: updating it never looks labels up again.
   */
  labels(...values: LabelValue[] | [Record<L, LabelValue>]): C {
    // fast path: an existing series named by positional strings, found without allocating
    if (values.length === this.labelNames.length && values.length > 0) {
      const c = this.find(values);
      if (c) return c;
    }
    return this.child(this.normalize(values));
  }

  /** Deletes the series of one label-value combination (freed at once); returns whether it existed. */
  remove(...values: LabelValue[] | [Record<L, LabelValue>]): boolean {
    const normalized = this.normalize(values);
    if (normalized.length === 0) return false;
    const c = this.find(normalized);
    if (!c) return false;
    // unlink the leaf and prune the Map levels it leaves empty
    const path: Array<Map<string, unknown>> = [this.children];
    for (let i = 0; i < normalized.length - 1; i++) path.push(path[i].get(normalized[i]) as Map<string, unknown>);
    for (let i = normalized.length - 1; i >= 0; i--) {
      path[i].delete(normalized[i]);
      if (i > 0 && path[i].size > 0) break;
    }
    this.series.delete(c);
    this.cells = undefined;
    return true;
  }

  /** Deletes every series (a label-less metric is reset to zero). */
  reset(): void {
    this.children.clear();
    this.series.clear();
    this.cells = undefined;
    if (this.labelNames.length === 0) this.unlabelled = this.newChild([]);
  }

  /** The label-less child; throws for a metric with labels. */
  protected self(): C {
    if (!this.unlabelled)
      throw new TypeError(`metric ${this.name} has labels (${this.labelNames.join(', ')}): use .labels(...) first`);
    return this.unlabelled;
  }

  familyNames(): readonly string[] {
    return [this.name];
  }

  familyTypes(): readonly MetricType[] {
    return [this.type];
  }

  /** The family now; a promise only when the `collect` callback returns one (a scrape then waits for it). */
  collect(): FamilyView[] | Promise<FamilyView[]> {
    const sampled = this.collectFn?.call(this);
    if (sampled && typeof sampled.then === 'function') return Promise.resolve(sampled).then(() => [this.view()]);
    return [this.view()];
  }

  /** The names to write under `escaping` (client_golang's default `underscores` when not given), or undefined when all are legacy. */
  private exposedAs(escaping: EscapingScheme | undefined): ExposedFamily | undefined {
    return this.exposed && (this.exposed.get(escaping ?? 'underscores') ?? this.exposed.get('underscores'));
  }

  /**
   * The family with the series that exist now (values are read when rendered). The same object is handed out
   * until series are added or removed, so a scrape builds no new view per family.
   */
  view(): FamilyView {
    let list: readonly K[];
    if (this.unlabelled) {
      const cell = this.cellOf(this.unlabelled);
      if (this.viewed && this.viewedList[0] === cell) return this.viewed;
      list = [cell];
    } else if (this.cells) {
      if (this.viewed && this.viewedList === this.cells) return this.viewed;
      list = this.cells;
    } else {
      const layout = this.layout;
      const sorted = [...this.series].sort((a, b) => compareSeries(layout, a.labelValues, b.labelValues));
      list = this.cells = sorted.map((c) => this.relocate(c));
    }
    this.viewedList = list;
    return (this.viewed = {
      name: this.name,
      help: this.help,
      type: this.type,
      units: list.length,
      linesPerUnit: this.linesPerChild,
      render: (format, from, to, escaping) => this.renderChildren(list, format, from, to, this.exposedAs(escaping)),
      write: (out, format, from, to, escaping) =>
        this.writeChildren(list, out, format, from, to, this.exposedAs(escaping)),
      encode: (out, from, to, escaping) => this.encodeChildren(list, out, from, to, this.exposedAs(escaping)),
    });
  }
}

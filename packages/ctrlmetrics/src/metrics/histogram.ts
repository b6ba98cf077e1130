/** Histogram: observations counted in cumulative buckets, plus their sum and count. */
import { DEFAULT_BUCKETS } from './buckets.js';
import type { MetricType, ProtoSink, TextFormat } from './family.js';
import { closedLabels, formatFloat, formatFloatLabel, openLabels } from './format.js';
import {
  bucketOf,
  newExemplar,
  openMetricsExemplar,
  type Exemplar,
  type ExemplarLabels,
  type ExemplarsUsed,
} from './exemplar.js';
import { Metric, type MetricOptions } from './metric.js';
import type { TextSink } from './text-sink.js';
import { labelPairs, sampleOpen, sampleStart, type ExposedFamily } from './names.js';
import {
  applyDueReset,
  nativeConfig,
  newNativeState,
  observeNative,
  type NativeConfig,
  type NativeState,
} from './native-histogram.js';
// for the {@link} tags of the options' docs
/* eslint-disable @typescript-eslint/no-unused-vars */
import type {
  DEFAULT_NATIVE_HISTOGRAM_ZERO_THRESHOLD,
  NATIVE_HISTOGRAM_ZERO_THRESHOLD_ZERO,
} from './native-histogram.js';
/* eslint-enable @typescript-eslint/no-unused-vars */

/**
 * The storage of a histogram series. A histogram re-allocates its series' cells in exposition order whenever
 * that order changes, so a render walks memory in order (see `Metric.view`).
 */
export interface HistogramCell {
  /** Non-cumulative counts per finite bucket (cumulated when rendered). */
  readonly counts: Float64Array;
  sum: number;
  count: number;
  /** `{labels,` and `{labels} ` as rendered (the same in both formats); empty until the metric first places the cell. */
  open: string;
  text: string;
  /** The label values in declared order (the series' own array). */
  readonly values: readonly string[];
  /** The label pairs as protobuf bytes, once a protobuf scrape has encoded them. */
  pb: Uint8Array | undefined;
  /** Unix ms of the series' creation (its last reset): the protobuf created timestamp. */
  created: number;
  /** The native buckets, for a histogram with a native bucket factor. */
  native: NativeState | undefined;
  /** The latest exemplar per classic bucket, the last for `+Inf` (`observeWithExemplar`); allocated on the first. */
  exemplars: (Exemplar | undefined)[] | undefined;
}

/** One histogram series, pre-bound: `observe()` finds the bucket and bumps three fields. */
export class HistogramChild {
  /** @internal Its storage; the metric gives it a new one when the exposition order changes. */
  cell: HistogramCell;

  private readonly observeClassicFn: ((v: number) => void) | undefined;

  /** @internal Made by its metric's `labels()`. */
  constructor(
    readonly labelValues: readonly string[],
    private readonly bounds: Float64Array,
    private readonly nativeCfg?: NativeConfig,
    private readonly shared: ExemplarsUsed = { metric: '', now: Date.now, on: false },
  ) {
    const labelled = labelValues.length > 0;
    const created = shared.now();
    this.cell = {
      counts: new Float64Array(bounds.length),
      sum: 0,
      count: 0,
      open: labelled ? '' : '{',
      text: labelled ? '' : ' ',
      values: labelValues,
      pb: undefined,
      created,
      native: nativeCfg ? newNativeState(nativeCfg, created) : undefined,
      exemplars: undefined,
    };
    if (nativeCfg) this.observeClassicFn = (v) => this.observeClassic(v);
  }

  /** Observes a value (counted in its bucket, added to the sum). */
  observe(v: number): void {
    const native = this.nativeCfg;
    if (native === undefined) {
      this.observeClassic(v);
      return;
    }
    if (this.cell.native!.resetAt !== 0) applyDueReset(this.cell, native);
    this.observeClassic(v);
    observeNative(this.cell, native, v, this.observeClassicFn!);
  }

  private observeClassic(v: number): void {
    const b = this.bounds;
    const n = b.length;
    const cell = this.cell;
    let i = 0;
    // `!(v <= b[i])` sends NaN to +Inf only, like client_golang
    while (i < n && !(v <= b[i])) i++;
    if (i < n) cell.counts[i]++;
    cell.sum += v;
    cell.count++;
  }

  /**
   * Observes `v` and keeps an exemplar of it in the classic bucket it counts in (client_golang's
   * `ObserveWithExemplar`): `labels` such as `{ trace_id: '…' }`, at most 128 runes of names and values together,
   * written in OpenMetrics and protobuf with `v` and the time. The latest exemplar of a bucket replaces the one
   * before. Invalid labels throw and observe nothing.
   */
  observeWithExemplar(v: number, labels: ExemplarLabels): void {
    const shared = this.shared;
    const e = newExemplar(labels, v, shared.now(), shared.metric);
    this.observe(v);
    const cell = this.cell;
    (cell.exemplars ??= new Array<Exemplar | undefined>(this.bounds.length + 1).fill(undefined))[
      bucketOf(this.bounds, v)
    ] = e;
    shared.on = true;
  }

  /** Starts a timer; the returned function observes the elapsed seconds and returns them. */
  startTimer(): () => number {
    const start = performance.now();
    return () => {
      const s = (performance.now() - start) / 1000;
      this.observe(s);
      return s;
    };
  }
}

/**
 * Options of {@link Histogram}. The `nativeHistogram*` options are client_golang's `HistogramOpts` fields of the
 * same names (durations in milliseconds): a bucket factor above 1 adds native (sparse, exponential) buckets, sent
 * in the protobuf format, which Prometheus with native histograms on asks for; the text formats show the classic
 * buckets only.
 */
export interface HistogramOptions<L extends string = string> extends MetricOptions<L> {
  /**
   * Classic upper bounds, strictly increasing (`+Inf` is implied). Default: {@link DEFAULT_BUCKETS}, or none
   * when a native bucket factor is set (as client_golang: give both to keep classic buckets beside native ones).
   */
  buckets?: readonly number[];
  /**
   * Native buckets: each bucket's upper bound at most this factor times its lower bound (> 1; the resolution is
   * the largest power-of-two schema within it: 1.1 gives schema 3, 8 buckets per power of 2). Default: off.
   */
  nativeHistogramBucketFactor?: number;
  /**
   * Observations of absolute value at most this go to the zero bucket. 0 (the default): 2^-128
   * ({@link DEFAULT_NATIVE_HISTOGRAM_ZERO_THRESHOLD}); {@link NATIVE_HISTOGRAM_ZERO_THRESHOLD_ZERO} (-1): exactly 0.
   */
  nativeHistogramZeroThreshold?: number;
  /**
   * Most native buckets (positive and negative) a series keeps; beyond it, one step per observation: a reset if
   * `nativeHistogramMinResetDuration` has passed since the last, a wider zero bucket up to
   * `nativeHistogramMaxZeroThreshold`, else half the resolution. 0 (the default): no limit.
   */
  nativeHistogramMaxBucketNumber?: number;
  /** Milliseconds a series must exist (since creation or its last reset) before the bucket limit may reset it. 0: never. */
  nativeHistogramMinResetDuration?: number;
  /** How wide the zero bucket may grow to stay within the bucket limit. 0 (the default): it does not grow. */
  nativeHistogramMaxZeroThreshold?: number;
  /** The clock of the native buckets' resets and of exemplars' timestamps, Unix ms (for tests). Default: `Date.now`. */
  now?: () => number;
}

/** A histogram (client_golang `HistogramVec`). */
export class Histogram<L extends string = string> extends Metric<HistogramChild, HistogramCell, L> {
  readonly type: MetricType = 'histogram';
  readonly buckets: readonly number[];
  private readonly bounds: Float64Array;
  /** `le="0.1"} ` per bucket, then `le="+Inf"} `, per format. */
  private readonly leText: string[];
  private readonly leOm: string[];
  /** The same as UTF-8, and the sample names' bytes, for the byte renderer. */
  private readonly leTextBytes: Uint8Array[];
  private readonly leOmBytes: Uint8Array[];
  private readonly bucketBytes: Uint8Array;
  private readonly sumBytes: Uint8Array;
  private readonly countBytes: Uint8Array;
  private readonly native: NativeConfig | undefined;
  private readonly exemplars: ExemplarsUsed;

  constructor(opts: HistogramOptions<L>) {
    super(opts, ['le']);
    this.exemplars = { metric: this.name, now: opts.now ?? Date.now, on: false };
    this.native = nativeConfig(this.name, opts);
    const buckets = [...(opts.buckets ?? (this.native ? [] : DEFAULT_BUCKETS))].filter((b) => b !== Infinity);
    for (let i = 0; i < buckets.length; i++) {
      if (typeof buckets[i] !== 'number' || Number.isNaN(buckets[i]))
        throw new TypeError(`histogram ${this.name}: bucket bounds must be numbers`);
      if (i > 0 && !(buckets[i] > buckets[i - 1]))
        throw new TypeError(`histogram ${this.name}: bucket bounds must be strictly increasing`);
    }
    this.buckets = buckets;
    this.bounds = Float64Array.from(buckets);
    this.leText = [...buckets.map((b) => `le="${formatFloatLabel(b, false)}"} `), 'le="+Inf"} '];
    this.leOm = [...buckets.map((b) => `le="${formatFloatLabel(b, true)}"} `), 'le="+Inf"} '];
    this.leTextBytes = this.leText.map((t) => Buffer.from(t));
    this.leOmBytes = this.leOm.map((t) => Buffer.from(t));
    this.bucketBytes = Buffer.from(this.name + '_bucket');
    this.sumBytes = Buffer.from(this.name + '_sum');
    this.countBytes = Buffer.from(this.name + '_count');
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): HistogramChild {
    return new HistogramChild(labelValues, this.bounds, this.native, this.exemplars);
  }

  protected cellOf(c: HistogramChild): HistogramCell {
    return c.cell;
  }

  protected relocate(c: HistogramChild): HistogramCell {
    const old = c.cell;
    return (c.cell = {
      counts: old.counts.slice(),
      sum: old.sum,
      count: old.count,
      open: old.open || openLabels(this.layout, c.labelValues),
      text: old.text || closedLabels(this.layout, c.labelValues),
      values: old.values,
      pb: old.pb,
      created: old.created,
      native: old.native,
      exemplars: old.exemplars,
    });
  }

  protected get linesPerChild(): number {
    return this.bounds.length + 3;
  }

  /** Observes a value (counted in its bucket, added to the sum). */
  observe(v: number): void {
    this.self().observe(v);
  }

  /** {@link HistogramChild.observeWithExemplar} on a histogram without labels. */
  observeWithExemplar(v: number, labels: ExemplarLabels): void {
    this.self().observeWithExemplar(v, labels);
  }

  /** Starts a timer; the returned function observes the elapsed seconds and returns them. */
  startTimer(): () => number {
    return this.self().startTimer();
  }

  protected encodeChildren(
    list: readonly HistogramCell[],
    out: ProtoSink,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void {
    const names = x ? x.proto : this.layout;
    const bounds = this.bounds;
    const native = this.native;
    for (let i = from; i < to; i++) {
      const c = list[i];
      if (native !== undefined && c.native!.resetAt !== 0) applyDueReset(c, native);
      // escaped names are encoded afresh: the cell caches only the label bytes of its names as registered
      out.histogram(
        names,
        x ? { values: c.values, pb: undefined } : c,
        bounds,
        c.counts,
        false,
        c.sum,
        c.count,
        c.created,
        c.native,
        c.exemplars,
      );
    }
  }

  protected override writeChildren(
    list: readonly HistogramCell[],
    out: TextSink,
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void {
    if (x !== undefined || (format === 'openmetrics' && this.exemplars.on)) {
      super.writeChildren(list, out, format, from, to, x);
      return;
    }
    const le = format === 'openmetrics' ? this.leOmBytes : this.leTextBytes;
    const bucket = this.bucketBytes;
    const n = this.bounds.length;
    const native = this.native;
    for (let i = from; i < to; i++) {
      const c = list[i];
      if (native !== undefined && c.native!.resetAt !== 0) applyDueReset(c, native);
      const open = c.open;
      const counts = c.counts;
      let cum = 0;
      for (let b = 0; b < n; b++) {
        cum += counts[b];
        out.bytes(bucket);
        out.text(open);
        out.bytes(le[b]);
        out.number(cum);
        out.byte(0x0a);
      }
      out.bytes(bucket);
      out.text(open);
      out.bytes(le[n]);
      out.number(c.count);
      out.byte(0x0a);
      out.bytes(this.sumBytes);
      out.text(c.text);
      out.number(c.sum);
      out.byte(0x0a);
      out.bytes(this.countBytes);
      out.text(c.text);
      out.number(c.count);
      out.byte(0x0a);
    }
  }

  protected renderChildren(
    list: readonly HistogramCell[],
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): string {
    const le = format === 'openmetrics' ? this.leOm : this.leText;
    const name = x ? x.name : this.name;
    // with names to escape or quote, a sample's name may go inside the braces: each line start is built whole
    const bucket = x ? '' : name + '_bucket';
    const sum = x ? '' : name + '_sum';
    const count = x ? '' : name + '_count';
    const n = this.bounds.length;
    const native = this.native;
    const withExemplars = format === 'openmetrics' && this.exemplars.on;
    let s = '';
    for (let i = from; i < to; i++) {
      const c = list[i];
      if (native !== undefined && c.native!.resetAt !== 0) applyDueReset(c, native);
      let open = c.open;
      let closedSum = c.text;
      let closedCount = c.text;
      if (x) {
        const pairs = labelPairs(x, c.values);
        open = sampleOpen(name + '_bucket', pairs);
        closedSum = sampleStart(name + '_sum', pairs);
        closedCount = sampleStart(name + '_count', pairs);
      }
      const counts = c.counts;
      const ex = withExemplars ? c.exemplars : undefined;
      let cum = 0;
      for (let b = 0; b < n; b++) {
        cum += counts[b];
        s += bucket + open + le[b] + formatFloat(cum) + (ex === undefined ? '\n' : openMetricsExemplar(ex[b]) + '\n');
      }
      const total = formatFloat(c.count);
      s +=
        bucket +
        open +
        le[n] +
        total +
        (ex === undefined ? '\n' : openMetricsExemplar(ex[n]) + '\n') +
        sum +
        closedSum +
        formatFloat(c.sum) +
        '\n' +
        count +
        closedCount +
        total +
        '\n';
    }
    return s;
  }
}

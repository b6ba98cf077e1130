/** Histogram: observations counted in cumulative buckets, plus their sum and count. */
import { DEFAULT_BUCKETS } from './buckets.js';
import type { MetricType, ProtoSink, TextFormat } from './family.js';
import { closedLabels, formatFloat, formatFloatLabel, openLabels } from './format.js';
import { Metric, type MetricOptions } from './metric.js';

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
  readonly created: number;
}

/** One histogram series, pre-bound: `observe()` finds the bucket and bumps three fields. */
export class HistogramChild {
  /** @internal Its storage; the metric gives it a new one when the exposition order changes. */
  cell: HistogramCell;

  constructor(
    readonly labelValues: readonly string[],
    private readonly bounds: Float64Array,
  ) {
    const labelled = labelValues.length > 0;
    this.cell = { counts: new Float64Array(bounds.length), sum: 0, count: 0, open: labelled ? '' : '{', text: labelled ? '' : ' ', values: labelValues, pb: undefined, created: Date.now() };
  }

  observe(v: number): void {
    const b = this.bounds;
    const n = b.length;
    const cell = this.cell;
    let i = 0;
    // `!(v <= b[i])` sends NaN to +Inf only, like client_golang
    while (i < n && !(v <= b[i]!)) i++;
    if (i < n) cell.counts[i]!++;
    cell.sum += v;
    cell.count++;
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

/** Options of {@link Histogram}. */
export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing (`+Inf` is implied). Default: {@link DEFAULT_BUCKETS}. */
  buckets?: readonly number[];
}

/** A histogram (client_golang `HistogramVec`). */
export class Histogram extends Metric<HistogramChild, HistogramCell> {
  readonly type: MetricType = 'histogram';
  readonly buckets: readonly number[];
  private readonly bounds: Float64Array;
  /** `le="0.1"} ` per bucket, then `le="+Inf"} `, per format. */
  private readonly leText: string[];
  private readonly leOm: string[];

  constructor(opts: HistogramOptions) {
    super(opts, ['le']);
    const buckets = [...(opts.buckets ?? DEFAULT_BUCKETS)].filter((b) => b !== Infinity);
    for (let i = 0; i < buckets.length; i++) {
      if (typeof buckets[i] !== 'number' || Number.isNaN(buckets[i])) throw new TypeError(`histogram ${this.name}: bucket bounds must be numbers`);
      if (i > 0 && !(buckets[i]! > buckets[i - 1]!)) throw new TypeError(`histogram ${this.name}: bucket bounds must be strictly increasing`);
    }
    this.buckets = buckets;
    this.bounds = Float64Array.from(buckets);
    this.leText = [...buckets.map((b) => `le="${formatFloatLabel(b, false)}"} `), 'le="+Inf"} '];
    this.leOm = [...buckets.map((b) => `le="${formatFloatLabel(b, true)}"} `), 'le="+Inf"} '];
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): HistogramChild {
    return new HistogramChild(labelValues, this.bounds);
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
    });
  }

  protected get linesPerChild(): number {
    return this.bounds.length + 3;
  }

  observe(v: number): void {
    this.self().observe(v);
  }

  startTimer(): () => number {
    return this.self().startTimer();
  }

  protected encodeChildren(list: readonly HistogramCell[], out: ProtoSink, from: number, to: number): void {
    const layout = this.layout;
    const bounds = this.bounds;
    for (let i = from; i < to; i++) {
      const c = list[i]!;
      out.histogram(layout, c, bounds, c.counts, false, c.sum, c.count, c.created);
    }
  }

  protected renderChildren(list: readonly HistogramCell[], format: TextFormat, from: number, to: number): string {
    const le = format === 'openmetrics' ? this.leOm : this.leText;
    const bucket = this.name + '_bucket';
    const sum = this.name + '_sum';
    const count = this.name + '_count';
    const n = this.bounds.length;
    let s = '';
    for (let i = from; i < to; i++) {
      const c = list[i]!;
      const open = c.open;
      const closed = c.text;
      const counts = c.counts;
      let cum = 0;
      for (let b = 0; b < n; b++) {
        cum += counts[b]!;
        s += bucket + open + le[b] + formatFloat(cum) + '\n';
      }
      const total = formatFloat(c.count);
      s += bucket + open + le[n] + total + '\n' + sum + closed + formatFloat(c.sum) + '\n' + count + closed + total + '\n';
    }
    return s;
  }
}

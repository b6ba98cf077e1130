/** Histogram: observations counted in cumulative buckets, plus their sum and count. */
import { DEFAULT_BUCKETS } from './buckets.js';
import type { ExpositionFormat, MetricType } from './family.js';
import { closedLabels, formatFloat, formatFloatLabel, openLabels } from './format.js';
import { Metric, type MetricOptions } from './metric.js';

/** One histogram series, pre-bound: `observe()` finds the bucket and bumps three fields. */
export class HistogramChild {
  /** Non-cumulative counts per finite bucket (cumulated when rendered). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  /** `{labels,` and `{labels} ` as rendered, built on first render (the same in both formats). */
  labelOpen: string | undefined;
  labelText: string | undefined;

  constructor(
    readonly labelValues: readonly string[],
    private readonly bounds: Float64Array,
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(v: number): void {
    const b = this.bounds;
    const n = b.length;
    let i = 0;
    // `!(v <= b[i])` sends NaN to +Inf only, like client_golang
    while (i < n && !(v <= b[i]!)) i++;
    if (i < n) this.counts[i]!++;
    this.sum += v;
    this.count++;
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
export class Histogram extends Metric<HistogramChild> {
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

  protected get linesPerChild(): number {
    return this.bounds.length + 3;
  }

  observe(v: number): void {
    this.self().observe(v);
  }

  startTimer(): () => number {
    return this.self().startTimer();
  }

  protected renderChildren(list: readonly HistogramChild[], format: ExpositionFormat, from: number, to: number): string {
    const le = format === 'openmetrics' ? this.leOm : this.leText;
    const layout = this.layout;
    const bucket = this.name + '_bucket';
    const sum = this.name + '_sum';
    const count = this.name + '_count';
    const n = this.bounds.length;
    let s = '';
    for (let i = from; i < to; i++) {
      const c = list[i]!;
      const open = (c.labelOpen ??= openLabels(layout, c.labelValues));
      const closed = (c.labelText ??= closedLabels(layout, c.labelValues));
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

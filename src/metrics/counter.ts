/**
 * Counter: a value that only goes up. Both formats write its samples under the name as given; OpenMetrics names
 * the family without `_total`, or types a counter whose name lacks `_total` as `unknown` (as client_golang does).
 */
import type { ExpositionFormat, MetricType } from './family.js';
import { renderScalarLines } from './format.js';
import { Metric, type MetricOptions } from './metric.js';

/** One counter series, pre-bound: `inc()` is a field update. */
export class CounterChild {
  value = 0;
  /** `{labels} ` as rendered, built on first render. */
  labelText: string | undefined;

  constructor(
    readonly labelValues: readonly string[],
    private readonly metricName: string,
  ) {}

  /** Adds `v` (default 1); a negative or NaN amount throws. */
  inc(v = 1): void {
    if (!(v >= 0)) throw new RangeError(`counter ${this.metricName}: increment must be a non-negative number, got ${v}`);
    this.value += v;
  }

  /** The current value. */
  get(): number {
    return this.value;
  }
}

/** Options of {@link Counter}. */
export type CounterOptions = MetricOptions;

/** A cumulative counter (client_golang `CounterVec`). */
export class Counter extends Metric<CounterChild> {
  readonly type: MetricType = 'counter';

  constructor(opts: CounterOptions) {
    super(opts);
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): CounterChild {
    return new CounterChild(labelValues, this.name);
  }

  protected get linesPerChild(): number {
    return 1;
  }

  /** Adds `v` (default 1) to a counter without labels. */
  inc(v = 1): void {
    this.self().inc(v);
  }

  /** The value of a counter without labels. */
  get(): number {
    return this.self().value;
  }

  protected renderChildren(list: readonly CounterChild[], _format: ExpositionFormat, from: number, to: number): string {
    return renderScalarLines(this.name, this.layout, list, from, to);
  }
}

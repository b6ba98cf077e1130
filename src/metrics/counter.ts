/**
 * Counter: a value that only goes up. Both formats write its samples under the name as given; OpenMetrics names
 * the family without `_total`, or types a counter whose name lacks `_total` as `unknown` (as client_golang does).
 */
import type { ExpositionFormat, MetricType } from './family.js';
import { closedLabels, renderScalarLines, type ScalarCell } from './format.js';
import { Metric, type MetricOptions } from './metric.js';

/** One counter series, pre-bound: `inc()` is a field update. */
export class CounterChild {
  /** @internal Its storage; the metric gives it a new one when the exposition order changes. */
  cell: ScalarCell;

  constructor(
    readonly labelValues: readonly string[],
    private readonly metricName: string,
  ) {
    this.cell = { value: 0, text: labelValues.length ? '' : ' ' };
  }

  /** Adds `v` (default 1); a negative or NaN amount throws. */
  inc(v = 1): void {
    if (!(v >= 0)) throw new RangeError(`counter ${this.metricName}: increment must be a non-negative number, got ${v}`);
    this.cell.value += v;
  }

  /** The current value. */
  get(): number {
    return this.cell.value;
  }

  /** The current value (writable for collectors that mirror an external total). */
  get value(): number {
    return this.cell.value;
  }

  set value(v: number) {
    this.cell.value = v;
  }
}

/** Options of {@link Counter}. */
export type CounterOptions = MetricOptions;

/** A cumulative counter (client_golang `CounterVec`). */
export class Counter extends Metric<CounterChild, ScalarCell> {
  readonly type: MetricType = 'counter';

  constructor(opts: CounterOptions) {
    super(opts);
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): CounterChild {
    return new CounterChild(labelValues, this.name);
  }

  protected cellOf(c: CounterChild): ScalarCell {
    return c.cell;
  }

  protected relocate(c: CounterChild): ScalarCell {
    const old = c.cell;
    return (c.cell = { value: old.value, text: old.text || closedLabels(this.layout, c.labelValues) });
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
    return this.self().cell.value;
  }

  protected renderChildren(list: readonly ScalarCell[], _format: ExpositionFormat, from: number, to: number): string {
    return renderScalarLines(this.name, list, from, to);
  }
}

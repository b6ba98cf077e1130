/**
 * Counter: a value that only goes up. Both formats write its samples under the name as given; OpenMetrics names
 * the family without `_total`, or types a counter whose name lacks `_total` as `unknown` (as client_golang does).
 */
import type { MetricType, ProtoSink, TextFormat } from './family.js';
import { movedScalarCell, renderScalarLines, scalarCell, type ScalarCell } from './format.js';
import { renderExposedScalarLines, type ExposedFamily } from './names.js';
import { Metric, type MetricOptions } from './metric.js';

/** One counter series, pre-bound: `inc()` is a field update. */
export class CounterChild {
  /** @internal Its storage; the metric gives it a new one when the exposition order changes. */
  cell: ScalarCell;

  constructor(
    readonly labelValues: readonly string[],
    private readonly metricName: string,
  ) {
    this.cell = scalarCell(labelValues, Date.now());
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
    return (c.cell = movedScalarCell(c.cell, this.layout));
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

  protected renderChildren(list: readonly ScalarCell[], _format: TextFormat, from: number, to: number, x?: ExposedFamily): string {
    return x ? renderExposedScalarLines(x, list, from, to) : renderScalarLines(this.name, list, from, to);
  }

  protected encodeChildren(list: readonly ScalarCell[], out: ProtoSink, from: number, to: number, x?: ExposedFamily): void {
    const names = x ? x.proto : this.layout;
    for (let i = from; i < to; i++) {
      const c = list[i]!;
      // escaped names are encoded afresh: the cell caches only the label bytes of its names as registered
      out.counter(names, x ? { values: c.values, pb: undefined } : c, c.value, c.created);
    }
  }
}

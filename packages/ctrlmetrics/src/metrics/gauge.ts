/** Gauge: a value that goes up and down. */
import type { MetricType, ProtoSink, TextFormat } from './family.js';
import { movedScalarCell, renderScalarLines, scalarCell, writeScalarLines, type ScalarCell } from './format.js';
import { renderScalarLinesSlow } from './exemplar.js';
import { labelPairs, sampleStart, type ExposedFamily } from './names.js';
import { Metric, type MetricOptions } from './metric.js';
import type { TextSink } from './text-sink.js';

/** One gauge series, pre-bound: updates are field writes. */
export class GaugeChild {
  /** @internal Its storage; the metric gives it a new one when the exposition order changes. */
  cell: ScalarCell;

  constructor(readonly labelValues: readonly string[]) {
    this.cell = scalarCell(labelValues, 0);
  }

  /** Sets the value. */
  set(v: number): void {
    this.cell.value = v;
  }

  /** Adds `v` (default 1). */
  inc(v = 1): void {
    this.cell.value += v;
  }

  /** Subtracts `v` (default 1). */
  dec(v = 1): void {
    this.cell.value -= v;
  }

  /** Sets the gauge to the current Unix time in seconds. */
  setToCurrentTime(): void {
    this.cell.value = Date.now() / 1000;
  }

  /** Starts a timer; the returned function sets the gauge to the elapsed seconds and returns them. */
  startTimer(): () => number {
    const start = performance.now();
    return () => {
      const s = (performance.now() - start) / 1000;
      this.cell.value = s;
      return s;
    };
  }

  /** The current value. */
  get(): number {
    return this.cell.value;
  }

  /** The current value (also writable, as `set()`). */
  get value(): number {
    return this.cell.value;
  }

  set value(v: number) {
    this.cell.value = v;
  }
}

/** Options of {@link Gauge}. */
export type GaugeOptions<L extends string = string> = MetricOptions<L>;

/** A gauge (client_golang `GaugeVec`). */
export class Gauge<L extends string = string> extends Metric<GaugeChild, ScalarCell, L> {
  readonly type: MetricType = 'gauge';

  constructor(opts: GaugeOptions<L>) {
    super(opts);
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): GaugeChild {
    return new GaugeChild(labelValues);
  }

  protected cellOf(c: GaugeChild): ScalarCell {
    return c.cell;
  }

  protected relocate(c: GaugeChild): ScalarCell {
    return (c.cell = movedScalarCell(c.cell, this.layout));
  }

  protected get linesPerChild(): number {
    return 1;
  }

  /** Sets the value. */
  set(v: number): void {
    this.self().set(v);
  }

  /** Adds `v` (default 1). */
  inc(v = 1): void {
    this.self().inc(v);
  }

  /** Subtracts `v` (default 1). */
  dec(v = 1): void {
    this.self().dec(v);
  }

  /** Sets the gauge to the current Unix time in seconds. */
  setToCurrentTime(): void {
    this.self().setToCurrentTime();
  }

  /** Starts a timer; the returned function sets the gauge to the elapsed seconds and returns them. */
  startTimer(): () => number {
    return this.self().startTimer();
  }

  /** The current value. */
  get(): number {
    return this.self().cell.value;
  }

  protected renderChildren(
    list: readonly ScalarCell[],
    _format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): string {
    return x
      ? renderScalarLinesSlow(list, from, to, (c) => sampleStart(x.name, labelPairs(x, c.values)), false)
      : renderScalarLines(this.name, list, from, to);
  }

  protected override writeChildren(
    list: readonly ScalarCell[],
    out: TextSink,
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void {
    if (x === undefined) writeScalarLines(out, this.nameBytes, list, from, to);
    else super.writeChildren(list, out, format, from, to, x);
  }

  protected encodeChildren(
    list: readonly ScalarCell[],
    out: ProtoSink,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void {
    const names = x ? x.proto : this.layout;
    for (let i = from; i < to; i++) {
      const c = list[i];
      // escaped names are encoded afresh: the cell caches only the label bytes of its names as registered
      out.gauge(names, x ? { values: c.values, pb: undefined } : c, c.value);
    }
  }
}

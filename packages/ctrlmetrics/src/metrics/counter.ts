/**
 * Counter: a value that only goes up. Both formats write its samples under the name as given; OpenMetrics names
 * the family without `_total`, or types a counter whose name lacks `_total` as `unknown` (as client_golang does).
 */
import type { MetricType, ProtoSink, TextFormat } from './family.js';
import { movedScalarCell, renderScalarLines, scalarCell, writeScalarLines, type ScalarCell } from './format.js';
import { newExemplar, renderScalarLinesSlow, type ExemplarLabels, type ExemplarsUsed } from './exemplar.js';
import { labelPairs, sampleStart, type ExposedFamily } from './names.js';
import { Metric, type MetricOptions } from './metric.js';
import type { TextSink } from './text-sink.js';

/** One counter series, pre-bound: `inc()` is a field update. */
export class CounterChild {
  /** @internal Its storage; the metric gives it a new one when the exposition order changes. */
  cell: ScalarCell;

  /** @internal Made by its metric's `labels()`. */
  constructor(
    readonly labelValues: readonly string[],
    private readonly shared: ExemplarsUsed,
  ) {
    this.cell = scalarCell(labelValues, shared.now());
  }

  /** Adds `v` (default 1); a negative or NaN amount throws. */
  inc(v = 1): void {
    if (!(v >= 0))
      throw new RangeError(`counter ${this.shared.metric}: increment must be a non-negative number, got ${v}`);
    this.cell.value += v;
  }

  /**
   * Adds `v` and keeps an exemplar of it (client_golang's `AddWithExemplar`): `labels` such as
   * `{ trace_id: '…' }`, at most 128 runes of names and values together, written in OpenMetrics and protobuf
   * with `v` and the time. The latest exemplar replaces the one before. Invalid labels throw and add nothing.
   */
  addWithExemplar(v: number, labels: ExemplarLabels): void {
    const shared = this.shared;
    if (!(v >= 0)) throw new RangeError(`counter ${shared.metric}: increment must be a non-negative number, got ${v}`);
    const e = newExemplar(labels, v, shared.now(), shared.metric);
    this.cell.value += v;
    this.cell.exemplar = e;
    shared.on = true;
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
export interface CounterOptions<L extends string = string> extends MetricOptions<L> {
  /** The clock of series' created timestamps and exemplars' timestamps, Unix ms (for tests). Default: `Date.now`. */
  now?: () => number;
}

/** A cumulative counter (client_golang `CounterVec`). */
export class Counter<L extends string = string> extends Metric<CounterChild, ScalarCell, L> {
  readonly type: MetricType = 'counter';
  private readonly exemplars: ExemplarsUsed;

  constructor(opts: CounterOptions<L>) {
    super(opts);
    this.exemplars = { metric: this.name, now: opts.now ?? Date.now, on: false };
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): CounterChild {
    return new CounterChild(labelValues, this.exemplars);
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

  /** {@link CounterChild.addWithExemplar} on a counter without labels. */
  addWithExemplar(v: number, labels: ExemplarLabels): void {
    this.self().addWithExemplar(v, labels);
  }

  /** The value of a counter without labels. */
  get(): number {
    return this.self().cell.value;
  }

  protected renderChildren(
    list: readonly ScalarCell[],
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): string {
    const om = format === 'openmetrics' && this.exemplars.on;
    if (x === undefined && !om) return renderScalarLines(this.name, list, from, to);
    const name = this.name;
    return renderScalarLinesSlow(
      list,
      from,
      to,
      x ? (c) => sampleStart(x.name, labelPairs(x, c.values)) : (c) => name + c.text,
      om,
    );
  }

  protected override writeChildren(
    list: readonly ScalarCell[],
    out: TextSink,
    format: TextFormat,
    from: number,
    to: number,
    x?: ExposedFamily,
  ): void {
    if (x === undefined && !(format === 'openmetrics' && this.exemplars.on))
      writeScalarLines(out, this.nameBytes, list, from, to);
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
      out.counter(names, x ? { values: c.values, pb: undefined } : c, c.value, c.created, c.exemplar);
    }
  }
}

/** Gauge: a value that goes up and down. */
import type { ExpositionFormat, MetricType } from './family.js';
import { renderScalarLines } from './format.js';
import { Metric, type MetricOptions } from './metric.js';

/** One gauge series, pre-bound: updates are field writes. */
export class GaugeChild {
  value = 0;
  /** `{labels} ` as rendered, built on first render. */
  labelText: string | undefined;

  constructor(readonly labelValues: readonly string[]) {}

  set(v: number): void {
    this.value = v;
  }

  inc(v = 1): void {
    this.value += v;
  }

  dec(v = 1): void {
    this.value -= v;
  }

  /** Sets the gauge to the current Unix time in seconds. */
  setToCurrentTime(): void {
    this.value = Date.now() / 1000;
  }

  /** Starts a timer; the returned function sets the gauge to the elapsed seconds and returns them. */
  startTimer(): () => number {
    const start = performance.now();
    return () => {
      const s = (performance.now() - start) / 1000;
      this.value = s;
      return s;
    };
  }

  get(): number {
    return this.value;
  }
}

/** Options of {@link Gauge}. */
export type GaugeOptions = MetricOptions;

/** A gauge (client_golang `GaugeVec`). */
export class Gauge extends Metric<GaugeChild> {
  readonly type: MetricType = 'gauge';

  constructor(opts: GaugeOptions) {
    super(opts);
    this.registerIn(opts.registers);
  }

  protected newChild(labelValues: readonly string[]): GaugeChild {
    return new GaugeChild(labelValues);
  }

  protected get linesPerChild(): number {
    return 1;
  }

  set(v: number): void {
    this.self().set(v);
  }

  inc(v = 1): void {
    this.self().inc(v);
  }

  dec(v = 1): void {
    this.self().dec(v);
  }

  setToCurrentTime(): void {
    this.self().setToCurrentTime();
  }

  startTimer(): () => number {
    return this.self().startTimer();
  }

  get(): number {
    return this.self().value;
  }

  protected renderChildren(list: readonly GaugeChild[], _format: ExpositionFormat, from: number, to: number): string {
    return renderScalarLines(this.name, this.layout, list, from, to);
  }
}

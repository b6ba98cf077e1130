/**
 * The unit the registry collects and the exposition renders: one metric family, its series captured at collect
 * time, rendered in slices of `units` (a unit is one series: one line for counters and gauges, a whole bucket
 * set for histograms).
 */

/** The two exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0.0. */
export type ExpositionFormat = 'text' | 'openmetrics';

/** Metric types as written on the `# TYPE` line (OpenMetrics writes `untyped` as `unknown`). */
export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** One family at collect time. */
export interface FamilyView {
  /** The family name as registered (for counters possibly ending in `_total`). */
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  /** Number of render units (series). A family with none is left out of the exposition. */
  readonly units: number;
  /** Approximate lines per unit, to size render slices. */
  readonly linesPerUnit: number;
  /** The sample lines of units `[from, to)`, each ending in `\n`. */
  render(format: ExpositionFormat, from: number, to: number): string;
}

/** Something that yields metric families on every collect: our metrics, prom-client adapters, custom collectors. */
export interface Collector {
  /** The family names this collector produces (checked for duplicates when registering). */
  familyNames(): readonly string[];
  /** Samples the collector (runs `collect` callbacks) and returns its families at this moment. */
  collect(): FamilyView[] | Promise<FamilyView[]>;
}

/** For counters: the OpenMetrics family name (without `_total`). */
export function counterBaseName(name: string): string {
  return name.endsWith('_total') ? name.slice(0, -6) : name;
}

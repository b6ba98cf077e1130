/**
 * The exposition's shared vocabulary — formats, escaping schemes, label layouts, exemplars — in a module that imports nothing,
 * so the modules that render, negotiate and name can all use it without importing one another.
 */

/** The two text formats: Prometheus text 0.0.4 and OpenMetrics 1.0.0. */
export type TextFormat = 'text' | 'openmetrics';

/** Every exposition format: the two text formats and length-delimited protobuf `MetricFamily` messages. */
export type ExpositionFormat = TextFormat | 'protobuf';

/** The name-escaping schemes of client_golang (`model.EscapingScheme`); `underscores` is its default. */
export type EscapingScheme = 'allow-utf-8' | 'underscores' | 'dots' | 'values';

/**
 * The order labels are written in: sorted by name, as client_golang writes them (bytewise; label names are ASCII),
 * whatever order they were declared in. `order[i]` is the position among the declared labels of the `i`-th
 * written one; undefined when the declared order is already sorted (the usual case: no indirection).
 */
export interface LabelLayout {
  readonly names: readonly string[];
  readonly order: readonly number[] | undefined;
}

/** A family's label names in written (sorted) order; `order[i]` is the declared position of the `i`-th (as `LabelLayout`). */
export interface ProtoLabelNames {
  readonly names: readonly string[];
  readonly order: readonly number[] | undefined;
}

/** One exemplar as kept and written: labels sorted by name, the observed value, when (Unix ms). */
export interface Exemplar {
  readonly labels: readonly (readonly [string, string])[];
  readonly value: number;
  readonly timestampMs: number;
}

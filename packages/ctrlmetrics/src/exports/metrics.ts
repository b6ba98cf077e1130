/**
 * The metrics core (client_golang's `prometheus` and controller-runtime's `pkg/metrics`): the global registry the
 * manager serves, the metric classes with pre-bound children, and the built-in collectors.
 *
 * ```ts
 * import { Counter } from 'ctrlmetrics/metrics';
 * const jobs = new Counter({ name: 'myapp_jobs_total', help: 'Jobs done', labelNames: ['kind'] });
 * const nightly = jobs.labels('nightly'); // bind once
 * nightly.inc();                          // hot path: a field update
 * jobs.labels('adhoc').addWithExemplar(1, { trace_id: 'abc' }); // an exemplar, shown in OpenMetrics and protobuf
 * ```
 * Metrics made with prom-client's own API (its default registry) are included in every collect.
 * @module ctrlmetrics/metrics
 */
export {
  registry,
  register,
  mustRegister,
  unregister,
  registerPromClientRegistry,
  Registry,
  DuplicateMetricError,
  MetricsCollectError,
} from '../metrics/registry.js';
export { includePromClientCopies, PROM_CLIENT_MODULES } from '../metrics/prom-client-copies.js';
export type { PromClientCopy } from '../metrics/prom-client-copies.js';
export type { Registrable, RegistryOptions, CollectOptions } from '../metrics/registry.js';
export type { PromMetricLike } from '../metrics/foreign.js';
export type { RuntimeCollector } from '../metrics/runtime.js';
export { Counter, CounterChild } from '../metrics/counter.js';
export type { CounterOptions } from '../metrics/counter.js';
export { Gauge, GaugeChild } from '../metrics/gauge.js';
export type { GaugeOptions } from '../metrics/gauge.js';
export { Histogram, HistogramChild } from '../metrics/histogram.js';
export type { HistogramOptions } from '../metrics/histogram.js';
export { EXEMPLAR_MAX_RUNES } from '../metrics/exemplar.js';
export type { Exemplar, ExemplarLabels } from '../metrics/exemplar.js';
export {
  DEFAULT_NATIVE_HISTOGRAM_ZERO_THRESHOLD,
  NATIVE_HISTOGRAM_ZERO_THRESHOLD_ZERO,
} from '../metrics/native-histogram.js';
export { Metric } from '../metrics/metric.js';
export type { MetricOptions, MetricRegistry, LabelValue, SeriesBase } from '../metrics/metric.js';
export { DEFAULT_BUCKETS, exponentialBuckets, linearBuckets } from '../metrics/buckets.js';
export { MetricsSnapshot } from '../metrics/snapshot.js';
// what a custom Collector writes into, and what a snapshot's chunks hold
export type { TextSink, BlockLease } from '../metrics/text-sink.js';
export type { EscapingScheme } from '../metrics/negotiate.js';
export type {
  Collector,
  FamilyView,
  ExpositionFormat,
  TextFormat,
  MetricType,
  ProtoSink,
  ProtoLabels,
  ProtoLabelNames,
  ProtoNativeBuckets,
} from '../metrics/family.js';
export { validateMetricName, validateLabelName } from '../metrics/format.js';
export {
  restClientRequests,
  certwatcherReadCertificate,
  certwatcherReadCertificateErrors,
  runtimeCollector,
} from '../metrics/builtin.js';

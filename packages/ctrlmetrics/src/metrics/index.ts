/**
 * The metrics core: the global registry, fast metric classes with pre-bound children, and the Prometheus text
 * 0.0.4 / OpenMetrics 1.0.0 / protobuf exposition (rendered in slices, streamed as Buffers).
 *
 * ```ts
 * import { metrics } from 'ctrlmetrics';
 * const jobs = new metrics.Counter({ name: 'myapp_jobs_total', help: 'Jobs done', labelNames: ['kind'] });
 * const nightly = jobs.labels('nightly'); // bind once
 * nightly.inc();                          // hot path: a field update
 * jobs.labels('adhoc').addWithExemplar(1, { trace_id: 'abc' }); // an exemplar, shown in OpenMetrics and protobuf
 * ```
 * Metrics made with prom-client's own API (its default registry) are included in every collect.
 * @module
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
} from './registry.js';
export { includePromClientCopies, PROM_CLIENT_MODULES } from './prom-client-copies.js';
export type { PromClientCopy } from './prom-client-copies.js';
export type { Registrable, RegistryOptions, CollectOptions } from './registry.js';
export type { PromMetricLike } from './foreign.js';
export type { RuntimeCollector } from './runtime.js';
export { Counter, CounterChild } from './counter.js';
export type { CounterOptions } from './counter.js';
export { Gauge, GaugeChild } from './gauge.js';
export type { GaugeOptions } from './gauge.js';
export { Histogram, HistogramChild } from './histogram.js';
export type { HistogramOptions } from './histogram.js';
export { EXEMPLAR_MAX_RUNES } from './exemplar.js';
export type { Exemplar, ExemplarLabels } from './exemplar.js';
export { DEFAULT_NATIVE_HISTOGRAM_ZERO_THRESHOLD, NATIVE_HISTOGRAM_ZERO_THRESHOLD_ZERO } from './native-histogram.js';
export { Metric } from './metric.js';
export type { MetricOptions, MetricRegistry, LabelValue, SeriesBase } from './metric.js';
export { DEFAULT_BUCKETS, exponentialBuckets, linearBuckets } from './buckets.js';
export { MetricsSnapshot, DEFAULT_SLICE_LINES } from './snapshot.js';
export { TextSink, BlockPool, BlockLease } from './text-sink.js';
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
} from './family.js';
export {
  negotiateFormat,
  TEXT_CONTENT_TYPE,
  OPENMETRICS_CONTENT_TYPE,
  OPENMETRICS_0_0_1_CONTENT_TYPE,
  PROTOBUF_CONTENT_TYPE,
} from './negotiate.js';
export type { NegotiatedFormat, EscapingScheme } from './negotiate.js';
export { formatFloat, escapeLabelValue, escapeHelp, validateMetricName, validateLabelName } from './format.js';
export {
  restClientRequests,
  certwatcherReadCertificate,
  certwatcherReadCertificateErrors,
  runtimeCollector,
} from './builtin.js';

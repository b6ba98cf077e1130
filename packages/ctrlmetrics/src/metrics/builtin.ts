/**
 * Built-in families of the global registry beside the controller ones (src/controller/metrics.ts):
 * process and Node.js runtime, `rest_client_requests_total`, and the certwatcher counters.
 */
import { setDefaultCertWatcherCounters } from '../certwatcher/certwatcher.js';
import { setDefaultRequestObserver } from '../kube/client.js';
import { Counter } from './counter.js';
import { setSeriesRefusedHandler } from './metric.js';
import { createLogger } from '../util/log.js';
import { registry } from './registry.js';
import { RuntimeCollector } from './runtime.js';

/**
 * `rest_client_requests_total{code,host,method}`: every Kubernetes API response (or transport error, code
 * `<error>`) of every `KubeClient`, as client-go counts them; label values as client-go's.
 */
export const restClientRequests = new Counter({
  name: 'rest_client_requests_total',
  help: 'Number of HTTP requests, partitioned by status code, method, and host.',
  labelNames: ['code', 'host', 'method'],
  // the host is the API server's address as configured: bounded in practice, capped in case of a client per host
  maxSeries: 1000,
});

/** `certwatcher_read_certificate_total`: certificate reads by the certificate watcher. */
export const certwatcherReadCertificate = new Counter({
  name: 'certwatcher_read_certificate_total',
  help: 'Total number of certificate reads',
});

/** `certwatcher_read_certificate_errors_total`: failed certificate reads by the certificate watcher. */
export const certwatcherReadCertificateErrors = new Counter({
  name: 'certwatcher_read_certificate_errors_total',
  help: 'Total number of certificate read errors',
});

/**
 * `ctrlmetrics_series_refused_total{metric}`: new series a family refused for its `maxSeries` (made at the first
 * refusal; a first refusal per family is also logged, never each one).
 */
let seriesRefused: Counter | undefined;
setSeriesRefusedHandler((metric, maxSeries, first) => {
  seriesRefused ??= new Counter({
    name: 'ctrlmetrics_series_refused_total',
    help: 'New label-value combinations a metric family refused because it already had maxSeries series',
    labelNames: ['metric'],
  });
  seriesRefused.labels(metric).inc();
  if (first) {
    createLogger('metrics').warn(
      `metric ${metric} reached its limit of ${maxSeries} series: new label values are dropped (a label fed by unbounded input?)`,
      { metric, maxSeries },
    );
  }
});

setDefaultRequestObserver((code, method, host) => {
  restClientRequests.labels(code, host, method).inc();
});

setDefaultCertWatcherCounters({
  readCertificateTotal: certwatcherReadCertificate,
  readCertificateErrorsTotal: certwatcherReadCertificateErrors,
});

/**
 * Process and Node.js runtime families (`process_cpu_seconds_total`, `process_resident_memory_bytes`,
 * `process_virtual_memory_bytes`, `process_start_time_seconds`, `process_open_fds`, `process_max_fds`,
 * `nodejs_eventloop_lag_*`, `nodejs_heap_*`, `nodejs_gc_duration_seconds`, …). When the user also calls prom-client's
 * `collectDefaultMetrics()` on its default registry, the user's same-named families take precedence.
 */
export const runtimeCollector = new RuntimeCollector();
registry.registerBuiltin(runtimeCollector);

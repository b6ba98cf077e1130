/**
 * The admission webhook metric families, named, typed, labelled and bucketed as controller-runtime v0.24 registers
 * them, in the global registry. The `webhook` label is the registered path (`/mutate-…`, `/validate-…`, or a
 * path of the user's own).
 */
import { Counter, Gauge, Histogram } from '../metrics/index.js';
import { BUILTIN_MAX_SERIES, RECONCILE_TIME_NATIVE, WORKQUEUE_BUCKETS } from '../controller/metrics.js';

export const webhookLatency = new Histogram({
  name: 'controller_runtime_webhook_latency_seconds',
  help: 'Histogram of the latency of processing admission requests',
  labelNames: ['webhook'],
  // `ExponentialBuckets(10e-9, 10, 12)` as client-go's workqueue latency: bounds from repeated multiplication,
  // so the text has Go's 9.999999999999999e-06 and 9.999999999999999e-05
  buckets: WORKQUEUE_BUCKETS,
  ...RECONCILE_TIME_NATIVE,
  maxSeries: BUILTIN_MAX_SERIES,
});

export const webhookRequests = new Counter({
  name: 'controller_runtime_webhook_requests_total',
  help: 'Total number of admission requests by HTTP status code.',
  labelNames: ['webhook', 'code'],
  maxSeries: BUILTIN_MAX_SERIES,
});

export const webhookInFlight = new Gauge({
  name: 'controller_runtime_webhook_requests_in_flight',
  help: 'Current number of admission requests being served.',
  labelNames: ['webhook'],
  maxSeries: BUILTIN_MAX_SERIES,
});

export const webhookPanics = new Counter({
  name: 'controller_runtime_webhook_panics_total',
  help: 'Total number of webhook panics',
});
// initialised at 0, as controller-runtime does at package init
webhookPanics.inc(0);

/** The per-path children, made when a path is registered (`code` 200 and 500 at 0, the in-flight gauge at 0). */
export interface WebhookPathMetrics {
  latency: ReturnType<typeof webhookLatency.labels>;
  inFlight: ReturnType<typeof webhookInFlight.labels>;
  requests(code: number): void;
}

export function webhookMetricsFor(path: string): WebhookPathMetrics {
  const ok = webhookRequests.labels(path, '200');
  const failed = webhookRequests.labels(path, '500');
  ok.inc(0);
  failed.inc(0);
  const inFlight = webhookInFlight.labels(path);
  inFlight.set(0);
  return {
    latency: webhookLatency.labels(path),
    inFlight,
    requests: (code) => (code === 200 ? ok : code === 500 ? failed : webhookRequests.labels(path, String(code))).inc(),
  };
}

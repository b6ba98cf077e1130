/**
 * The filter's own metrics (controller-runtime exposes none): what it answered, how long the API took to review, how
 * often the caches answered, how many reviews are in flight. Registered in the global registry when the first
 * filter is made (a manager without the filter exposes none of them); every child is bound once, so the request
 * path only increments fields.
 */
import { Counter } from '../counter.js';
import { Gauge } from '../gauge.js';
import { Histogram } from '../histogram.js';

/** Review latency buckets, 1 ms … 10 s (a review's deadline is 10 s by default). */
export const REVIEW_DURATION_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** The filter's answers: `200` means passed to the handler. */
export const FILTER_CODES = ['200', '401', '403', '500', '503'] as const;
export type FilterCode = (typeof FILTER_CODES)[number];

export type ReviewKind = 'TokenReview' | 'SubjectAccessReview';

/** Pre-bound children of the filter's families. */
export interface FilterMetrics {
  requests: Record<FilterCode, { inc(): void }>;
  cache: Record<
    'authentication' | 'authorization',
    { hit: { inc(): void }; miss: { inc(): void }; stale: { inc(): void } }
  >;
  /** Times one review: call the returned function when it ends. */
  startReview(kind: ReviewKind): (ok: boolean) => void;
}

let shared: FilterMetrics | undefined;

/** The filter's metrics, registered in the global registry on first use. */
export function filterMetrics(): FilterMetrics {
  if (shared) return shared;
  const requests = new Counter({
    name: 'ctrlmetrics_filter_requests_total',
    help: 'Requests the metrics authentication and authorization filter answered, by code (200: passed to the handler)',
    labelNames: ['code'],
  });
  const cacheRequests = new Counter({
    name: 'ctrlmetrics_filter_cache_requests_total',
    help: "Look-ups of the filter's decision caches by cache and result (stale: an expired allow answered during an API outage)",
    labelNames: ['cache', 'result'],
  });
  const duration = new Histogram({
    name: 'ctrlmetrics_filter_review_duration_seconds',
    help: "Time the API server took to answer the filter's TokenReviews and SubjectAccessReviews, retries included",
    labelNames: ['review', 'result'],
    buckets: [...REVIEW_DURATION_BUCKETS],
  });
  const inFlight = new Gauge({
    name: 'ctrlmetrics_filter_reviews_in_flight',
    help: 'TokenReviews and SubjectAccessReviews the filter is waiting for',
    labelNames: ['review'],
  });
  const cacheOf = (cache: string) => ({
    hit: cacheRequests.labels(cache, 'hit'),
    miss: cacheRequests.labels(cache, 'miss'),
    stale: cacheRequests.labels(cache, 'stale'),
  });
  const reviews = {
    TokenReview: {
      ok: duration.labels('TokenReview', 'success'),
      failed: duration.labels('TokenReview', 'error'),
      inFlight: inFlight.labels('TokenReview'),
    },
    SubjectAccessReview: {
      ok: duration.labels('SubjectAccessReview', 'success'),
      failed: duration.labels('SubjectAccessReview', 'error'),
      inFlight: inFlight.labels('SubjectAccessReview'),
    },
  };
  shared = {
    requests: {
      '200': requests.labels('200'),
      '401': requests.labels('401'),
      '403': requests.labels('403'),
      '500': requests.labels('500'),
      '503': requests.labels('503'),
    },
    cache: { authentication: cacheOf('authentication'), authorization: cacheOf('authorization') },
    startReview(kind) {
      const r = reviews[kind];
      r.inFlight.inc();
      const t0 = performance.now();
      return (ok) => {
        r.inFlight.dec();
        (ok ? r.ok : r.failed).observe((performance.now() - t0) / 1000);
      };
    },
  };
  return shared;
}

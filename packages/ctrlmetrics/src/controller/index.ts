/** The controller runtime: controllers, workqueue, rate limiters, their metrics. */
export { Controller } from './controller.js';
export type { ControllerOptions, ControllerStartDeps, ControllerQueue } from './controller.js';
export { TerminalError, PanicError, ReconcileTimeoutError, isTerminal, isPanic } from './errors.js';
export { NotCachedError } from './not-cached.js';
export type { TypeRef } from './watch-caches.js';
export { Workqueue } from './workqueue.js';
export type { WorkqueueOptions, QueueGet } from './workqueue.js';
export { PriorityQueue, LOW_PRIORITY } from './priorityqueue.js';
export type { PriorityQueueOptions, PriorityGet } from './priorityqueue.js';
export {
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from './ratelimiter.js';
export type { RateLimiter, DefaultRateLimiterOptions } from './ratelimiter.js';
export { InformerSet } from './informers.js';
export type { InformerTuning, CacheScope, CacheByObject, CacheTransform } from './informers.js';
export { collectionPath, resourceOf, requestsFor } from './handlers.js';
export type {
  Request,
  Result,
  Reconciler,
  ReconcileContext,
  CacheReader,
  CacheListOptions,
  KubeObject,
  WatchSpec,
  EnqueueMode,
  EventType,
} from './types.js';
export * as controllerMetrics from './metrics.js';

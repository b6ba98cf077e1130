/**
 * Work queues and rate limiters (client-go's `util/workqueue`, controller-runtime's `priorityqueue`): what a
 * controller queues its requests in, for a reconciler that wants its own.
 * @module ctrlmetrics/workqueue
 */
export { Workqueue } from '../controller/workqueue.js';
export type { WorkqueueOptions, QueueGet } from '../controller/workqueue.js';
export { PriorityQueue, LOW_PRIORITY } from '../controller/priorityqueue.js';
export type { PriorityQueueOptions, PriorityGet } from '../controller/priorityqueue.js';
export {
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
} from '../controller/ratelimiter.js';
export type { RateLimiter, DefaultRateLimiterOptions } from '../controller/ratelimiter.js';

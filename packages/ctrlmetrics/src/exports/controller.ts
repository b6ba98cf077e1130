/**
 * Controllers (controller-runtime's `pkg/controller`, `pkg/reconcile`, `pkg/predicate` and `pkg/handler`): what a
 * reconciler is given and returns, the controller that runs it, its errors, its watches and their predicates.
 *
 * ```ts
 * import { Controller, type Reconciler } from 'ctrlmetrics/controller';
 * ```
 * @module ctrlmetrics/controller
 */
export { Controller } from '../controller/controller.js';
export type { ControllerOptions, ControllerQueue } from '../controller/controller.js';
export { TerminalError, PanicError, ReconcileTimeoutError } from '../controller/errors.js';
export { NotCachedError } from '../controller/not-cached.js';
export type { InformerTuning, CacheByObject, CacheTransform } from '../controller/informers.js';
export type {
  Request,
  Result,
  Reconciler,
  ReconcileContext,
  CacheReader,
  CacheListOptions,
  WatchSpec,
  EnqueueMode,
  EventType,
} from '../controller/types.js';
export * as predicates from '../controller/predicates.js';
export type { Predicate } from '../controller/predicates.js';
export * as controllerMetrics from '../controller/metrics.js';

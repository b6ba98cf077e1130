/**
 * ctrlmetrics — the secure metrics endpoint of a TypeScript Kubernetes controller manager.
 *
 * Public API entry point. Everything users need is exported from here.
 * @packageDocumentation
 */
export { createLogger, setLogSink, setLogLevel } from './util/log.js';
export type { Logger, LogLevel, LogSink } from './util/log.js';
export { KubeClient, KubeApiError, DEFAULT_RETRY, setDefaultRequestObserver } from './kube/client.js';
export type { KubeResponse, KubeStatus, RequestOptions, RetryPolicy, WatchEvent, WatchHandle } from './kube/client.js';
export { loadRestConfig, inCluster, kubeconfigFor, KubeConfigError } from './kube/config.js';
export type { RestConfig, LoadConfigOptions } from './kube/config.js';

// ---- controller runtime (controllers, workqueue, informers, manager) ----
export {
  Controller,
  TerminalError,
  PanicError,
  Workqueue,
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  controllerMetrics,
} from './controller/index.js';
export type {
  ControllerOptions,
  Request,
  Result,
  Reconciler,
  ReconcileContext,
  CacheReader,
  KubeObject,
  WatchSpec,
  EnqueueMode,
  EventType,
  RateLimiter,
  WorkqueueOptions,
} from './controller/index.js';
export { Informer, objectKey } from './kube/informer.js';
export type { InformerOptions, InformerHandler, InformerHealth } from './kube/informer.js';
export { Manager, ManagerError } from './manager/index.js';
export type { ManagerOptions, HealthCheck } from './manager/index.js';

// Embedded authority (the no-cluster Kubernetes API; the test cluster of this project)
export { startAuthority, API_AUDIENCES } from './authority/index.js';
export type { Authority, AuthorityOptions } from './authority/index.js';

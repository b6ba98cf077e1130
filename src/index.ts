/**
 * ctrlmetrics — the secure metrics endpoint of a TypeScript Kubernetes controller manager.
 *
 * Public API entry point. Everything users need is exported from here.
 * @packageDocumentation
 */
export { createLogger, setLogSink, setLogLevel, configureLogging } from './util/log.js';
export type { Logger, LogLevel, LogSink, LogOptions, LogEncoder, LogThreshold, TimeEncoding } from './util/log.js';
export { ZAP_FLAGS, setZapFlag, type ZapFlag } from './util/log-flags.js';
export { parseGoBool } from './util/go-bool.js';
export { KubeClient, KubeApiError, DEFAULT_RETRY, setDefaultRequestObserver } from './kube/client.js';
export { CtrlmetricsError, type CtrlmetricsErrorOptions } from './util/errors.js';
export type { KubeResponse, KubeStatus, RequestOptions, RetryPolicy, WatchEvent, WatchHandle, RequestObserver, KubeClientOptions } from './kube/client.js';
export type { IndexExtractor } from './kube/field-index.js';
export type { TimerClock } from './util/timers.js';
export { loadRestConfig, inCluster, kubeconfigFor, KubeConfigError } from './kube/config.js';
export type { KubeObject, ObjectLike, ObjectMeta, OwnerReference } from './kube/objects.js';
export type { int32, int64, Quantity, IntOrString, Time, MicroTime, Duration, RawExtension, JSONValue } from './api/types.js';
export { isNotFound, isConflict, isAlreadyExists, isForbidden, isInvalid, isUnauthorized, ignoreNotFound, ignoreAlreadyExists } from './kube/errors.js';
export { RESTMapper, NoKindMatchError } from './kube/restmapper.js';
export type { ResourceMapping, RESTMapperOptions } from './kube/restmapper.js';
export { ObjectClient } from './kube/object-client.js';
export type { IndexLookup, KindConstant, KnownKinds, ObjectKey, ObjectOf, ObjectType, WriteOptions, WriteDefaults, FieldValidation, ApplyOptions, PatchOptions, PatchType, DeleteOptions, DeleteAllOfOptions, ListOptions, ListPage, SubResourceClient } from './kube/object-client.js';
export type { BuiltinKinds } from './kube/builtin-kinds.js';
export { EventBroadcaster } from './kube/events.js';
export type { EventRecorder, KubeEventType, EventBroadcasterOptions } from './kube/events.js';
export { EventsV1Broadcaster } from './kube/events-v1.js';
export type { EventsV1Recorder, EventsV1BroadcasterOptions } from './kube/events-v1.js';
export type { RestConfig, LoadConfigOptions, AuthHeadersRequest } from './kube/config.js';

// ---- controller runtime (controllers, workqueue, informers, manager) ----
export {
  Controller,
  TerminalError,
  PanicError,
  ReconcileTimeoutError,
  NotCachedError,
  Workqueue,
  PriorityQueue,
  LOW_PRIORITY,
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
  CacheListOptions,
  WatchSpec,
  EnqueueMode,
  EventType,
  RateLimiter,
  WorkqueueOptions,
  QueueGet,
  PriorityQueueOptions,
  PriorityGet,
  DefaultRateLimiterOptions,
  InformerTuning,
  ControllerQueue,
  CacheByObject,
  CacheTransform,
} from './controller/index.js';
export {
  setControllerReference,
  setOwnerReference,
  removeOwnerReference,
  hasOwnerReference,
  hasControllerReference,
  addFinalizer,
  removeFinalizer,
  containsFinalizer,
  isBeingDeleted,
  createOrUpdate,
  createOrPatch,
  AlreadyOwnedError,
} from './controller/controllerutil.js';
export type { OperationResult } from './controller/controllerutil.js';
export { semanticEqual } from './kube/equality.js';
export { setStatusCondition, findStatusCondition, removeStatusCondition, isStatusConditionTrue, isStatusConditionFalse } from './controller/conditions.js';
export type { Condition, NewCondition } from './controller/conditions.js';
export * as predicates from './controller/predicates.js';
export type { Predicate } from './controller/predicates.js';
export { Informer, objectKey } from './kube/informer.js';
export * as transforms from './kube/transforms.js';
export type { InformerOptions, InformerHandler, InformerHealth, InformerObject } from './kube/informer.js';
export { Manager, ManagerError } from './manager/index.js';
export {
  WebhookServer,
  Webhook,
  ConversionWebhook,
  CONVERSION_PATH,
  AdmissionDeniedError,
  webhookPath,
  allowed,
  denied,
  errored,
  patched,
  DEFAULT_WEBHOOK_BIND_ADDRESS,
  DEFAULT_WEBHOOK_CERT_DIR,
  ConversionRegistry,
  MAX_CONVERSION_BODY_BYTES,
} from './webhook/index.js';
export type {
  WebhookServerOptions,
  WebhookOptions,
  ConversionWebhookOptions,
  SpokeConversion,
  Defaulter,
  Validator,
  Warnings,
  AdmissionHandler,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionStatus,
  AdmissionUserInfo,
  KubeJson,
} from './webhook/index.js';
export type { ManagerOptions, ManagerCacheOptions, HealthCheck, HealthProbeServer, CheckSet, Runnable, ProfilingServer } from './manager/index.js';

// Embedded authority (the no-cluster Kubernetes API; the test cluster of this project)
export { startAuthority } from './authority/start.js';
export { API_AUDIENCES } from './authority/audiences.js';
export type { Authority, AuthorityOptions } from './authority/index.js';

// ---- metrics core: global registry, Counter/Gauge/Histogram, exposition ----
export * as metrics from './metrics/index.js';

// ---- metrics server, filters, certificates ----
export { createMetricsServer, DEFAULT_BIND_ADDRESS } from './metrics/server/index.js';
export type { MetricsOptions, MetricsServer, MetricsServerDeps, MetricsSource, Handler, Filter, FilterProvider, TlsConfig } from './metrics/server/index.js';
export { filters, Authenticator, authFilter, parseBearerToken, loadStaticAuthorizationFile, StaticAuthorizationError } from './metrics/filters/index.js';
export type { AuthFilterOptions, UserInfo, AuthnResult, AuthzDecision, StaticAuthorizationRule, LaneName, LaneLimits, ApiStateListener } from './metrics/filters/index.js';
export { CertWatcher, CertificateLoadError, loadCertificatePair, generateSelfSignedCertificate } from './certwatcher/index.js';
export type { CertificatePair, CertWatcherCounters, CertWatcherOptions, CertificateListener, SelfSignedCertificate, SelfSignedOptions } from './certwatcher/index.js';

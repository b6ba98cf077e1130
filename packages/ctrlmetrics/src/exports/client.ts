/**
 * Talking to the API server (client-go's `rest`, controller-runtime's `pkg/client`, `apimeta` and the event
 * recorders): the REST client, the typed object client, the REST mapper, API errors and how to test them.
 *
 * ```ts
 * import { KubeClient, ObjectClient, isNotFound } from 'ctrlmetrics/client';
 * ```
 * @module ctrlmetrics/client
 */
export { KubeClient, KubeApiError, DEFAULT_RETRY } from '../kube/client.js';
export type {
  KubeResponse,
  KubeStatus,
  RequestOptions,
  RetryPolicy,
  WatchEvent,
  WatchHandle,
  RequestObserver,
  KubeClientOptions,
} from '../kube/client.js';
export { ObjectClient } from '../kube/object-client.js';
export type {
  IndexLookup,
  KindConstant,
  KnownKinds,
  ObjectKey,
  ObjectOf,
  ObjectType,
  WriteOptions,
  WriteDefaults,
  FieldValidation,
  ApplyOptions,
  PatchOptions,
  PatchType,
  DeleteOptions,
  DeleteAllOfOptions,
  ListOptions,
  ListPage,
  SubResourceClient,
} from '../kube/object-client.js';
export type { IndexExtractor } from '../kube/field-index.js';
export {
  isNotFound,
  isConflict,
  isAlreadyExists,
  isForbidden,
  isInvalid,
  isUnauthorized,
  ignoreNotFound,
  ignoreAlreadyExists,
} from '../kube/errors.js';
export { RESTMapper, NoKindMatchError } from '../kube/restmapper.js';
export type { ResourceMapping, RESTMapperOptions } from '../kube/restmapper.js';
export { semanticEqual } from '../kube/equality.js';
export { EventBroadcaster } from '../kube/events.js';
export type { EventRecorder, KubeEventType, EventBroadcasterOptions } from '../kube/events.js';
export { EventsV1Broadcaster } from '../kube/events-v1.js';
export type { EventsV1Recorder, EventsV1BroadcasterOptions } from '../kube/events-v1.js';
export type { KubeObject, ObjectLike, ObjectMeta, OwnerReference } from '../kube/objects.js';
export type { BuiltinKinds } from '../kube/builtin-kinds.js';
export type { TimerClock } from '../util/timers.js';

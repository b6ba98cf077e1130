/**
 * ctrlmetrics — controller-runtime for TypeScript: a manager with controllers, informers, webhooks and a secure
 * metrics endpoint.
 *
 * The root entry holds what an operator needs on its first day: the manager, a controller and its reconciler, the
 * clients, the helpers a reconciler calls, a kind's webhook, the metrics. The rest is in subpaths that follow
 * controller-runtime's packages: `ctrlmetrics/manager`, `/controller`, `/controllerutil`, `/workqueue`,
 * `/client`, `/config`, `/cache`, `/webhook`, `/metrics`, `/metrics/server`, `/metrics/filters`, `/certwatcher`,
 * `/log`, `/api`; the embedded authority (a Kubernetes API server for tests) is `ctrlmetrics/authority`.
 * @packageDocumentation
 */
export { Manager } from './manager/manager.js';
export type { ManagerOptions } from './manager/manager.js';
export { Controller } from './controller/controller.js';
export type { ControllerOptions } from './controller/controller.js';
export { TerminalError } from './controller/errors.js';
export type { Request, Result, Reconciler, ReconcileContext } from './controller/types.js';
export * as predicates from './controller/predicates.js';
export { KubeClient, KubeApiError } from './kube/client.js';
export { ObjectClient } from './kube/object-client.js';
export type { KnownKinds } from './kube/object-client.js';
export { loadRestConfig } from './kube/config.js';
export type { RestConfig } from './kube/config.js';
export { isNotFound, isConflict, isAlreadyExists, ignoreNotFound } from './kube/errors.js';
export type { KubeObject, ObjectMeta } from './kube/objects.js';
export {
  setControllerReference,
  addFinalizer,
  removeFinalizer,
  containsFinalizer,
  isBeingDeleted,
  createOrUpdate,
  createOrPatch,
} from './controller/controllerutil.js';
export type { OperationResult } from './controller/controllerutil.js';
export { setStatusCondition, findStatusCondition, isStatusConditionTrue } from './controller/conditions.js';
export type { Condition, NewCondition } from './controller/conditions.js';
export { Webhook, AdmissionDeniedError } from './webhook/for-kind.js';
export type { Defaulter, Validator, Warnings } from './webhook/for-kind.js';
export { createLogger } from './util/log.js';
export type { Logger } from './util/log.js';
export { CtrlmetricsError, type CtrlmetricsErrorOptions } from './util/errors.js';
export * as metrics from './exports/metrics.js';
export { filters } from './metrics/filters/index.js';

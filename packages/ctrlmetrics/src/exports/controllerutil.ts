/**
 * Helpers a reconciler calls on the objects it owns (controller-runtime's `pkg/controller/controllerutil` and
 * apimachinery's `meta` conditions): owner references, finalizers, create-or-update, status conditions.
 * @module ctrlmetrics/controllerutil
 */
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
} from '../controller/controllerutil.js';
export type { OperationResult } from '../controller/controllerutil.js';
export {
  setStatusCondition,
  findStatusCondition,
  removeStatusCondition,
  isStatusConditionTrue,
  isStatusConditionFalse,
} from '../controller/conditions.js';
export type { Condition, NewCondition } from '../controller/conditions.js';

/**
 * The types an API's objects are written in (apimachinery's `meta/v1` and its scalar types): object metadata,
 * owner references, conditions, quantities, times. Types only.
 * @module ctrlmetrics/api
 */
export type { KubeObject, ObjectLike, ObjectMeta, OwnerReference } from '../kube/objects.js';
export type {
  int32,
  int64,
  Quantity,
  IntOrString,
  Time,
  MicroTime,
  Duration,
  RawExtension,
  JSONValue,
} from '../api/types.js';
export type { Condition, NewCondition } from '../controller/conditions.js';
export type { BuiltinKinds } from '../kube/builtin-kinds.js';

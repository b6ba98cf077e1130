/**
 * Status conditions (`metav1.Condition`), as apimachinery's `meta` helpers keep them: one entry per type, and
 * `lastTransitionTime` moves only when the status changes, so it says since when a condition holds.
 */
import { kubeTime } from '../util/kube-time.js';

/** `metav1.Condition`, the shape kubebuilder's CRDs give `status.conditions`. */
export interface Condition {
  /** UpperCamelCase, e.g. `Available`, `Degraded`. */
  type: string;
  status: 'True' | 'False' | 'Unknown';
  /** The `metadata.generation` the condition was set for. */
  observedGeneration?: number;
  /** RFC 3339, second precision. */
  lastTransitionTime: string;
  /** UpperCamelCase machine-readable cause (the API server requires a non-empty one). */
  reason: string;
  message: string;
}

/** A condition to set: `lastTransitionTime` is filled in when absent. */
export type NewCondition = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: string };

/** The condition of `type`, or undefined. */
export function findStatusCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Sets a condition in `conditions` (changed in place): adds it, or updates the entry of its type; its
 * `lastTransitionTime` is set only when it is new or its status changes (to the one given, else `now`). True when
 * anything changed (write the status then).
 */
export function setStatusCondition(
  conditions: Condition[],
  condition: NewCondition,
  now: number = Date.now(),
): boolean {
  const existing = findStatusCondition(conditions, condition.type);
  if (!existing) {
    conditions.push({ ...condition, lastTransitionTime: condition.lastTransitionTime || kubeTime(now) });
    return true;
  }
  let changed = false;
  if (existing.status !== condition.status) {
    existing.status = condition.status;
    existing.lastTransitionTime = condition.lastTransitionTime || kubeTime(now);
    changed = true;
  }
  if (existing.reason !== condition.reason) {
    existing.reason = condition.reason;
    changed = true;
  }
  if (existing.message !== condition.message) {
    existing.message = condition.message;
    changed = true;
  }
  if (existing.observedGeneration !== condition.observedGeneration) {
    if (condition.observedGeneration === undefined) delete existing.observedGeneration;
    else existing.observedGeneration = condition.observedGeneration;
    changed = true;
  }
  return changed;
}

/** Removes the condition of `type` (in place); true when there was one. */
export function removeStatusCondition(conditions: Condition[], type: string): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i < 0) return false;
  conditions.splice(i, 1);
  return true;
}

/** True when the condition of `type` is present with status `True`. */
export function isStatusConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'True';
}

/** True when the condition of `type` is present with status `False`. */
export function isStatusConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findStatusCondition(conditions, type)?.status === 'False';
}

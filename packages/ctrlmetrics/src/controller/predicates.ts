/**
 * Event filters for `WatchSpec.predicate`, as controller-runtime's `predicate` package: on updates they compare
 * the old and new object; adds and deletes always pass.
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import type { EventType, KubeObject } from './types.js';

/** A watch's event filter: false drops the event. */
export type Predicate = (obj: KubeObject, event: EventType, old?: KubeObject) => boolean;

function onUpdate(changed: (o: KubeObject, n: KubeObject) => boolean): Predicate {
  return (obj, event, old) => event !== 'update' || old === undefined || changed(old, obj);
}

const same = (a: unknown, b: unknown) => isDeepStrictEqual(a ?? {}, b ?? {});

/**
 * Updates pass only when `metadata.generation` changed: spec changes, not status or metadata writes (controller-
 * runtime's `GenerationChangedPredicate`). Kinds without a generation (ConfigMaps, …) never pass an update. A
 * DELETE of an object with finalizers bumps the generation, so the deletion mark passes.
 */
export const generationChanged: Predicate = onUpdate((o, n) => o.metadata?.generation !== n.metadata?.generation);

/** Updates pass only when the labels changed (`LabelChangedPredicate`). */
export const labelChanged: Predicate = onUpdate((o, n) => !same(o.metadata?.labels, n.metadata?.labels));

/** Updates pass only when the annotations changed (`AnnotationChangedPredicate`). */
export const annotationChanged: Predicate = onUpdate((o, n) => !same(o.metadata?.annotations, n.metadata?.annotations));

/** Updates pass only when the object changed at all (`ResourceVersionChangedPredicate`: drops resyncs). */
export const resourceVersionChanged: Predicate = onUpdate(
  (o, n) => o.metadata?.resourceVersion !== n.metadata?.resourceVersion,
);

/** Passes when every predicate passes. */
export function and(...ps: Predicate[]): Predicate {
  return (obj, event, old) => ps.every((p) => p(obj, event, old));
}

/** Passes when any predicate passes. */
export function or(...ps: Predicate[]): Predicate {
  return (obj, event, old) => ps.some((p) => p(obj, event, old));
}

/** Passes when `p` does not. */
export function not(p: Predicate): Predicate {
  return (obj, event, old) => !p(obj, event, old);
}

/**
 * `events.k8s.io/v1` Events as kube-apiserver serves them: the same objects as core `v1` Events, stored once, seen
 * in another shape. kube converts field by field between the two (`regarding` is `involvedObject`, `note` is
 * `message`, `reportingController` is `reportingComponent`, the `deprecated…` fields are the core ones of the old
 * recorder); the fields common to both keep their names. Objects written either way are read either way.
 */
// the type alone: resources.ts imports these conversions
import type { KubeObject } from './types.js';

type Obj = KubeObject;

/** events.k8s.io/v1 name → core v1 name, for the fields whose names differ. */
const RENAMED: ReadonlyArray<[string, string]> = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['reportingController', 'reportingComponent'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
];

/** The fields of events.k8s.io/v1's Event in its type's order (how kube-apiserver writes them). */
const EVENTS_V1_ORDER = [
  'kind',
  'apiVersion',
  'metadata',
  'eventTime',
  'series',
  'reportingController',
  'reportingInstance',
  'action',
  'reason',
  'regarding',
  'related',
  'note',
  'type',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
];

/** The fields of core v1's Event in its type's order. */
const CORE_ORDER = [
  'kind',
  'apiVersion',
  'metadata',
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

function ordered(o: Obj, order: string[]): Obj {
  const out: Obj = {};
  for (const k of order) if (o[k] !== undefined) out[k] = o[k];
  for (const k of Object.keys(o)) if (!(k in out) && o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * A stored (core v1) Event as events.k8s.io/v1 shows it. Go writes the struct fields `regarding` and
 * `deprecatedSource` even when empty, and the zero times as null.
 */
export function eventsV1FromCore(core: Obj): Obj {
  const out: Obj = { ...core };
  for (const [view, stored] of RENAMED) {
    delete out[stored];
    if (core[stored] !== undefined) out[view] = core[stored];
  }
  out.apiVersion = 'events.k8s.io/v1';
  out.regarding ??= {};
  out.deprecatedSource ??= {};
  out.eventTime ??= null;
  out.deprecatedFirstTimestamp ??= null;
  out.deprecatedLastTimestamp ??= null;
  if (!out.deprecatedCount) delete out.deprecatedCount;
  return ordered(out, EVENTS_V1_ORDER);
}

/** An events.k8s.io/v1 Event (a request's body) as the core v1 Event it is stored as. */
export function coreFromEventsV1(ev: Obj): Obj {
  const out: Obj = { ...ev };
  for (const [view, stored] of RENAMED) {
    delete out[view];
    if (ev[view] !== undefined) out[stored] = ev[view];
  }
  out.apiVersion = 'v1';
  return ordered(out, CORE_ORDER);
}

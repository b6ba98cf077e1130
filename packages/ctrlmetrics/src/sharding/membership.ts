/**
 * What every sharder replica knows of each ring: its kinds, and its shards (the Leases labelled with the ring) with
 * those available — held by themselves: ready, expired or uncertain. The assignment webhook reads it on every call
 * and the rebalancer on every pass; the hash ring is built again only when the available shards change.
 */
import type { ControllerRing, RingResource } from './controllerring.js';
import { HashRing } from './hash-ring.js';
import { readLease, type ShardLease } from './lease-state.js';
import { ringCalculations } from './metrics.js';

/** One ring as the sharder last read it. */
export interface RingView {
  ring: ControllerRing;
  /** every shard Lease of the ring, by name */
  shards: string[];
  /** the shards whose objects stay with them, sorted */
  available: string[];
  hash: HashRing;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** The rings a sharder serves. */
export class RingMembership {
  private readonly rings = new Map<string, RingView>();

  /** Records ring `name` as read now (`ring` undefined: it is gone). */
  update(
    name: string,
    ring: ControllerRing | undefined,
    leases: readonly ShardLease[],
    now = Date.now(),
  ): RingView | undefined {
    if (!ring) {
      this.rings.delete(name);
      return undefined;
    }
    const shards = leases.map((l) => l.metadata.name).sort();
    const available = leases
      .filter((l) => readLease(l, now).available)
      .map((l) => l.metadata.name)
      .sort();
    const before = this.rings.get(name);
    let hash = before?.hash;
    if (!before || !hash || !sameList(before.available, available)) {
      hash = new HashRing(available);
      ringCalculations.labels(name).inc();
    }
    const view = { ring, shards, available, hash };
    this.rings.set(name, view);
    return view;
  }

  get(name: string): RingView | undefined {
    return this.rings.get(name);
  }

  /** Whether `(group, resource)` is a primary kind of the ring (`main`), a controlled one, or neither. */
  static roleOf(ring: ControllerRing, r: RingResource): 'main' | 'controlled' | undefined {
    const same = (x: RingResource) => (x.group ?? '') === r.group && x.resource === r.resource;
    const main = ring.spec?.resources ?? [];
    if (main.some(same)) return 'main';
    if (main.some((m) => (m.controlledResources ?? []).some(same))) return 'controlled';
    return undefined;
  }
}

/** The key an object is hashed by: `group/Kind/namespace/name`. */
export function hashKey(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}/${kind}/${namespace ?? ''}/${name}`;
}

/** The apiVersion's group (`''` for the core group). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** An object's metadata, as far as the sharder reads it. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; controller?: boolean }>;
}

/**
 * The key of an object of the ring: its own for a primary kind, its controlling owner's for a controlled kind (so
 * children land with their owner); undefined when it has none (a controlled object without a controller, a name
 * not yet given).
 */
export function objectHashKey(
  role: 'main' | 'controlled',
  group: string,
  kind: string,
  meta: ObjectMeta,
): string | undefined {
  if (role === 'main') return meta.name ? hashKey(group, kind, meta.namespace, meta.name) : undefined;
  const owner = (meta.ownerReferences ?? []).find((o) => o.controller === true);
  return owner ? hashKey(groupOf(owner.apiVersion), owner.kind, meta.namespace, owner.name) : undefined;
}

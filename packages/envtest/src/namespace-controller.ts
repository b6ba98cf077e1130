/**
 * kube's namespace controller, for the authority: a namespace that was deleted (marked Terminating by its strategy)
 * is purged shortly after — every object in it deleted, those with finalizers marked deleting instead, and the
 * namespace removed once nothing is left. A purge that cannot finish yet (finalizers remain) or whose changes
 * could not be stored is tried again later, also after a restart (the store still holds the Terminating namespace).
 */
import type { Store } from './store.js';
import { typeKey, type ResourceRegistry } from './resources.js';
import type { KubeObject, ResourceType, StoredObject } from './types.js';

const NAMESPACES = 'namespaces';

/** Whether an object has finalizers left (a delete then marks it, and a write that empties them removes it). */
export function hasFinalizers(o: KubeObject): boolean {
  return Array.isArray(o.metadata?.finalizers) && o.metadata.finalizers.length > 0;
}

/** What the controller uses of the authority. */
export interface NamespaceControllerDeps {
  store: Store;
  registry: ResourceRegistry;
  /** Delay before a terminating namespace is purged. */
  delayMs: number;
  /** Marks an object with finalizers deleting, as a delete of it does. */
  markDeleting(t: ResourceType, o: StoredObject): void;
}

/** Purges terminating namespaces, each once, after a delay. */
export class NamespaceController {
  private readonly purges = new Map<string, { uid: string; timer: NodeJS.Timeout }>();

  constructor(private readonly deps: NamespaceControllerDeps) {
    // namespaces left Terminating by the last run are purged as if just deleted
    for (const ns of deps.store.list(NAMESPACES))
      if (ns.metadata.deletionTimestamp) this.schedule(ns.metadata.name, ns.metadata.uid ?? '');
  }

  /** Purges the namespace `name` (while its uid is `uid`) after the delay; a second call while one waits is a no-op. */
  schedule(name: string, uid: string): void {
    if (this.purges.has(name)) return;
    const timer = setTimeout(() => {
      if (this.tryPurge(name, uid)) return;
      this.purges.delete(name);
      this.schedule(name, uid); // not finished yet, or the state could not be written: try again later
    }, this.deps.delayMs);
    timer.unref();
    this.purges.set(name, { uid, timer });
  }

  /** Finishes pending purges now (on shutdown, so the saved state has no half-deleted namespace). */
  flush(): void {
    for (const [name, p] of [...this.purges]) {
      clearTimeout(p.timer);
      this.purges.delete(name);
      this.tryPurge(name, p.uid);
    }
  }

  /** A purge; false while it cannot be finished yet or a change could not be stored. */
  private tryPurge(name: string, uid: string): boolean {
    try {
      return this.purge(name, uid);
    } catch {
      return false;
    }
  }

  private purge(name: string, uid: string): boolean {
    const { store, registry } = this.deps;
    const p = this.purges.get(name);
    if (p) clearTimeout(p.timer);
    this.purges.delete(name);
    const ns = store.get(NAMESPACES, undefined, name);
    if (!ns || ns.metadata.uid !== uid) return true;
    let waiting = 0;
    const done = new Set<string>();
    for (const rt of registry.all()) {
      const key = typeKey(rt);
      if (!rt.namespaced || rt.virtual || done.has(key)) continue;
      done.add(key);
      for (const o of store.list(key, name)) {
        if (!hasFinalizers(o)) store.remove(key, name, o.metadata.name);
        else {
          waiting++;
          if (!o.metadata.deletionTimestamp) this.deps.markDeleting(rt, o);
        }
      }
    }
    if (waiting) return false;
    store.remove(NAMESPACES, undefined, name);
    return true;
  }
}

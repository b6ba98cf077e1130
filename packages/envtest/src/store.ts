/**
 * In-memory object storage with one global resourceVersion counter, a bounded event history for watches, and
 * change listeners. With a journal (the state directory's write-ahead log) every change is written to it before
 * it is applied, and watchers hear of it only once the journal reports it durable.
 */
import type { StoredObject } from './types.js';

/** One change, as watches stream it. */
export interface StoreEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** Storage key of the type (see `typeKey`). */
  key: string;
  object: StoredObject;
  /** The object before a MODIFIED event (for selector transitions). */
  prev?: StoredObject;
}

/** The persisted form of a store. */
export interface StoreSnapshot {
  resourceVersion: number;
  objects: Record<string, StoredObject[]>;
}

/**
 * Where changes are recorded before they are applied. `append` throws when the change cannot be recorded; the
 * store is then left as it was.
 */
export interface StoreJournal {
  append(ev: StoreEvent): void;
}

function objKey(ns: string | undefined, name: string): string {
  return ns ? `${ns}/${name}` : name;
}

/** First index of sorted `keys` at or after `k`. */
function lowerBound(keys: string[], k: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The objects of one type, with their keys kept sorted (etcd's key order), so that a list neither sorts nor scans
 * other namespaces: an insert or removal moves part of an array of references, far cheaper than sorting per list.
 */
class Bucket {
  readonly objects = new Map<string, StoredObject>();
  private keys: string[] = [];
  /** Objects were loaded in bulk: the keys are rebuilt, sorted, on first use. */
  private unsorted = false;

  private sortedKeys(): string[] {
    if (this.unsorted) {
      this.keys = [...this.objects.keys()].sort();
      this.unsorted = false;
    }
    return this.keys;
  }

  get size(): number {
    return this.objects.size;
  }

  get(k: string): StoredObject | undefined {
    return this.objects.get(k);
  }

  /** Stores an object while loading: cheap now, sorted once when first listed. */
  load(k: string, o: StoredObject): void {
    this.objects.set(k, o);
    this.unsorted = true;
  }

  set(k: string, o: StoredObject): void {
    if (!this.objects.has(k) && !this.unsorted) this.keys.splice(lowerBound(this.keys, k), 0, k);
    this.objects.set(k, o);
  }

  delete(k: string): void {
    if (!this.objects.delete(k) || this.unsorted) return;
    this.keys.splice(lowerBound(this.keys, k), 1);
  }

  /** Objects in key order: all, or those of one namespace (keys `ns/...`). */
  list(ns?: string): StoredObject[] {
    const keys = this.sortedKeys();
    let from = 0;
    let to = keys.length;
    if (ns) {
      from = lowerBound(keys, `${ns}/`);
      to = lowerBound(keys, `${ns}0`); // '0' follows '/': every key after the namespace's
    }
    const out = new Array<StoredObject>(to - from);
    for (let i = from; i < to; i++) out[i - from] = this.objects.get(keys[i])!;
    return out;
  }

  values(): IterableIterator<StoredObject> {
    return this.objects.values();
  }
}

/** Storage for every type; objects are owned by the store (callers clone before mutating). */
export class Store {
  private readonly data = new Map<string, Bucket>();
  private readonly history: StoreEvent[] = [];
  private readonly listeners = new Set<(ev: StoreEvent) => void>();
  /** Last resourceVersion issued. */
  private rv = 0;
  /** Events with a resourceVersion greater than this are all still in the history. */
  private compactedRV = 0;
  private journal?: StoreJournal;
  /** Changes applied but not yet reported durable by the journal (in resourceVersion order). */
  private readonly pending: StoreEvent[] = [];
  /** Last resourceVersion whose event reached the history and the listeners. */
  private committedRV = 0;

  constructor(private readonly historyLimit = 2000) {}

  /** The current (latest) resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** The last resourceVersion watchers have been told of: with a journal, the last durable one. */
  get committedResourceVersion(): number {
    return this.committedRV;
  }

  /** Records every later change in `journal` before applying it; events wait for {@link Store.commitThrough}. */
  setJournal(journal: StoreJournal): void {
    this.journal = journal;
  }

  /** Oldest resourceVersion a watch may start from without missing events. */
  get oldestWatchableRV(): number {
    return this.compactedRV;
  }

  private bucket(key: string): Bucket {
    let b = this.data.get(key);
    if (!b) {
      b = new Bucket();
      this.data.set(key, b);
    }
    return b;
  }

  get(key: string, ns: string | undefined, name: string): StoredObject | undefined {
    return this.data.get(key)?.get(objKey(ns, name));
  }

  /** Objects of a type, in one namespace or all; sorted by namespace then name like etcd's key order. */
  list(key: string, ns?: string): StoredObject[] {
    return this.data.get(key)?.list(ns) ?? [];
  }

  /** Stores a new or changed object: assigns the next resourceVersion and records the event. */
  put(key: string, obj: StoredObject): StoredObject {
    const k = objKey(obj.metadata.namespace, obj.metadata.name);
    const b = this.bucket(key);
    const prev = b.get(k);
    const type = prev ? 'MODIFIED' : 'ADDED';
    const rv = this.rv + 1;
    obj.metadata.resourceVersion = String(rv);
    const ev: StoreEvent = prev ? { rv, type, key, object: obj, prev } : { rv, type, key, object: obj };
    this.journal?.append(ev);
    this.rv = rv;
    b.set(k, obj);
    this.record(ev);
    return obj;
  }

  /** Removes an object; the DELETED event carries it with a new resourceVersion. */
  remove(key: string, ns: string | undefined, name: string): StoredObject | undefined {
    const b = this.data.get(key);
    const k = objKey(ns, name);
    const old = b?.get(k);
    if (!b || !old) return undefined;
    const rv = this.rv + 1;
    const gone = { ...old, metadata: { ...old.metadata, resourceVersion: String(rv) } };
    const ev: StoreEvent = { rv, type: 'DELETED', key, object: gone };
    this.journal?.append(ev);
    this.rv = rv;
    b.delete(k);
    this.record(ev);
    return gone;
  }

  private record(ev: StoreEvent): void {
    if (this.journal) this.pending.push(ev);
    else this.commit(ev);
  }

  /** Tells watchers of every pending change up to `rv` (called by the journal once they are durable). */
  commitThrough(rv: number): void {
    let n = 0;
    while (n < this.pending.length && this.pending[n].rv <= rv) n++;
    for (const ev of this.pending.splice(0, n)) this.commit(ev);
  }

  private commit(ev: StoreEvent): void {
    this.committedRV = ev.rv;
    this.history.push(ev);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedRV = dropped[dropped.length - 1].rv;
    }
    for (const l of this.listeners) {
      try {
        l(ev);
      } catch {
        // a broken watcher must not break writes
      }
    }
  }

  /** Events after `rv`, or undefined when some of them were already compacted away. */
  eventsSince(rv: number): StoreEvent[] | undefined {
    if (rv < this.compactedRV) return undefined;
    let i = this.history.length;
    while (i > 0 && this.history[i - 1].rv > rv) i--;
    return this.history.slice(i);
  }

  /** Calls `fn` for every future event; returns the unsubscribe function. */
  subscribe(fn: (ev: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  snapshot(): StoreSnapshot {
    const objects: Record<string, StoredObject[]> = {};
    for (const [key, b] of this.data) if (b.size) objects[key] = [...b.values()];
    return { resourceVersion: this.rv, objects };
  }

  /**
   * Applies a change read back from the journal at start-up (no history, no listeners): an object stored at `rv`,
   * or, with `deleted`, the object named by it removed.
   */
  replay(rv: number, key: string, object: StoredObject, deleted = false): void {
    const k = objKey(object.metadata?.namespace, object.metadata?.name);
    if (deleted) this.data.get(key)?.delete(k);
    else this.bucket(key).load(k, object);
    this.rv = rv;
    this.committedRV = rv;
    this.compactedRV = rv;
  }

  /** Loads a snapshot into an empty store; history starts empty, so older resourceVersions are too old to watch from. */
  load(s: StoreSnapshot): void {
    this.data.clear();
    this.history.length = 0;
    for (const [key, objs] of Object.entries(s.objects)) {
      const b = this.bucket(key);
      for (const o of objs) b.load(objKey(o.metadata?.namespace, o.metadata?.name), o);
    }
    this.rv = s.resourceVersion;
    this.committedRV = s.resourceVersion;
    this.compactedRV = s.resourceVersion;
  }
}

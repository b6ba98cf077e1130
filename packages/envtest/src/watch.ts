/**
 * Watches: newline-delimited JSON events over a chunked response, starting from a resourceVersion (synthetic ADDED
 * events for the current state when none is given), with bookmarks, `timeoutSeconds`, and an ERROR event carrying a
 * 410 Expired Status when the requested resourceVersion is older than the kept history.
 */
import type { ServerResponse } from 'node:http';
import type { Store, StoreEvent } from './store.js';
import { apiVersionOf, typeKey } from './resources.js';
import type { KubeObject, ResourceType } from './types.js';
import { readCustomResource } from './crd-schema.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { ApiError, expired, type StatusBody } from './status.js';
import { toTable } from './table.js';

/** Parameters of one watch. */
export interface WatchParams {
  type: ResourceType;
  namespace?: string;
  labelSelector?: string | null;
  fieldSelector?: string | null;
  resourceVersion?: string | null;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
  /** Stream `Table` objects (kubectl get -w). */
  table?: boolean;
  includeObject?: string | null;
  /** Bookmark interval (default 10 s). */
  bookmarkIntervalMs?: number;
  /** Streaming list (`sendInitialEvents=true`): the current state as ADDED events, then a bookmark marking its end. */
  sendInitialEvents?: boolean;
  /** Stream PartialObjectMetadata objects (metadata-only clients). */
  partialMetadata?: boolean;
  /** Converts a stored object to the watched version (a CRD's conversion webhook); events keep their order. */
  convert?: (stored: KubeObject) => Promise<KubeObject>;
}

/** Streams a watch into `res` until the timeout, the client going away, or `closeAll`. */
export class WatchHub {
  private readonly open = new Set<() => void>();

  constructor(private readonly store: Store) {}

  /** Number of running watches. */
  get size(): number {
    return this.open.size;
  }

  /** Ends every running watch (on shutdown). */
  closeAll(): void {
    for (const close of [...this.open]) close();
  }

  serve(p: WatchParams, res: ServerResponse): void {
    const key = typeKey(p.type);
    const ns = p.type.namespaced ? p.namespace || undefined : undefined;
    const byLabel = parseLabelSelector(p.labelSelector);
    const byField = parseFieldSelector(p.fieldSelector, p.type.resource);
    const matches = (o: KubeObject | undefined) =>
      !!o && (!ns || o.metadata?.namespace === ns) && byLabel(o) && byField(o);
    const present = (o: KubeObject): KubeObject => {
      const out = {
        ...(p.type.view ? p.type.view.read(o) : readCustomResource(o, p.type.schema)),
        apiVersion: apiVersionOf(p.type),
        kind: p.type.kind,
      };
      if (p.partialMetadata)
        return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: out.metadata };
      return p.table
        ? toTable(p.type, [out], { includeObject: p.includeObject, resourceVersion: o.metadata?.resourceVersion })
        : out;
    };

    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    const write = (type: string, object: KubeObject | StatusBody) => {
      if (!res.writableEnded && !res.destroyed) res.write(JSON.stringify({ type, object }) + '\n');
    };
    // with a conversion, every event waits for the ones before it (and a failed conversion ends the watch)
    let queue = Promise.resolve();
    const send = (type: string, object: KubeObject | StatusBody, stored?: KubeObject) => {
      const convert = p.convert;
      if (!convert) return write(type, stored ? present(stored) : object);
      queue = queue.then(async () => {
        if (closed) return;
        try {
          write(type, stored ? present(await convert(stored)) : object);
        } catch (err) {
          const status =
            err instanceof ApiError
              ? err.toStatus()
              : new ApiError(500, 'InternalError', String((err as Error)?.message ?? err)).toStatus();
          write('ERROR', status);
          close();
        }
      });
    };
    // Changes at or below this resourceVersion were already sent (in the initial list or the replayed history).
    let floor = 0;
    const onEvent = (ev: StoreEvent) => {
      if (ev.key !== key || ev.rv <= floor) return;
      const now = matches(ev.object);
      if (ev.type === 'MODIFIED') {
        const before = matches(ev.prev);
        if (now && before) send('MODIFIED', ev.object, ev.object);
        else if (now) send('ADDED', ev.object, ev.object);
        else if (before) send('DELETED', ev.object, ev.object);
      } else if (now) send(ev.type, ev.object, ev.object);
    };

    const rvParam = p.resourceVersion ?? '';
    let unsubscribe = () => {};
    let closed = false;
    const timers: NodeJS.Timeout[] = [];
    const close = () => {
      if (closed) return;
      closed = true;
      unsubscribe();
      for (const t of timers) clearTimeout(t);
      this.open.delete(close);
      if (!res.writableEnded) res.end();
    };
    this.open.add(close);
    res.on('close', close);

    if (p.sendInitialEvents) {
      floor = this.store.resourceVersion;
      for (const o of this.store.list(key, ns)) if (matches(o)) send('ADDED', o, o);
      send('BOOKMARK', {
        kind: p.type.kind,
        apiVersion: apiVersionOf(p.type),
        metadata: { resourceVersion: String(floor), annotations: { 'k8s.io/initial-events-end': 'true' } },
      });
      unsubscribe = this.store.subscribe(onEvent);
    } else if (rvParam === '' || rvParam === '0') {
      floor = this.store.resourceVersion;
      for (const o of this.store.list(key, ns)) if (matches(o)) send('ADDED', o, o);
      unsubscribe = this.store.subscribe(onEvent);
    } else {
      const from = Number(rvParam);
      const past = Number.isFinite(from) ? this.store.eventsSince(from) : undefined;
      if (!past) {
        const e = expired(
          Number.isFinite(from)
            ? `too old resource version: ${rvParam} (${this.store.oldestWatchableRV + 1})`
            : `invalid resource version: ${JSON.stringify(rvParam)}`,
        );
        send('ERROR', e.toStatus());
        close();
        return;
      }
      for (const ev of past) onEvent(ev);
      floor = this.store.committedResourceVersion;
      unsubscribe = this.store.subscribe(onEvent);
    }

    if (p.allowWatchBookmarks) {
      const every = p.bookmarkIntervalMs ?? 10_000;
      const tick = () => {
        send('BOOKMARK', {
          kind: p.type.kind,
          apiVersion: apiVersionOf(p.type),
          metadata: { resourceVersion: String(Math.max(floor, this.store.committedResourceVersion)) },
        });
        timers[0] = setTimeout(tick, every);
        timers[0].unref();
      };
      timers[0] = setTimeout(tick, every);
      timers[0].unref();
    }
    // kube's default: a random timeout between 30 and 60 minutes
    const timeoutMs =
      p.timeoutSeconds !== undefined && p.timeoutSeconds > 0
        ? p.timeoutSeconds * 1000
        : (1800 + Math.random() * 1800) * 1000;
    const t = setTimeout(close, timeoutMs);
    t.unref();
    timers.push(t);
  }
}

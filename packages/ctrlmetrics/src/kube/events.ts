/**
 * Events about objects (core/v1 `Event`, what `kubectl describe` and `kubectl get events` show), as client-go's
 * `record` package writes them: one {@link EventBroadcaster} per manager owns the writes; each controller gets an
 * {@link EventRecorder} naming it as the source.
 *
 * As client-go: recording never blocks or throws (writes go through a bounded queue, one at a time); the same
 * event about the same object again bumps `count` and `lastTimestamp` of the event already written instead of
 * creating another (while it is among the last 4096 remembered, and until the API server has expired it); each object may cause at most 25 events in a burst, then one per 5 minutes (the spam
 * filter), so a reconcile loop gone wrong cannot flood the API. Not done: client-go's aggregation of similar
 * events with different messages ("combined from similar events").
 */
import { hostname } from 'node:os';
import { LRUCache } from 'lru-cache';
import { KubeApiError, type KubeClient } from './client.js';
import type { ObjectLike } from './objects.js';
import type { Logger } from '../util/log.js';
import { kubeTime } from '../util/kube-time.js';
import { after } from '../util/timers.js';

/** `Normal` for what is expected, `Warning` for what needs a look. */
export type KubeEventType = 'Normal' | 'Warning';

/** Records events about objects, naming one component as their source. */
export interface EventRecorder {
  /**
   * Records an event about `obj` (which needs apiVersion, kind and name): `reason` is a short UpperCamelCase word
   * (`Created`, `FailedCleanup`), `message` a sentence for humans. Returns at once; the write happens in the
   * background.
   */
  event(obj: ObjectLike, type: KubeEventType, reason: string, message: string): void;
}

/** Options of an {@link EventBroadcaster}. */
export interface EventBroadcasterOptions {
  /** Events waiting to be written; further ones are dropped with a warning (default 1000, as client-go). */
  queueSize?: number;
  /** Events per object in a burst (default 25) and the refill interval in ms (default 300 000), as client-go. */
  spamBurst?: number;
  spamRefillMs?: number;
  /** Clock in ms (tests). */
  now?: () => number;
  logger?: Logger;
}

const DEFAULTS = { queueSize: 1000, spamBurst: 25, spamRefillMs: 300_000 };
/** client-go's bound on the correlator's and the spam filter's caches. */
const MAX_TRACKED = 4096;
/** Kubernetes' limit on an event message (longer ones are truncated, as client-go does). */
const MAX_MESSAGE_BYTES = 1024;

/** A message or note within the API's 1 KiB, cut at a character boundary and marked `...` (as client-go cuts it). */
export function truncate(message: string): string {
  if (Buffer.byteLength(message) <= MAX_MESSAGE_BYTES) return message;
  let out = '';
  for (const ch of message) {
    if (Buffer.byteLength(out + ch) > MAX_MESSAGE_BYTES - 3) break;
    out += ch;
  }
  return `${out}...`;
}

interface Pending {
  component: string;
  obj: Required<Pick<ObjectLike, 'apiVersion' | 'kind'>> & {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
  };
  type: KubeEventType;
  reason: string;
  message: string;
  at: number;
}

/** Writes the events of every recorder it hands out, through one client. */
export class EventBroadcaster {
  private readonly opts: typeof DEFAULTS & { now: () => number; logger?: Logger };
  private readonly queue: Pending[] = [];
  private readonly written = new LRUCache<string, { namespace: string; name: string; count: number }>({
    max: MAX_TRACKED,
  });
  private readonly tokens = new LRUCache<string, { tokens: number; at: number }>({ max: MAX_TRACKED });
  private draining: Promise<void> | undefined;
  private stopped = false;
  private readonly host = hostname();

  constructor(
    private readonly client: KubeClient,
    opts: EventBroadcasterOptions = {},
  ) {
    this.opts = {
      queueSize: opts.queueSize ?? DEFAULTS.queueSize,
      spamBurst: opts.spamBurst ?? DEFAULTS.spamBurst,
      spamRefillMs: opts.spamRefillMs ?? DEFAULTS.spamRefillMs,
      now: opts.now ?? Date.now,
      logger: opts.logger,
    };
  }

  /** A recorder naming `component` (a controller's name) as the source of its events. */
  recorderFor(component: string): EventRecorder {
    return { event: (obj, type, reason, message) => this.record(component, obj, type, reason, message) };
  }

  /** Resolves once every queued event has been written (or has failed). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Drops what is still queued after `timeoutMs` and records nothing more. */
  async shutdown(timeoutMs = 2000): Promise<void> {
    let cancel: (() => void) | undefined;
    await Promise.race([this.flush(), new Promise<void>((r) => (cancel = after(timeoutMs, r)))]);
    cancel?.();
    this.stopped = true;
    this.queue.length = 0;
  }

  private record(component: string, obj: ObjectLike, type: KubeEventType, reason: string, message: string): void {
    const log = this.opts.logger;
    if (this.stopped) return;
    if (type !== 'Normal' && type !== 'Warning') {
      log?.error('unsupported event type: use Normal or Warning', { type: String(type), reason });
      return;
    }
    const md = obj?.metadata;
    if (!obj?.apiVersion || !obj.kind || !md?.name) {
      log?.error('cannot record an event about an object without apiVersion, kind and metadata.name', { reason });
      return;
    }
    const at = this.opts.now();
    if (!this.allow(`${component}/${obj.kind}/${md.namespace ?? ''}/${md.name}/${md.uid ?? ''}`, at)) {
      log?.debug('event dropped by the spam filter', { reason, object: md.name });
      return;
    }
    if (this.queue.length >= this.opts.queueSize) {
      log?.warn('event queue full: dropping the event', { reason, object: md.name });
      return;
    }
    this.queue.push({
      component,
      obj: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: md.name,
        namespace: md.namespace,
        uid: md.uid,
        resourceVersion: md.resourceVersion,
      },
      type,
      reason,
      message: truncate(String(message)),
      at,
    });
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** client-go's spam filter: a token bucket per source and object. */
  private allow(key: string, now: number): boolean {
    const b = this.tokens.get(key) ?? { tokens: this.opts.spamBurst, at: now };
    const refill = Math.floor((now - b.at) / this.opts.spamRefillMs);
    if (refill > 0) {
      b.tokens = Math.min(this.opts.spamBurst, b.tokens + refill);
      b.at += refill * this.opts.spamRefillMs;
    }
    if (b.tokens >= this.opts.spamBurst) b.at = now;
    const ok = b.tokens > 0;
    if (ok) b.tokens--;
    this.tokens.set(key, b);
    return ok;
  }

  private async drain(): Promise<void> {
    for (let e = this.queue.shift(); e; e = this.queue.shift()) {
      try {
        await this.write(e);
      } catch (err) {
        // an event is best effort: a failed write is logged, never thrown into a reconcile
        this.opts.logger?.warn('could not write an event', {
          reason: e.reason,
          object: e.obj.name,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  private async write(e: Pending): Promise<void> {
    const namespace = e.obj.namespace || 'default';
    const key = JSON.stringify([
      e.component,
      e.obj.apiVersion,
      e.obj.kind,
      e.obj.namespace ?? '',
      e.obj.name,
      e.obj.uid ?? '',
      e.type,
      e.reason,
      e.message,
    ]);
    const seen = this.written.get(key);
    const ts = kubeTime(e.at);
    if (seen) {
      const count = seen.count + 1;
      try {
        await this.client.mergePatch(
          `/api/v1/namespaces/${encodeURIComponent(seen.namespace)}/events/${encodeURIComponent(seen.name)}`,
          { count, lastTimestamp: ts },
        );
        seen.count = count;
        return;
      } catch (err) {
        if (!(err instanceof KubeApiError && err.status === 404)) throw err;
        // the event expired or was deleted: write it anew
      }
    }
    const name = `${e.obj.name}.${(BigInt(e.at) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    await this.client.create(`/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: e.obj.apiVersion,
        kind: e.obj.kind,
        name: e.obj.name,
        ...(e.obj.namespace ? { namespace: e.obj.namespace } : {}),
        ...(e.obj.uid ? { uid: e.obj.uid } : {}),
        ...(e.obj.resourceVersion ? { resourceVersion: e.obj.resourceVersion } : {}),
      },
      reason: e.reason,
      message: e.message,
      type: e.type,
      count: 1,
      firstTimestamp: ts,
      lastTimestamp: ts,
      source: { component: e.component },
      reportingComponent: e.component,
      reportingInstance: this.host,
    });
    this.written.set(key, { namespace, name, count: 1 });
  }
}

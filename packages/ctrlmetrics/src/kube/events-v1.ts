/**
 * Events of the `events.k8s.io/v1` API, as client-go's `tools/events` writes them and controller-runtime's
 * `GetEventRecorder` hands them out: each event names the object it is about (`regarding`), optionally another
 * (`related`), what was done (`action`) and why (`reason`), with a `note` for humans; `reportingController` is the
 * recorder's name and `reportingInstance` that name and the host's.
 *
 * Repeats are a series, as client-go: an event isomorphic to one written in the last 6 minutes — the same
 * reporting controller, regarding and related objects, action and reason (the note may differ) — is not written
 * again: the second turns the first into a series (`series: { count: 2, lastObservedTime }`, one strategic merge
 * patch), later ones only count in memory; the count is written every 30 minutes while the series goes on, and
 * once more when it ends (6 minutes without a repeat). A series whose event was deleted meanwhile is created anew.
 * Recording never blocks or throws: writes go through a bounded queue, one at a time, and a failed write is logged,
 * not retried.
 */
import { hostname } from 'node:os';
import { LRUCache } from 'lru-cache';
import { KubeApiError, type KubeClient } from './client.js';
import type { ObjectLike } from './objects.js';
import { truncate, type KubeEventType } from './events.js';
import type { Logger } from '../util/log.js';
import { after, systemTimerClock, type TimerClock } from '../util/timers.js';

/** Records `events.k8s.io/v1` events naming one controller as their reporter (controller-runtime's `events.EventRecorder`). */
export interface EventsV1Recorder {
  /**
   * Records an event about `regarding` (which needs apiVersion, kind and name), optionally naming a `related`
   * object: `reason` says why (`Created`, `FailedCleanup`), `action` what was done or failed (`Reconcile`,
   * `ScaleDown`), `note` is a sentence for humans (longer than 1 KiB: cut, as the API refuses it). Returns at once;
   * the write happens in the background.
   */
  event(
    regarding: ObjectLike,
    related: ObjectLike | undefined,
    type: KubeEventType,
    reason: string,
    action: string,
    note: string,
  ): void;
}

/** Options of an {@link EventsV1Broadcaster}. */
export interface EventsV1BroadcasterOptions {
  /** Writes waiting to be sent; further events are dropped with a warning (default 1000, as client-go). */
  queueSize?: number;
  /** Time without a repeat that ends a series (default 360 000 ms, client-go's). */
  finishMs?: number;
  /** How often a running series' count is written (default 1 800 000 ms, client-go's). */
  refreshMs?: number;
  /** Wall-clock milliseconds for `eventTime` and `lastObservedTime` (tests). */
  now?: () => number;
  /** The timers of the finish and refresh sweeps (tests). */
  clock?: TimerClock;
  logger?: Logger;
}

/** Events remembered for series (client-go keeps them until their series ends; bounded here). */
const MAX_TRACKED = 4096;

interface Reference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

interface Tracked {
  namespace: string;
  name: string;
  /** The event as created (what a re-create after a deletion sends again). */
  body: Record<string, unknown>;
  /** Wall-clock ms of the first occurrence, and the timer clock's, for the sweeps. */
  firstSeenTick: number;
  series?: { count: number; lastObservedMs: number; lastObservedTick: number };
  /** The series count the API holds. */
  writtenCount: number;
}

type Write = { op: 'create'; entry: Tracked } | { op: 'series'; entry: Tracked };

/** `metav1.MicroTime` on the wire: RFC 3339 in UTC with microseconds. */
function microTime(ms: number): string {
  const iso = new Date(Math.floor(ms)).toISOString(); // …T08:00:00.123Z
  const micros = String(Math.floor((ms % 1) * 1000)).padStart(3, '0');
  return `${iso.slice(0, -1)}${micros}Z`;
}

function referenceOf(obj: ObjectLike | undefined): Reference | undefined {
  const md = obj?.metadata;
  if (!obj?.apiVersion || !obj.kind || !md?.name) return undefined;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: md.name,
    ...(md.namespace ? { namespace: md.namespace } : {}),
    ...(md.uid ? { uid: md.uid } : {}),
    ...(md.resourceVersion ? { resourceVersion: md.resourceVersion } : {}),
  };
}

/** Writes the `events.k8s.io/v1` events of every recorder it hands out, through one client. */
export class EventsV1Broadcaster {
  private readonly queue: Write[] = [];
  private readonly tracked = new LRUCache<string, Tracked>({ max: MAX_TRACKED });
  private readonly opts: Required<Omit<EventsV1BroadcasterOptions, 'logger'>> & { logger?: Logger };
  private readonly host = hostname();
  private draining: Promise<void> | undefined;
  private stopped = false;
  private readonly cancelTimers: Array<() => void> = [];

  constructor(
    private readonly client: KubeClient,
    opts: EventsV1BroadcasterOptions = {},
  ) {
    this.opts = {
      queueSize: opts.queueSize ?? 1000,
      finishMs: opts.finishMs ?? 360_000,
      refreshMs: opts.refreshMs ?? 1_800_000,
      now: opts.now ?? Date.now,
      clock: opts.clock ?? systemTimerClock,
      logger: opts.logger,
    };
    this.every(this.opts.finishMs, () => this.finishSeries());
    this.every(this.opts.refreshMs, () => this.refreshSeries());
  }

  /** A recorder whose events name `controller` as their reporting controller. */
  recorderFor(controller: string): EventsV1Recorder {
    return {
      event: (regarding, related, type, reason, action, note) =>
        this.record(controller, regarding, related, type, reason, action, note),
    };
  }

  /** Resolves once every queued write has been sent (or has failed). */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /**
   * Writes the counts of the running series, waits for the queue (at most `timeoutMs`), then drops what is left and
   * records nothing more.
   */
  async shutdown(timeoutMs = 2000): Promise<void> {
    for (const c of this.cancelTimers.splice(0)) c();
    for (const entry of this.tracked.values())
      if (entry.series && entry.series.count > entry.writtenCount) this.enqueue({ op: 'series', entry });
    let cancel: (() => void) | undefined;
    await Promise.race([this.flush(), new Promise<void>((r) => (cancel = after(timeoutMs, r)))]);
    cancel?.();
    this.stopped = true;
    this.queue.length = 0;
  }

  private every(ms: number, fn: () => void): void {
    const arm = () => {
      this.cancelTimers[index] = after(
        ms,
        () => {
          if (this.stopped) return;
          fn();
          arm();
        },
        this.opts.clock,
      );
    };
    const index = this.cancelTimers.length;
    this.cancelTimers.push(() => undefined);
    arm();
  }

  private record(
    controller: string,
    regarding: ObjectLike,
    related: ObjectLike | undefined,
    type: KubeEventType,
    reason: string,
    action: string,
    note: string,
  ): void {
    const log = this.opts.logger;
    if (this.stopped) return;
    if (type !== 'Normal' && type !== 'Warning') {
      log?.error('unsupported event type: use Normal or Warning', { type: String(type), reason });
      return;
    }
    const ref = referenceOf(regarding);
    if (!ref) {
      log?.error('cannot record an event about an object without apiVersion, kind and metadata.name', { reason });
      return;
    }
    if (!reason || !action) {
      log?.error('an events.k8s.io/v1 event needs a reason and an action', { reason, action });
      return;
    }
    const relatedRef = referenceOf(related);
    const key = JSON.stringify([controller, ref, relatedRef ?? null, action, reason]);
    const tick = this.opts.clock.now();
    const wall = this.opts.now();
    const seen = this.tracked.get(key);
    if (seen) {
      if (seen.series) {
        seen.series.count++;
        seen.series.lastObservedMs = wall;
        seen.series.lastObservedTick = tick;
        return;
      }
      seen.series = { count: 2, lastObservedMs: wall, lastObservedTick: tick };
      this.enqueue({ op: 'series', entry: seen });
      return;
    }
    const namespace = ref.namespace || 'default';
    const name = `${ref.name}.${(BigInt(Math.floor(wall)) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    const entry: Tracked = {
      namespace,
      name,
      firstSeenTick: tick,
      writtenCount: 0,
      body: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace },
        eventTime: microTime(wall),
        reportingController: controller,
        reportingInstance: `${controller}-${this.host}`,
        action,
        reason,
        regarding: ref,
        ...(relatedRef ? { related: relatedRef } : {}),
        note: truncate(String(note)),
        type,
      },
    };
    this.tracked.set(key, entry);
    this.enqueue({ op: 'create', entry });
  }

  private enqueue(w: Write): void {
    if (this.queue.length >= this.opts.queueSize) {
      this.opts.logger?.warn('event queue full: dropping the event', {
        reason: String(w.entry.body['reason']),
        object: w.entry.name,
      });
      return;
    }
    this.queue.push(w);
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Ends the series without a repeat for `finishMs` (their last count written) and forgets single events as old. */
  private finishSeries(): void {
    const now = this.opts.clock.now();
    for (const [key, entry] of this.tracked.entries()) {
      if (entry.series) {
        if (now - entry.series.lastObservedTick <= this.opts.finishMs) continue;
        if (entry.series.count > entry.writtenCount) this.enqueue({ op: 'series', entry });
        this.tracked.delete(key);
      } else if (now - entry.firstSeenTick > this.opts.finishMs) {
        this.tracked.delete(key);
      }
    }
  }

  /** Writes the count of every running series (the API expires events an hour after their last write). */
  private refreshSeries(): void {
    for (const entry of this.tracked.values())
      if (entry.series && entry.series.count > entry.writtenCount) this.enqueue({ op: 'series', entry });
  }

  private async drain(): Promise<void> {
    for (let w = this.queue.shift(); w; w = this.queue.shift()) {
      try {
        if (w.op === 'create') await this.create(w.entry);
        else await this.writeSeries(w.entry);
      } catch (err) {
        // an event is best effort: a failed write is logged, never thrown into a reconcile
        this.opts.logger?.warn('could not write an event', {
          reason: String(w.entry.body['reason']),
          object: w.entry.name,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  private path(entry: Tracked, name?: string): string {
    return `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(entry.namespace)}/events${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  private async create(entry: Tracked, withSeries = false): Promise<void> {
    const series =
      withSeries && entry.series
        ? { series: { count: entry.series.count, lastObservedTime: microTime(entry.series.lastObservedMs) } }
        : {};
    await this.client.create(this.path(entry), { ...entry.body, ...series });
    entry.writtenCount = withSeries && entry.series ? entry.series.count : 1;
  }

  private async writeSeries(entry: Tracked): Promise<void> {
    const series = entry.series!;
    if (series.count <= entry.writtenCount) return;
    const count = series.count;
    try {
      await this.client.request('PATCH', this.path(entry, entry.name), {
        body: { series: { count, lastObservedTime: microTime(series.lastObservedMs) } },
        contentType: 'application/strategic-merge-patch+json',
      });
      entry.writtenCount = count;
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
      // the event expired or was deleted: write it anew, with its series
      await this.create(entry, true);
    }
  }
}

/**
 * Lease-based leader election (coordination.k8s.io/v1 Lease) as client-go's, with its defaults (lease 15 s,
 * renew deadline 10 s, retry 2 s), plus fencing client-go lacks:
 *
 * - Renewal runs in rounds. A round starts with an attempt and retries on a fixed `retryPeriod` tick; it is
 *   bounded by `renewDeadline` counted from its first attempt, and requests in flight are aborted at it. A
 *   failed round loses leadership. Between successful rounds the elector waits `retryPeriod`.
 * - Expiry is judged on this process's monotonic clock (`performance.now()`), from when the lease record was last
 *   seen to change — never by comparing another process's timestamps with ours.
 * - The holder renews without a GET while its lease is valid (fast path); otherwise GET, then PUT with the
 *   record's resourceVersion, so a stale holder's write is refused with a conflict.
 * - `leaseTransitions` is incremented by every write of a non-holder (takeover of an expired or released lease).
 * - Fencing: {@link LeaderElector.mayLead} is false once our lease may have expired by our own clock (the start
 *   of our last successful write plus the lease duration), so a process that wakes from a freeze starts no work.
 *
 * `leader_election_master_status{name}`: 0 at construction, 1 on acquire, 0 after a failed round.
 *
 * A failed Lease read, create or update is logged at error level in client-go's words, with the API's reason and
 * message (which names the user a 403 refused): a candidate that can never take the lease says why at every try
 * instead of waiting in silence. The same error again within one retry period is not repeated.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { KubeApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../util/log.js';
import { leaderElectionMasterStatus } from '../controller/metrics.js';
import { after } from '../util/timers.js';

/** Options of a {@link LeaderElector}. */
export interface LeaderElectionOptions {
  /** Lease name (controller-runtime's LeaderElectionID). */
  id: string;
  namespace: string;
  /** This replica's identity (default `<hostname>_<uuid>`). */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the lease up when stopped, so another replica takes over at once (default false, as controller-runtime). */
  releaseOnCancel?: boolean;
  /**
   * Labels the Lease carries: set when it is created and merged into the Lease as read before every write, so that
   * labels others keep on it (a sharder's state label) are never dropped. A shard's lease is labelled with its ring.
   */
  labels?: Record<string, string>;
  logger?: Logger;
  /** Monotonic milliseconds (tests). */
  now?: () => number;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: LeaseSpec;
}

/** client-go's JitterFactor for the acquire loop. */
const ACQUIRE_JITTER = 1.2;

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Waits `ms` (any length), or less if `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const cancel = after(ms, done, undefined, true);
    function done() {
      cancel();
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Acquires and renews one Lease. */
export class LeaderElector {
  readonly identity: string;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly requestTimeoutMs: number;
  private readonly now: () => number;
  private readonly gauge;
  private leading = false;
  /** The record last seen (JSON of its spec, to detect change) and when, on our monotonic clock. */
  private observed: { record: string; lease: Lease } | undefined;
  private observedAt = -Infinity;
  /** Our own bound of our lease: the start of our last successful write plus the lease duration. */
  private validUntil = -Infinity;
  /** The last failed-call line logged and when (monotonic), to log an identical one at most once per retry period. */
  private lastFailure: { line: string; at: number } | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: LeaderElectionOptions,
  ) {
    this.leaseMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
    if (!(this.leaseMs > 0 && this.renewDeadlineMs > 0 && this.retryMs > 0))
      throw new Error('leader election: lease duration, renew deadline and retry period must be greater than 0');
    if (!(this.leaseMs > this.renewDeadlineMs))
      throw new Error(
        `leader election: the lease duration (${this.leaseMs} ms) must be greater than the renew deadline (${this.renewDeadlineMs} ms)`,
      );
    if (!(this.renewDeadlineMs > ACQUIRE_JITTER * this.retryMs)) {
      throw new Error(
        `leader election: the renew deadline (${this.renewDeadlineMs} ms) must be greater than 1.2 × the retry period (${this.retryMs} ms)`,
      );
    }
    this.identity = opts.identity ?? `${hostname()}_${randomUUID()}`;
    if (!this.identity) throw new Error('leader election: the identity must not be empty');
    // as controller-runtime's REST config for leader election: max(renewDeadline / 2, 1 s) per request
    this.requestTimeoutMs = Math.max(this.renewDeadlineMs / 2, 1_000);
    this.now = opts.now ?? (() => performance.now());
    this.gauge = leaderElectionMasterStatus.labels(opts.id);
    this.gauge.set(0);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Whether this replica may still act as the leader: it won the lease and, by its own monotonic clock, the lease
   * it last wrote has not expired. Check it before starting any work that only the leader may do.
   */
  mayLead(): boolean {
    return this.leading && this.now() < this.validUntil;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.opts.namespace)}/leases`;
  }

  private get leasePath(): string {
    return `${this.path}/${encodeURIComponent(this.opts.id)}`;
  }

  /** Blocks until this replica holds the lease (true) or `signal` aborts (false). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    this.opts.logger?.info('attempting to acquire leader lease', { lease: `${this.opts.namespace}/${this.opts.id}` });
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(signal)) {
        this.leading = true;
        this.gauge.set(1);
        this.opts.logger?.info('successfully acquired lease', {
          lease: `${this.opts.namespace}/${this.opts.id}`,
          identity: this.identity,
        });
        return true;
      }
      await sleep(this.retryMs * (1 + Math.random() * ACQUIRE_JITTER), signal);
    }
    return false;
  }

  /**
   * Renews in rounds until `signal` aborts (resolves undefined) or a round fails (resolves with an Error:
   * leadership lost; the gauge drops to 0).
   */
  async renewLoop(signal: AbortSignal): Promise<Error | undefined> {
    while (!signal.aborted) {
      const renewed = await this.renewRound(signal);
      if (signal.aborted) return undefined;
      if (!renewed) {
        this.leading = false;
        this.gauge.set(0);
        this.opts.logger?.error('Failed to renew lease', {
          lease: `${this.opts.namespace}/${this.opts.id}`,
          renewDeadlineMs: this.renewDeadlineMs,
        });
        return new Error(
          `leader election lost: could not renew lease ${this.opts.namespace}/${this.opts.id} within ${this.renewDeadlineMs} ms`,
        );
      }
      await sleep(this.retryMs, signal);
    }
    return undefined;
  }

  /** One round: attempts on a fixed retry tick from its start, all aborted `renewDeadline` after it. */
  private async renewRound(signal: AbortSignal): Promise<boolean> {
    const start = this.now();
    const deadline = start + this.renewDeadlineMs;
    const round = new AbortController();
    const cancelDeadline = after(this.renewDeadlineMs, () => round.abort(), undefined, true);
    const onAbort = () => round.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        if (await this.tryAcquireOrRenew(round.signal)) return true;
        const now = this.now();
        if (round.signal.aborted || now >= deadline) return false;
        const nextTick = start + (Math.floor((now - start) / this.retryMs) + 1) * this.retryMs;
        await sleep(Math.min(nextTick, deadline) - now, round.signal);
        if (round.signal.aborted || this.now() >= deadline) return false;
      }
    } finally {
      cancelDeadline();
      signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Gives the lease up when `releaseOnCancel` is set and we hold it (seen locally and in the record just read):
   * holder empty, duration 1 s, transitions kept, so anyone may take it at once. Leaves the gauge as it is.
   */
  async release(): Promise<void> {
    const wasLeading = this.leading;
    this.leading = false;
    if (!wasLeading || !this.opts.releaseOnCancel) return;
    if (this.observed?.lease.spec?.holderIdentity !== this.identity) return;
    try {
      const lease = await this.client.get<Lease>(this.leasePath, { timeoutMs: this.renewDeadlineMs });
      if (lease.spec?.holderIdentity !== this.identity) return;
      const now = microTime();
      lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now };
      await this.client.replace(
        this.leasePath,
        { ...lease, metadata: this.labelled(lease.metadata) },
        { timeoutMs: this.renewDeadlineMs },
      );
      this.opts.logger?.info('released the leader lease', { lease: `${this.opts.namespace}/${this.opts.id}` });
    } catch (err) {
      this.opts.logger?.warn('failed to release the leader lease', { error: (err as Error).message });
    }
  }

  /** The lease's metadata with our labels merged in (theirs kept). */
  private labelled(metadata: Lease['metadata']): Lease['metadata'] {
    const labels = this.opts.labels;
    if (!labels || Object.keys(labels).length === 0) return metadata;
    return { ...metadata, labels: { ...metadata.labels, ...labels } };
  }

  private observe(lease: Lease): void {
    const record = JSON.stringify(lease.spec ?? {});
    if (this.observed?.record !== record) this.observedAt = this.now();
    this.observed = { record, lease };
  }

  /** Records a lease we just wrote (started at `sentAt`). */
  private wrote(lease: Lease, sentAt: number): void {
    this.observed = { record: JSON.stringify(lease.spec ?? {}), lease };
    this.observedAt = this.now();
    this.validUntil = sentAt + this.leaseMs;
  }

  /** Logs a failed Lease call at error level as client-go words it (`what: <the API's message>`), rate-limited. */
  private failed(what: string, err: unknown, signal: AbortSignal): void {
    if (signal.aborted) return; // a round's deadline or a stop cut the call: not the API's answer
    const message = err instanceof Error ? err.message : String(err);
    const line = `${what}: ${message}`;
    const now = this.now();
    if (this.lastFailure?.line === line && now - this.lastFailure.at < this.retryMs) return;
    this.lastFailure = { line, at: now };
    const fields: Record<string, unknown> = { lease: `${this.opts.namespace}/${this.opts.id}` };
    if (err instanceof KubeApiError) {
      fields.reason = err.reason;
      if (err.status) fields.code = err.status;
    }
    this.opts.logger?.error(line, fields);
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const nowWall = microTime();
    const desired: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
      acquireTime: nowWall,
      renewTime: nowWall,
    };
    const req = { timeoutMs: this.requestTimeoutMs, signal };
    try {
      // 1. fast path: we hold a lease that is valid by our clock: PUT the record we have, no GET
      const seen = this.observed?.lease;
      if (
        seen?.spec?.holderIdentity === this.identity &&
        this.now() < this.observedAt + (seen.spec.leaseDurationSeconds ?? 0) * 1000
      ) {
        const sentAt = this.now();
        try {
          const spec = {
            ...seen.spec,
            ...desired,
            acquireTime: seen.spec.acquireTime,
            leaseTransitions: seen.spec.leaseTransitions,
          };
          this.wrote(
            await this.client.replace<Lease>(
              this.leasePath,
              { ...seen, metadata: this.labelled(seen.metadata), spec },
              req,
            ),
            sentAt,
          );
          return true;
        } catch (err) {
          if (signal.aborted) return false;
          this.opts.logger?.debug('fast-path lease renewal failed, reading the lease', {
            error: (err as Error).message,
          });
        }
      }
      // 2. read the record
      let lease: Lease;
      try {
        lease = await this.client.get<Lease>(this.leasePath, req);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 404) {
          this.failed(`error retrieving resource lock ${this.opts.namespace}/${this.opts.id}`, err, signal);
          return false;
        }
        const sentAt = this.now();
        let created: Lease;
        try {
          created = await this.client.create<Lease>(
            this.path,
            {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: this.labelled({ name: this.opts.id, namespace: this.opts.namespace }),
              spec: { ...desired, leaseTransitions: 0 },
            },
            req,
          );
        } catch (createErr) {
          this.failed('error initially creating leader election record', createErr, signal);
          return false;
        }
        this.wrote(created, sentAt);
        return true;
      }
      // 3. someone else holds a lease that is valid since we last saw it change: not ours to take
      this.observe(lease);
      const s = lease.spec ?? {};
      const holder = s.holderIdentity ?? '';
      if (
        holder !== '' &&
        holder !== this.identity &&
        this.now() < this.observedAt + (s.leaseDurationSeconds ?? 0) * 1000
      )
        return false;
      // 4. renew (holder: keep acquire time and transitions) or take over (+1 transition)
      const self = holder === this.identity;
      const spec: LeaseSpec = {
        ...s,
        ...desired,
        acquireTime: self ? s.acquireTime : desired.acquireTime,
        leaseTransitions: self ? (s.leaseTransitions ?? 0) : (s.leaseTransitions ?? 0) + 1,
      };
      const sentAt = this.now();
      try {
        this.wrote(
          await this.client.replace<Lease>(
            this.leasePath,
            { ...lease, metadata: this.labelled(lease.metadata), spec },
            req,
          ),
          sentAt,
        );
      } catch (err) {
        this.failed('Failed to update lock', err, signal);
        return false;
      }
      return true;
    } catch (err) {
      if (!signal.aborted) this.opts.logger?.debug('leader lease attempt failed', { error: (err as Error).message });
      return false;
    }
  }
}

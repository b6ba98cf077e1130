/**
 * Lease-based leader election (coordination.k8s.io/v1 Lease), with client-go's timing defaults
 * (lease 15 s, renew deadline 10 s, retry 2 s). Sets `leader_election_master_status{name}`: 0 while waiting
 * or after losing the lease, 1 while leading.
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
  /** Give the lease up at shutdown so another replica takes over at once (default true). */
  releaseOnCancel?: boolean;
  logger?: Logger;
}

interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

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
  private readonly gauge;
  private leading = false;
  private observedAt = 0;
  private observedHolder = '';
  private observedRenew = '';

  constructor(
    private readonly client: KubeClient,
    private readonly opts: LeaderElectionOptions,
  ) {
    this.identity = opts.identity ?? `${hostname()}_${randomUUID()}`;
    this.leaseMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
    this.gauge = leaderElectionMasterStatus.labels(opts.id);
    this.gauge.set(0);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.opts.namespace)}/leases`;
  }

  /** Blocks until this replica holds the lease (true) or `signal` aborts (false). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    this.opts.logger?.info('attempting to acquire leader lease', { lease: `${this.opts.namespace}/${this.opts.id}` });
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(signal)) {
        this.leading = true;
        this.gauge.set(1);
        this.opts.logger?.info('successfully acquired lease', { lease: `${this.opts.namespace}/${this.opts.id}`, identity: this.identity });
        return true;
      }
      await sleep(this.retryMs * (1 + Math.random() * 0.2), signal);
    }
    return false;
  }

  /**
   * Renews every retry period until `signal` aborts (resolves) or renewal fails for longer than the renew
   * deadline (resolves with an Error: leadership lost).
   */
  async renewLoop(signal: AbortSignal): Promise<Error | undefined> {
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.retryMs, signal);
      if (signal.aborted) break;
      if (await this.tryAcquireOrRenew(signal)) {
        lastRenew = Date.now();
      } else if (Date.now() - lastRenew > this.renewDeadlineMs) {
        this.leading = false;
        this.gauge.set(0);
        return new Error(`leader election lost: could not renew lease ${this.opts.namespace}/${this.opts.id} within ${this.renewDeadlineMs} ms`);
      }
    }
    return undefined;
  }

  /** Gives the lease up (if held and `releaseOnCancel`), and sets the gauge to 0. */
  async release(): Promise<void> {
    const wasLeading = this.leading;
    this.leading = false;
    this.gauge.set(0);
    if (!wasLeading || this.opts.releaseOnCancel === false) return;
    try {
      const lease = await this.client.get<Lease>(`${this.path}/${encodeURIComponent(this.opts.id)}`, { timeoutMs: 5_000 });
      if (lease.spec?.holderIdentity !== this.identity) return;
      lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime() };
      await this.client.replace(`${this.path}/${encodeURIComponent(this.opts.id)}`, lease, { timeoutMs: 5_000 });
    } catch (err) {
      this.opts.logger?.warn('failed to release the leader lease', { error: (err as Error).message });
    }
  }

  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = new Date();
    const name = this.opts.id;
    const spec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
      renewTime: microTime(now),
    };
    try {
      let lease: Lease;
      try {
        lease = await this.client.get<Lease>(`${this.path}/${encodeURIComponent(name)}`, { timeoutMs: this.renewDeadlineMs, signal });
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 404) throw err;
        await this.client.create(this.path, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace: this.opts.namespace },
          spec: { ...spec, acquireTime: microTime(now), leaseTransitions: 0 },
        }, { timeoutMs: this.renewDeadlineMs, signal });
        return true;
      }
      const s = lease.spec ?? {};
      const holder = s.holderIdentity ?? '';
      // track when the record last changed, by our clock (as client-go does: no clock-skew assumptions)
      if (holder !== this.observedHolder || (s.renewTime ?? '') !== this.observedRenew) {
        this.observedHolder = holder;
        this.observedRenew = s.renewTime ?? '';
        this.observedAt = Date.now();
      }
      const duration = (s.leaseDurationSeconds ?? 15) * 1000;
      if (holder && holder !== this.identity && Date.now() < this.observedAt + duration) return false;
      const changed = holder !== this.identity;
      lease.spec = {
        ...s,
        ...spec,
        acquireTime: changed ? microTime(now) : s.acquireTime ?? microTime(now),
        leaseTransitions: (s.leaseTransitions ?? 0) + (changed && holder ? 1 : 0),
      };
      await this.client.replace(`${this.path}/${encodeURIComponent(name)}`, lease, { timeoutMs: this.renewDeadlineMs, signal });
      this.observedHolder = this.identity;
      this.observedRenew = spec.renewTime;
      this.observedAt = Date.now();
      return true;
    } catch (err) {
      if (!signal.aborted) this.opts.logger?.debug('leader lease attempt failed', { error: (err as Error).message });
      return false;
    }
  }
}

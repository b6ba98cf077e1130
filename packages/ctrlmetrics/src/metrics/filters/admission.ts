/**
 * Admission of the filter's API reviews in lanes, so that a flood of garbage tokens cannot crowd out the
 * scrapers the cluster actually trusts:
 *
 * - `known`: re-validating a token that authenticated before (its cached decision just expired), and every
 *   SubjectAccessReview (only authenticated users get one);
 * - `signed`: the first TokenReview of a token signed by one of the cluster's service-account keys
 *   (issuer-keys.ts) — a new pod's or a rotated token, which garbage cannot forge;
 * - `new`: the first TokenReview of any other token — where garbage lands.
 *
 * Each lane has its own slots (reviews in flight), its own rate (a token bucket) and its own bounded FIFO queue
 * with a short wait; a request that cannot be admitted in time is refused at once with a Retry-After hint (the
 * filter answers 503) instead of hanging. Lanes share nothing, so a full `new` lane never delays a `known` one.
 *
 * Hand-written: the general-purpose limiters on npm (p-limit, bottleneck) have no per-request deadline with a
 * fail-fast estimate, and we need an injectable clock (util/timers.ts) for tests.
 */
import { TokenBucket } from '../../kube/ratelimit.js';
import { after, systemTimerClock, type TimerClock } from '../../util/timers.js';
import { CtrlmetricsError } from '../../util/errors.js';

/** The lanes, most trusted first. */
export type LaneName = 'known' | 'signed' | 'new';

/** Limits of one lane. */
export interface LaneLimits {
  /** Reviews of the lane in flight at once. */
  concurrency: number;
  /** Requests waiting for a slot at most; one more is refused at once. */
  queue: number;
  /** Longest wait for a slot; a request that would wait longer is refused. */
  maxWaitMs: number;
  /** Reviews the lane may start per second, and its burst. */
  qps: number;
  burst: number;
}

/** Defaults: known tokens get more of everything, and a longer wait, than tokens never seen before. */
export const DEFAULT_LANES: Readonly<Record<LaneName, Readonly<LaneLimits>>> = {
  known: { concurrency: 8, queue: 256, maxWaitMs: 5_000, qps: 50, burst: 100 },
  signed: { concurrency: 4, queue: 128, maxWaitMs: 2_000, qps: 20, burst: 40 },
  new: { concurrency: 4, queue: 64, maxWaitMs: 1_000, qps: 40, burst: 40 },
};

/** A review could not be admitted in time: the caller should answer 503 with `Retry-After`. */
export class AdmissionRejectedError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_ADMISSION_REJECTED';
  override name = 'AdmissionRejectedError';
  constructor(
    readonly lane: LaneName,
    /** Seconds after which trying again is sensible (at least 1). */
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}

/** Counts of one lane, for tests and diagnostics. */
export interface LaneStats {
  inFlight: number;
  waiting: number;
  admitted: number;
  rejected: number;
}

interface Waiter {
  start: () => void;
  cancelTimer: () => void;
}

class Lane {
  private inFlight = 0;
  private readonly waiting: Waiter[] = [];
  private readonly bucket: TokenBucket;
  private cancelPump: (() => void) | undefined;
  admitted = 0;
  rejected = 0;

  constructor(
    private readonly name: LaneName,
    private readonly limits: LaneLimits,
    private readonly clock: TimerClock,
  ) {
    this.bucket = new TokenBucket(limits.qps, limits.burst, () => clock.now());
  }

  stats(): LaneStats {
    return { inFlight: this.inFlight, waiting: this.waiting.length, admitted: this.admitted, rejected: this.rejected };
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.inFlight++;
        this.admitted++;
        let p: Promise<T>;
        try {
          p = fn();
        } catch (err) {
          p = Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
        p.then(resolve, reject).finally(() => {
          this.inFlight--;
          this.pump();
        });
      };
      if (this.waiting.length === 0 && this.inFlight < this.limits.concurrency && this.bucket.tryTake()) {
        start();
        return;
      }
      const refuse = (why: string, waitMs: number) => {
        this.rejected++;
        const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
        reject(new AdmissionRejectedError(this.name, retryAfter, `${this.name}-token reviews saturated: ${why}`));
      };
      if (this.waiting.length >= this.limits.queue) {
        refuse(`${this.waiting.length} requests already waiting`, this.rateWaitMs(this.waiting.length + 1));
        return;
      }
      // the rate alone tells when this request could start at the earliest: refuse now rather than after the wait
      const earliest = this.rateWaitMs(this.waiting.length + 1);
      if (earliest > this.limits.maxWaitMs) {
        refuse(`the earliest start is ${Math.ceil(earliest)} ms away`, earliest);
        return;
      }
      const waiter: Waiter = {
        start,
        cancelTimer: after(
          this.limits.maxWaitMs,
          () => {
            // a slot or token that became free at this very moment still counts
            this.pump();
            const i = this.waiting.indexOf(waiter);
            if (i < 0) return;
            this.waiting.splice(i, 1);
            refuse(`no slot within ${this.limits.maxWaitMs} ms`, this.limits.maxWaitMs);
          },
          this.clock,
        ),
      };
      this.waiting.push(waiter);
      this.pump();
    });
  }

  /** How long until the bucket holds `n` tokens. */
  private rateWaitMs(n: number): number {
    return this.bucket.waitMsFor(n);
  }

  private pump(): void {
    this.cancelPump?.();
    this.cancelPump = undefined;
    while (this.waiting.length > 0 && this.inFlight < this.limits.concurrency) {
      if (!this.bucket.tryTake()) {
        this.cancelPump = after(
          Math.max(1, this.bucket.waitMs()),
          () => {
            this.cancelPump = undefined;
            this.pump();
          },
          this.clock,
        );
        return;
      }
      const w = this.waiting.shift()!;
      w.cancelTimer();
      w.start();
    }
  }
}

/** The filter's review lanes. */
export class Admission {
  private readonly lanes: Record<LaneName, Lane>;

  constructor(limits: Partial<Record<LaneName, Partial<LaneLimits>>> = {}, clock: TimerClock = systemTimerClock) {
    const lane = (name: LaneName) => {
      const l = { ...DEFAULT_LANES[name], ...definedOnly(limits[name] ?? {}) };
      for (const [k, v] of Object.entries(l)) {
        if (!(typeof v === 'number' && v >= (k === 'queue' ? 0 : 1) && Number.isFinite(v))) {
          throw new Error(
            `admission.${name}.${k} must be a finite number of at least ${k === 'queue' ? 0 : 1}, got ${String(v)}`,
          );
        }
      }
      return new Lane(name, l, clock);
    };
    this.lanes = { known: lane('known'), signed: lane('signed'), new: lane('new') };
  }

  /** Runs `fn` once the lane admits it; rejects with {@link AdmissionRejectedError} if it cannot in time. */
  run<T>(lane: LaneName, fn: () => Promise<T>): Promise<T> {
    return this.lanes[lane].run(fn);
  }

  stats(lane: LaneName): LaneStats {
    return this.lanes[lane].stats();
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

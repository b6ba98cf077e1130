/**
 * Runnables and the groups the manager starts them in (controller-runtime's `Runnable` and `runnableGroup`): a group
 * starts its members together, starts a member added later at once, and on stop aborts their common signal and
 * waits for them, within a deadline.
 */
import { after } from '../util/timers.js';

/**
 * Anything the manager runs (controller-runtime's `manager.Runnable`): a periodic job, a queue consumer, a server.
 * Added with `mgr.add(runnable)`.
 */
export interface Runnable {
  /**
   * Runs until `signal` aborts, then stops and settles. A rejection stops the manager, and `start()` of the manager
   * rejects with a `ManagerError` whose `cause` is that error. Resolving early is allowed: the runnable is done.
   */
  start(signal: AbortSignal): Promise<void> | void;
  /**
   * Whether the runnable runs only on the replica holding the leader Lease (controller-runtime's
   * `LeaderElectionRunnable`). Default true, as controller-runtime's; false runs it on every replica, leader or not.
   */
  readonly needLeaderElection?: boolean;
  /** A name for logs and errors (default `runnable`). */
  readonly name?: string;
}

/**
 * A runnable of the manager's own that says when it is up (bound, synced): the group's start waits for it, and a
 * failure before that fails the start. `up` may be called once; a runnable that never calls it is up when it ends.
 * @internal
 */
export interface ReportingRunnable {
  readonly name: string;
  start(signal: AbortSignal, up: () => void): Promise<void>;
}

type Member = { name: string; reports: boolean; start: (signal: AbortSignal, up: () => void) => Promise<void> | void };

/** Turns what is thrown into an Error (a runnable may reject with anything). */
function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * One group of runnables: started together, stopped together.
 * @internal
 */
export class RunnableGroup {
  private readonly members: Member[] = [];
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private started = false;

  /**
   * @param name the group's name, for logs
   * @param onFailure called with the error of a member that rejects (also after stop began: the caller decides)
   */
  constructor(
    readonly name: string,
    private readonly onFailure: (err: Error, member: string) => void,
  ) {}

  /** Whether the group was started (members added now start at once). */
  get isStarted(): boolean {
    return this.started;
  }

  /** Whether the group's stop began. */
  get isStopping(): boolean {
    return this.abort.signal.aborted;
  }

  /** Adds a user's runnable: up as soon as it is launched. Starts it at once when the group runs. */
  add(r: Runnable): void {
    // a failure goes to onFailure; the launch's own promise has its handler
    void this.push({ name: r.name ?? 'runnable', reports: false, start: (signal) => r.start(signal) });
  }

  /** Adds a runnable of the manager's own, which reports when it is up. */
  addReporting(r: ReportingRunnable): Promise<void> | undefined {
    return this.push({ name: r.name, reports: true, start: (signal, up) => r.start(signal, up) });
  }

  private push(m: Member): Promise<void> | undefined {
    if (this.abort.signal.aborted) throw new Error(`cannot add ${m.name}: the manager is stopping`);
    this.members.push(m);
    return this.started ? this.launch(m) : undefined;
  }

  /** Starts every member; resolves when all are up, rejects with the first failure before that. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await Promise.all(this.members.map((m) => this.launch(m)));
  }

  private launch(m: Member): Promise<void> {
    let up!: () => void;
    let failed!: (e: Error) => void;
    const isUp = new Promise<void>((res, rej) => {
      up = res;
      failed = rej;
    });
    isUp.catch(() => undefined);
    if (!m.reports) up();
    const run = (async () => m.start(this.abort.signal, up))().then(
      () => up(),
      (err: unknown) => {
        const e = asError(err);
        failed(e);
        this.onFailure(e, m.name);
      },
    );
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
    return isUp;
  }

  /**
   * Aborts the members' signal and waits for every one to settle, at most `timeoutMs`. Resolves true when all
   * ended in time.
   */
  async stop(timeoutMs: number): Promise<boolean> {
    this.abort.abort();
    if (this.running.size === 0) return true;
    let cancel: (() => void) | undefined;
    const ended = await Promise.race([
      Promise.all([...this.running]).then(() => true),
      new Promise<boolean>((r) => (cancel = after(Math.max(0, timeoutMs), () => r(false)))),
    ]);
    cancel?.();
    return ended;
  }
}

/**
 * The write-ahead log of the state directory: every change of the store as one JSON line, appended before the
 * change is applied, with one fsync shared by all the changes appended meanwhile (group commit). A change is
 * acknowledged to its client only once the fsync that covers it is done.
 *
 * Why hand-written: `node:sqlite` is missing from Node 20 (our oldest supported LTS), and the SQLite packages ship
 * native binaries fetched from GitHub at install time; the log needs only append, fsync and a line reader.
 */
import { closeSync, fdatasync, fdatasyncSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import type { StoredObject } from './types.js';
import type { StoreEvent, StoreJournal } from './store.js';
import { CtrlmetricsError } from 'ctrlmetrics/internal';

/** One line of the log. */
export interface LogRecord {
  rv: number;
  /** Storage key of the type. */
  key: string;
  /** The object as stored, or for a deletion the object that was removed. */
  object: StoredObject;
  deleted?: true;
}

/** A change that could not be written to the state; the store is left as it was. */
export class StorageError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_STORAGE';
  override name = 'StorageError';
}

/** Encodes one change as a log line. */
export function encodeRecord(ev: StoreEvent): Buffer {
  const rec: LogRecord =
    ev.type === 'DELETED'
      ? { rv: ev.rv, key: ev.key, object: ev.object, deleted: true }
      : { rv: ev.rv, key: ev.key, object: ev.object };
  return Buffer.from(JSON.stringify(rec) + '\n');
}

interface Waiter {
  rv: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Options of {@link WriteAheadLog}. */
export interface WriteAheadLogOptions {
  /** Called with the last resourceVersion that is durable, after each fsync. */
  onDurable: (rv: number) => void;
  /** Called after each append with the bytes in the current segment (to decide on compaction). */
  onAppend?: (segmentBytes: number) => void;
}

/** Appends changes to one segment file at a time; {@link WriteAheadLog.rotate} moves on to a new one. */
export class WriteAheadLog implements StoreJournal {
  private fd: number;
  private size: number;
  private appendedRV = 0;
  private durableRV = 0;
  private syncing = false;
  private syncScheduled = false;
  private readonly waiters: Waiter[] = [];
  /** Set once an fsync failed: what is in the page cache may never reach the disk, so nothing more is accepted. */
  private failure?: Error;
  private closed = false;
  /** Segments moved away from while an fsync of theirs was running: closed when it ends. */
  private readonly retired: number[] = [];

  constructor(
    private path: string,
    private readonly opts: WriteAheadLogOptions,
  ) {
    this.fd = openSync(path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /** The segment now appended to. */
  get segment(): string {
    return this.path;
  }

  /** Writes one change; throws {@link StorageError} (leaving the segment as it was) when it cannot. */
  append(ev: StoreEvent): void {
    if (this.failure)
      throw new StorageError(
        `the state log ${this.path} failed earlier (${this.failure.message}); restart the authority`,
      );
    if (this.closed) throw new StorageError('the authority is stopping; the change was not stored');
    const buf = encodeRecord(ev);
    let off = 0;
    try {
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (err) {
      // cut a partial line, so that the next record starts on a line of its own
      try {
        if (off > 0) ftruncateSync(this.fd, this.size);
      } catch (cut) {
        this.failure = cut as Error;
      }
      throw new StorageError(`cannot write the state log ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    this.size += buf.length;
    this.appendedRV = ev.rv;
    this.scheduleSync();
    this.opts.onAppend?.(this.size);
  }

  /** Resolves once every change appended so far is durable; rejects when the fsync failed. */
  durable(): Promise<void> {
    if (this.failure)
      return Promise.reject(
        new StorageError(`the state log ${this.path} could not be synced: ${this.failure.message}`),
      );
    if (this.durableRV >= this.appendedRV) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ rv: this.appendedRV, resolve, reject });
      this.scheduleSync();
    });
  }

  private scheduleSync(): void {
    if (this.syncScheduled || this.syncing) return;
    this.syncScheduled = true;
    // after the current tick, so that the changes of concurrent requests share one fsync
    setImmediate(() => {
      this.syncScheduled = false;
      this.sync();
    });
  }

  private sync(): void {
    if (this.syncing || this.closed || this.durableRV >= this.appendedRV) return;
    this.syncing = true;
    const target = this.appendedRV;
    fdatasync(this.fd, (err) => {
      this.syncing = false;
      for (const fd of this.retired.splice(0)) closeSync(fd);
      if (err) return this.fail(err);
      this.synced(target);
      if (this.durableRV < this.appendedRV) this.scheduleSync();
    });
  }

  private synced(rv: number): void {
    if (rv <= this.durableRV) return;
    this.durableRV = rv;
    this.opts.onDurable(rv);
    let n = 0;
    while (n < this.waiters.length && this.waiters[n].rv <= rv) n++;
    for (const w of this.waiters.splice(0, n)) w.resolve();
  }

  private fail(err: Error): void {
    this.failure = err;
    const e = new StorageError(`the state log ${this.path} could not be synced: ${err.message}`);
    for (const w of this.waiters.splice(0)) w.reject(e);
  }

  /** Why the log stopped accepting changes, if it did. */
  get failed(): Error | undefined {
    return this.failure;
  }

  /**
   * Makes everything appended durable now, then appends to `nextPath` from here on (its directory entry must be
   * made durable by the caller before changes are acknowledged).
   */
  rotate(nextPath: string): void {
    this.syncNow();
    const fd = openSync(nextPath, 'a', 0o600);
    this.release(this.fd);
    this.fd = fd;
    this.path = nextPath;
    this.size = fstatSync(fd).size;
  }

  private release(fd: number): void {
    if (this.syncing) this.retired.push(fd);
    else closeSync(fd);
  }

  private syncNow(): void {
    if (this.failure || this.durableRV >= this.appendedRV) return;
    try {
      fdatasyncSync(this.fd);
    } catch (err) {
      this.fail(err as Error);
      throw new StorageError(`the state log ${this.path} could not be synced: ${(err as Error).message}`, {
        cause: err,
      });
    }
    this.synced(this.appendedRV);
  }

  /** Makes everything appended durable and closes the segment; throws when some change could not be kept. */
  close(): void {
    if (this.closed) return;
    try {
      this.syncNow();
    } finally {
      this.closed = true;
      this.release(this.fd);
    }
    if (this.failure)
      throw new StorageError(
        `the state log ${this.path} failed (${this.failure.message}): changes after resourceVersion ${this.durableRV} may be lost`,
      );
  }
}

/**
 * Keeping the store in the state directory: a snapshot (`state.json`) plus the write-ahead log segments written
 * since (`state.<n>.log`). Start-up loads the snapshot and replays the segments; once the segments outgrow the
 * snapshot, a new snapshot is written in the background, a slice at a time, and the segments it covers are removed.
 * A write costs one appended line whatever the number of objects, and no save ever blocks the server for long.
 */
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'ctrlmetrics/log';
import type { Store } from './store.js';
import type { StateDir } from './state.js';
import { WriteAheadLog, type LogRecord } from './wal.js';

const SNAPSHOT = 'state.json';
const SEGMENT = /^state\.(\d+)\.log$/;
const STALE_TEMP = /^state\.json\..+\.tmp$/;
/** Objects serialised per slice of a background snapshot (about 1 ms of work each). */
const SLICE = 256;

/** Options of {@link Persistence.open}. */
export interface PersistenceOptions {
  logger: Logger;
  /** Log bytes after which a new snapshot is written, at least (default 8 MiB; the snapshot's size when larger). */
  compactAfterBytes?: number;
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks one parsed log line; throws saying what is wrong. */
function checkRecord(r: unknown): LogRecord {
  if (!isPlainObject(r)) throw new Error('not an object');
  if (!(typeof r['rv'] === 'number' && Number.isSafeInteger(r['rv']) && r['rv'] > 0))
    throw new Error(`rv is ${JSON.stringify(r['rv'])}, not a positive integer`);
  if (typeof r['key'] !== 'string' || !r['key']) throw new Error('key is missing');
  const m = isPlainObject(r['object']) ? r['object']['metadata'] : undefined;
  if (!isPlainObject(m) || typeof m['name'] !== 'string' || !m['name'])
    throw new Error('the object has no metadata.name');
  if (m['namespace'] !== undefined && typeof m['namespace'] !== 'string')
    throw new Error('the object has a metadata.namespace that is not a string');
  return r as unknown as LogRecord;
}

/** The store's state directory files, open for writing. */
export class Persistence {
  private segmentNo: number;
  /** Bytes of the segments written since the last snapshot, except the current one. */
  private olderBytes = 0;
  private snapshotBytes: number;
  private compacting?: Promise<void>;
  private closing = false;
  private readonly wal: WriteAheadLog;

  private constructor(
    private readonly state: StateDir,
    private readonly store: Store,
    private readonly opts: PersistenceOptions,
    loaded: { lastSegment: number; segmentBytes: number; snapshotBytes: number },
  ) {
    this.segmentNo = loaded.lastSegment + 1;
    this.olderBytes = loaded.segmentBytes;
    this.snapshotBytes = loaded.snapshotBytes;
    this.wal = new WriteAheadLog(this.path(this.segmentName(this.segmentNo)), {
      onDurable: (rv) => store.commitThrough(rv),
      onAppend: (bytes) => this.maybeCompact(bytes),
    });
    fsyncDir(state.dir);
    store.setJournal(this.wal);
  }

  /**
   * Loads the snapshot and the log segments into `store` (which must be empty) and journals its later changes.
   * Throws, naming the file, when one of them is corrupt; the files are left untouched.
   */
  static open(state: StateDir, store: Store, opts: PersistenceOptions): Persistence {
    const names = readdirSync(state.dir);
    for (const n of names) {
      // a snapshot being written when the last process stopped; we hold the directory's lock, so nobody writes it now
      if (STALE_TEMP.test(n)) unlinkSync(join(state.dir, n));
    }
    const snapshot = state.loadSnapshot();
    if (snapshot) store.load(snapshot);
    else
      writeFileSync(join(state.dir, SNAPSHOT), JSON.stringify({ resourceVersion: 0, objects: {} }), {
        mode: 0o600,
        flush: true,
      });
    const snapshotBytes = statSync(join(state.dir, SNAPSHOT)).size;
    const segments = names
      .map((n) => SEGMENT.exec(n))
      .filter((m): m is RegExpExecArray => !!m)
      .map((m) => ({ name: m[0], no: Number(m[1]) }))
      .sort((a, b) => a.no - b.no);
    const snapshotRV = store.resourceVersion;
    let last = snapshotRV;
    let segmentBytes = 0;
    for (const seg of segments) {
      const file = join(state.dir, seg.name);
      const text = readFileSync(file, 'utf8');
      segmentBytes += text.length;
      const lines = text.split('\n');
      // the part after the last newline was being written when the process died: never acknowledged, dropped
      const torn = lines.pop()!;
      if (torn)
        opts.logger.info(
          'dropping an incomplete last record of the state log (written when the authority was killed)',
          { file, bytes: torn.length },
        );
      lines.forEach((line, i) => {
        let rec: LogRecord;
        try {
          rec = checkRecord(JSON.parse(line));
          if (rec.rv > snapshotRV && rec.rv <= last) throw new Error(`rv ${rec.rv} does not follow ${last}`);
        } catch (err) {
          throw new Error(
            `the authority state log ${file} is corrupt at line ${i + 1} (${(err as Error).message}); it was left as it is: move the state directory away to start fresh`,
            { cause: err },
          );
        }
        if (rec.rv <= snapshotRV) return; // already in the snapshot
        last = rec.rv;
        store.replay(rec.rv, rec.key, rec.object, rec.deleted === true);
      });
    }
    return new Persistence(state, store, opts, { lastSegment: segments.at(-1)?.no ?? 0, segmentBytes, snapshotBytes });
  }

  private segmentName(no: number): string {
    return `state.${no}.log`;
  }

  private path(name: string): string {
    return join(this.state.dir, name);
  }

  /** Resolves once every change applied so far is on disk; rejects when it could not be written. */
  durable(): Promise<void> {
    return this.wal.durable();
  }

  private maybeCompact(segmentBytes: number): void {
    if (this.compacting || this.closing) return;
    const threshold = Math.max(this.opts.compactAfterBytes ?? 8 * 1024 * 1024, this.snapshotBytes);
    if (this.olderBytes + segmentBytes < threshold) return;
    this.compacting = this.compact()
      .catch((err: unknown) =>
        this.opts.logger.error('cannot write a snapshot of the authority state; the log keeps every change', {
          dir: this.state.dir,
          err: (err as Error).message,
        }),
      )
      .finally(() => {
        this.compacting = undefined;
      });
  }

  /** Writes a snapshot of the store as it is now, then removes the segments it covers. */
  private async compact(): Promise<void> {
    // started from inside an append, before the store has applied that change: wait until it has, or the snapshot
    // would miss the change whose record is in the segment about to be removed (an acknowledged write lost)
    await Promise.resolve();
    if (this.closing) return;
    const covered = this.segmentNo;
    this.wal.rotate(this.path(this.segmentName(covered + 1)));
    fsyncDir(this.state.dir);
    this.segmentNo = covered + 1;
    this.olderBytes = 0;
    const snap = this.store.snapshot();
    const file = this.path(SNAPSHOT);
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    let bytes = 0;
    const write = async (s: string) => {
      bytes += Buffer.byteLength(s);
      await fh.write(s);
    };
    try {
      await write(`{"resourceVersion":${snap.resourceVersion},"objects":{`);
      let firstKey = true;
      for (const [key, objs] of Object.entries(snap.objects)) {
        await write(`${firstKey ? '' : ','}${JSON.stringify(key)}:[`);
        firstKey = false;
        for (let i = 0; i < objs.length; i += SLICE) {
          await write(
            (i ? ',' : '') +
              objs
                .slice(i, i + SLICE)
                .map((o) => JSON.stringify(o))
                .join(','),
          );
        }
        await write(']');
      }
      await write('}}');
      await fh.datasync();
      await fh.close();
      await rename(tmp, file);
    } catch (err) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    fsyncDir(this.state.dir);
    this.snapshotBytes = bytes;
    for (const n of readdirSync(this.state.dir)) {
      const m = SEGMENT.exec(n);
      if (m && Number(m[1]) <= covered) unlinkSync(this.path(n));
    }
  }

  /** Waits for a snapshot being written, makes every change durable and closes the log; throws when some may be lost. */
  async close(): Promise<void> {
    this.closing = true;
    await this.compacting;
    this.wal.close();
  }
}

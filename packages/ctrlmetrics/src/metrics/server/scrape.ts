/**
 * The `/metrics` handler: content negotiation, one shared collect + render for concurrent scrapes, gzip,
 * and a streamed body.
 *
 * Concurrent scrapes share a "generation": one `registry.collect()`, and per (format, escaping, gzip) one render whose
 * chunks are kept and replayed to every scrape of that generation, each at its own pace (a slow client never
 * stalls the render or the others). A scrape joins only a generation that has not started, so it always sees
 * the updates made before its request: scrapes arriving while one runs wait for the next, which starts when the
 * running one's collect failed or its renders are done. A collector error gives every waiting scrape a 500
 * before any body is sent.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { once } from 'node:events';
import { setImmediate } from 'node:timers/promises';
import type { Logger } from '../../util/log.js';
import { drainOrClose } from '../../util/streams.js';
import {
  BlockPool,
  negotiateFormat,
  TextSink,
  type BlockLease,
  type EscapingScheme,
  type ExpositionFormat,
  type MetricsSnapshot,
} from '../index.js';
import { sendText } from './respond.js';
import type { Handler, MetricsSource } from './types.js';

/** node:zlib, loaded at the first gzip scrape: a manager that is never asked for gzip does not carry it (≈ 1 MB). */
let zlibModule: Promise<typeof import('node:zlib')> | undefined;
const zlib = () => (zlibModule ??= import('node:zlib'));

export type { MetricsSource };

/** Largest piece written to a socket in one turn of the event loop. */
const WRITE_PIECE_BYTES = 64 * 1024;

/**
 * zlib level: 1-3 cost far less CPU than the default 6 for a few percent more bytes. Level 1 because on
 * exposition bodies in client_golang's order it is the fastest and, at 100k lines, no larger than 2
 * (docs/performance-notes.md, "gzip level 1").
 */
const GZIP_LEVEL = 1;

/**
 * How many render times a waiting generation defers to the running one's readers. 1 shared too little under 8
 * back-to-back scrapers (10k lines: 324 req/s, 3 scrapes per render); 4 gives 542 req/s, 4 per render.
 */
const READER_GRACE = 4;

/** Who is told when a render's readers come and go (its generation). */
interface ReaderTracker {
  readers: number;
  readersDone(): void;
}

/**
 * One render of a snapshot in one format/encoding, replayable by any number of readers. Text is rendered into
 * blocks lent by the handler's {@link BlockPool}; they go back once the render is done and every scrape holding the
 * job has had its answer written out ({@link done}), never while a socket may still hold a view of them.
 */
class RenderJob {
  private readonly chunks: Buffer[] = [];
  private finished = false;
  private error: Error | undefined;
  private waiters: Array<() => void> = [];
  /** Scrapes that were handed this job and have not called {@link done}. */
  private holders = 0;
  /** Set when an answer was cut short: its socket may still reference the blocks, so they are left to the GC. */
  private tainted = false;
  private lease: BlockLease | undefined;

  constructor(
    private readonly tracker: ReaderTracker,
    private readonly pool: BlockPool,
  ) {}

  /** Counts a scrape that will read this job; it must call {@link done} once its answer is written or abandoned. */
  hold(): void {
    this.holders++;
  }

  /** The scrape's answer is written out (`written`) or was abandoned, and it reads no more. */
  done(written: boolean): void {
    this.holders--;
    if (!written) this.tainted = true;
    this.maybeRelease();
  }

  private maybeRelease(): void {
    if (!this.finished || this.holders > 0 || !this.lease) return;
    if (!this.tainted) this.lease.release();
    this.lease = undefined;
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.wake();
  }

  finish(err?: Error): void {
    this.finished = true;
    this.error = err;
    if (err) this.tainted = true;
    this.wake();
    this.maybeRelease();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Every chunk from the first, waiting for more until the render is done; throws if the render failed. */
  async *read(): AsyncGenerator<Buffer> {
    this.tracker.readers++;
    try {
      let i = 0;
      for (;;) {
        while (i < this.chunks.length) yield this.chunks[i++];
        if (this.finished) {
          if (this.error) throw this.error;
          return;
        }
        await new Promise<void>((resolve) => this.waiters.push(resolve));
      }
    } finally {
      if (--this.tracker.readers === 0) this.tracker.readersDone();
    }
  }

  async run(
    snapshot: MetricsSnapshot,
    format: ExpositionFormat,
    escaping: EscapingScheme,
    gzip: boolean,
  ): Promise<void> {
    // protobuf has pooled writers of its own
    const lease = format === 'protobuf' ? undefined : this.pool.lease();
    try {
      if (!gzip) {
        this.lease = lease;
        for await (const chunk of snapshot.chunks(format, escaping, lease)) this.push(chunk);
      } else {
        // zlib streams compress on the libuv thread pool, off the main thread. Its output is copied into blocks of
        // their own lease at once: zlib's own 16 KB buffers then die with the stream, instead of living as long as
        // the slowest reader and being promoted to the old generation, where V8 frees an ArrayBuffer only at a
        // mark-compact (they held up to 7.5 MB of a 10k server's heap under gzip scrapes; docs/performance-notes.md)
        this.lease = this.pool.lease();
        const out = new TextSink(undefined, this.lease);
        const gz = (await zlib()).createGzip({ level: GZIP_LEVEL });
        gz.on('data', (c: Buffer) => {
          out.bytes(c);
          for (const view of out.take()) this.push(view);
        });
        const ended = once(gz, 'end');
        for await (const chunk of snapshot.chunks(format, escaping, lease)) {
          if (!gz.write(chunk)) await once(gz, 'drain');
        }
        gz.end();
        await ended;
        // zlib has read every block of the render
        lease?.release();
      }
      this.finish();
    } catch (err) {
      this.finish(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

interface Generation extends ReaderTracker {
  /** Resolves once the generation has started and its collect is done. */
  snapshot: Promise<MetricsSnapshot>;
  /** Starts the collect (a generation waiting behind another is created unstarted). */
  start: () => void;
  settled: boolean;
  renders: Map<string, RenderJob>;
  /** Renders still producing chunks. */
  running: number;
  startedAt: number;
  /** ms from start to the last render done: the next generation waits for this one's readers at most READER_GRACE× that. */
  renderMs: number | undefined;
  /** Set once this generation's readers have held the next one back for `renderMs`. */
  graceOver: boolean;
  graceTimer: NodeJS.Timeout | undefined;
}

/**
 * Shares one collect and one render per format/encoding among concurrent scrapes, without ever serving an
 * update late: a scrape joins only a generation that has not started yet, because values are read while
 * collecting and rendering. At most one generation runs; scrapes that arrive meanwhile join the next one.
 *
 * The next one starts when the running one has rendered and its answers have been written, so that scrapes
 * arriving during those writes share one render (under 8 back-to-back scrapers, starting it as soon as the
 * running one had rendered left each scrape alone in its generation: 3× the CPU). Readers hold it back for at
 * most {@link READER_GRACE} times as long as the running render took, so a slow or stalled client delays the
 * others by a few renders at most, far below any scrape timeout.
 */
export class ScrapeCoalescer {
  private running: Generation | undefined;
  private next: Generation | undefined;
  private readonly pool = new BlockPool();

  constructor(private readonly source: MetricsSource) {}

  private create(): Generation {
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    const gen: Generation = {
      snapshot: started.then(() => {
        gen.startedAt = performance.now();
        return this.source.collect();
      }),
      start,
      settled: false,
      renders: new Map(),
      running: 0,
      startedAt: 0,
      renderMs: undefined,
      graceOver: false,
      graceTimer: undefined,
      readers: 0,
      readersDone: () => this.maybeEnd(gen),
    };
    const settle = () => {
      gen.settled = true;
      this.maybeEnd(gen);
    };
    gen.snapshot.then(settle, settle);
    return gen;
  }

  /** The generation a scrape arriving now joins: the waiting one, or a new one started at once when none runs. */
  private generation(): Generation {
    if (this.next) return this.next;
    const gen = this.create();
    if (this.running) {
      this.next = gen;
      this.maybeEnd(this.running);
    } else {
      this.running = gen;
      gen.start();
    }
    return gen;
  }

  private maybeEnd(gen: Generation): void {
    if (!gen.settled || gen.running !== 0 || this.running !== gen) return;
    gen.renderMs ??= performance.now() - gen.startedAt;
    if (this.next && gen.readers > 0 && !gen.graceOver) {
      gen.graceTimer ??= setTimeout(
        () => {
          gen.graceOver = true;
          this.maybeEnd(gen);
        },
        Math.ceil(READER_GRACE * gen.renderMs),
      );
      return;
    }
    if (gen.graceTimer) clearTimeout(gen.graceTimer);
    this.running = this.next;
    this.next = undefined;
    this.running?.start();
  }

  /** The snapshot of a generation this scrape may join (starts a collect if none is in flight). */
  snapshot(): Promise<MetricsSnapshot> {
    return this.generation().snapshot;
  }

  /**
   * Waits for the snapshot, then returns the shared render for this format/escaping/encoding, held for the caller
   * (call `done` on it once the answer is written). Rejects if collect failed.
   */
  async render(format: ExpositionFormat, escaping: EscapingScheme, gzip: boolean): Promise<RenderJob> {
    const gen = this.generation();
    const key = `${format}|${escaping}|${gzip ? 'gzip' : 'identity'}`;
    let job = gen.renders.get(key);
    if (!job) {
      const created = new RenderJob(gen, this.pool);
      job = created;
      gen.renders.set(key, created);
      gen.running++;
      gen.snapshot
        .then((snap) => created.run(snap, format, escaping, gzip))
        .catch(() => undefined) // a failed collect is reported through `await gen.snapshot` below
        .finally(() => {
          gen.running--;
          this.maybeEnd(gen);
        });
    }
    job.hold();
    try {
      await gen.snapshot;
    } catch (err) {
      job.done(false);
      throw err;
    }
    return job;
  }
}

/** True when `Accept-Encoding` allows gzip (q-values honoured; `*` counts unless gzip is refused). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let star: boolean | undefined;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().split(';');
    const name = coding.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (k?.trim().toLowerCase() === 'q' && v !== undefined) {
        const n = Number(v.trim());
        q = Number.isFinite(n) ? n : 0;
      }
    }
    if (name === 'gzip' || name === 'x-gzip') return q > 0;
    if (name === '*') star = q > 0;
  }
  return star ?? false;
}

/** Resolves true once the response has been handed to the OS in full ('finish'), false if it closed first. */
function writtenOut(res: ServerResponse | Http2ServerResponse): Promise<boolean> {
  if ((res as { writableFinished?: boolean }).writableFinished === true) return Promise.resolve(true);
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onFinish = () => {
      res.off('close', onClose);
      resolve(true);
    };
    const onClose = () => {
      res.off('finish', onFinish);
      resolve((res as { writableFinished?: boolean }).writableFinished === true);
    };
    res.once('finish', onFinish);
    res.once('close', onClose);
  });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Builds the `/metrics` handler over a registry. */
export function metricsHandler(source: MetricsSource, log: Logger): Handler {
  const coalescer = new ScrapeCoalescer(source);
  return async (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => {
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'HEAD') {
      sendText(res, 405, 'Method Not Allowed', { Allow: 'GET, HEAD' });
      return;
    }
    const { format, contentType, escaping } = negotiateFormat(req.headers.accept);
    const gzip = method === 'GET' && acceptsGzip(req.headers['accept-encoding']);
    let job: RenderJob | undefined;
    try {
      if (method === 'HEAD') await coalescer.snapshot();
      else job = await coalescer.render(format, escaping, gzip);
    } catch (err) {
      log.error('error gathering metrics', { error: message(err) });
      sendText(res, 500, `An error has occurred while serving metrics:\n\n${message(err)}`);
      return;
    }
    let written = false;
    try {
      if (res.destroyed) return;
      const headers: Record<string, string> = { 'Content-Type': contentType, Vary: 'Accept, Accept-Encoding' };
      if (gzip) headers['Content-Encoding'] = 'gzip';
      res.writeHead(200, headers);
      if (!job) {
        res.end();
        return;
      }
      try {
        for await (const chunk of job.read()) {
          for (let off = 0; off < chunk.length; off += WRITE_PIECE_BYTES) {
            if (res.destroyed) return;
            const piece = chunk.length <= WRITE_PIECE_BYTES ? chunk : chunk.subarray(off, off + WRITE_PIECE_BYTES);
            if (!(res as ServerResponse).write(piece)) await drainOrClose(res);
            // TLS encrypts on the main thread inside write(): one piece per turn of the event loop keeps
            // concurrent scrapes (each replaying the same render) from encrypting megabytes in one go
            else await setImmediate();
          }
        }
        res.end();
        // the render's blocks may be reused only once the socket has taken every byte written from them
        written = await writtenOut(res);
        log.debug('Served metrics', { format, escaping, contentEncoding: gzip ? 'gzip' : 'identity' });
      } catch (err) {
        // the status line is gone: cut the body short rather than send a truncated exposition as complete
        log.error('error rendering metrics', { error: message(err) });
        res.destroy();
      }
    } finally {
      job?.done(written);
    }
  };
}

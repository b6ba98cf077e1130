/**
 * Where the text formats are rendered: bytes written straight into Buffers outside the JS heap.
 *
 * Building the exposition as strings left ≈ 2.7 MB of young garbage per 10k-line scrape (a cons cell per `+`, the
 * formatted numbers, the flat copy `Buffer.from` makes of each slice) and kept the slice being built alive across
 * every scavenge; V8 answers such a steady allocation by growing its young generation to 32 MB, most of a scrape's
 * peak RSS (docs/performance-notes.md, "Memory"). Written here, a scrape allocates almost nothing on the JS
 * heap: the cached label text is copied byte by byte, integers are written as digits, and only non-integer values
 * are formatted as strings first. No library writes Prometheus text into a caller's buffer, hence this file.
 */
import { formatFloat } from './float-text.js';

/** Bytes per block: the largest piece the server writes to a socket in one turn of the loop. */
const BLOCK_BYTES = 64 * 1024;

/** Strings at least this long are written by Node's UTF-8 encoder (one call) rather than copied char by char. */
const NATIVE_WRITE_CHARS = 256;

/**
 * Blocks kept between renders. Allocating a fresh megabyte of `ArrayBuffer`s per scrape made V8 run a full
 * collection every ≈ 20 scrapes (it counts external memory toward its limits) and grow its young generation with
 * each; the `/metrics` handler hands blocks back once every answer that used them has been written out.
 */
export class BlockPool {
  private readonly free: Buffer[] = [];

  /** Keeps at most `maxBlocks` idle blocks (default 256: 16 MB, a 100k-line render twice over). */
  constructor(private readonly maxBlocks = 256) {}

  /** A block lent to one render; {@link BlockLease.release} returns them all. */
  lease(): BlockLease {
    return new BlockLease(this);
  }

  /** @internal */
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(BLOCK_BYTES);
  }

  /** @internal */
  give(blocks: readonly Buffer[]): void {
    for (const b of blocks) if (this.free.length < this.maxBlocks && b.length === BLOCK_BYTES) this.free.push(b);
  }

  /** Idle blocks held (tests, diagnostics). */
  get idleBlocks(): number {
    return this.free.length;
  }
}

/** The blocks one render took from a pool of blocks. */
export class BlockLease {
  private blocks: Buffer[] = [];

  constructor(private readonly pool: BlockPool) {}

  /** A block of at least `n` bytes (a string longer than a block gets one of its own, never pooled). */
  block(n: number): Buffer {
    const b = n > BLOCK_BYTES ? Buffer.allocUnsafe(n) : this.pool.take();
    this.blocks.push(b);
    return b;
  }

  /** Gives the blocks back: only once nothing holds a view of them any longer (every answer written out). */
  release(): void {
    this.pool.give(this.blocks);
    this.blocks = [];
  }
}

/**
 * An append-only byte stream in blocks of 64 KiB. {@link take} hands out what was written since its
 * last call as views of the blocks; a view is never written again (writing only moves forward), so chunks taken
 * can be replayed to any number of readers while rendering goes on in the same block.
 */
export class TextSink {
  private buf: Buffer;
  private pos = 0;
  /** Start of the bytes not yet taken in `buf`. */
  private start = 0;
  /** Views of earlier blocks not yet taken, in order. */
  private pending: Buffer[] = [];

  /**
   * Blocks come from `lease` when given, else are allocated: then the first has `firstBlock` bytes (a small
   * exposition need not allocate a whole one).
   */
  constructor(
    firstBlock = BLOCK_BYTES,
    private readonly lease?: BlockLease,
  ) {
    this.buf = lease ? lease.block(0) : Buffer.allocUnsafe(Math.max(64, Math.min(BLOCK_BYTES, firstBlock)));
  }

  /** Makes room for `n` more bytes, starting a new block if this one is too full. */
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    if (this.pos > this.start) this.pending.push(this.buf.subarray(this.start, this.pos));
    this.buf = this.lease ? this.lease.block(n) : Buffer.allocUnsafe(n > BLOCK_BYTES ? n : BLOCK_BYTES);
    this.pos = this.start = 0;
  }

  /** Appends `s` as UTF-8. */
  text(s: string): void {
    const n = s.length;
    if (n >= NATIVE_WRITE_CHARS) {
      this.native(s);
      return;
    }
    // an ASCII string is as many bytes as chars; the first non-ASCII char sends the rest to the encoder
    this.ensure(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) {
        this.pos = p;
        this.native(s.slice(i));
        return;
      }
      b[p++] = c;
    }
    this.pos = p;
  }

  private native(s: string): void {
    const len = Buffer.byteLength(s, 'utf8');
    this.ensure(len);
    this.pos += this.buf.write(s, this.pos, len, 'utf8');
  }

  /** Appends bytes prepared once (a family's name, a bucket's `le` pair): one copy, no char-by-char work. */
  bytes(u: Uint8Array): void {
    const n = u.length;
    this.ensure(n);
    this.buf.set(u, this.pos);
    this.pos += n;
  }

  /** Appends one ASCII byte (`\n`, `}`). */
  byte(c: number): void {
    this.ensure(1);
    this.buf[this.pos++] = c;
  }

  /** Appends a sample value as Prometheus writes it (Go's shortest float form); small integers without making a string. */
  number(v: number): void {
    if (v === (v | 0) && v < 1e6 && v > -1e6) this.integer(v);
    else this.text(formatFloat(v));
  }

  /** An integer of at most 7 digits (negative zero is written `0`, as `'' + -0`). */
  private integer(v: number): void {
    this.ensure(8);
    const b = this.buf;
    let p = this.pos;
    if (v < 0) {
      b[p++] = 0x2d;
      v = -v;
    }
    let digits = 1;
    for (let t = v; t >= 10; t = (t / 10) | 0) digits++;
    p += digits;
    this.pos = p;
    do {
      b[--p] = 0x30 + (v % 10);
      v = (v / 10) | 0;
    } while (v > 0);
  }

  /** What was written since the last call, as views in order (empty when nothing was). */
  take(): Buffer[] {
    if (this.pos > this.start) {
      this.pending.push(this.buf.subarray(this.start, this.pos));
      this.start = this.pos;
    }
    const out = this.pending;
    this.pending = [];
    return out;
  }
}

/**
 * A collected set of families and its rendering to Prometheus text 0.0.4, OpenMetrics 1.0.0 or protobuf.
 *
 * Rendering never builds the whole body: it writes about `sliceLines` lines at a time as bytes (`text-sink.ts`) and
 * yields to the event loop (`setImmediate`) between slices, so a 100k-series scrape does not block reconciles for
 * its full duration.
 */
import { counterBaseName, type ExpositionFormat, type FamilyView, type TextFormat } from './family.js';
import { escapeHelp } from './format.js';
import { sentName, writtenName } from './names.js';
import type { EscapingScheme } from './negotiate.js';
import { TextSink, type BlockLease } from './text-sink.js';

/** Lines per rendered chunk: ~1 ms of CPU, a few hundred KB. */
export const DEFAULT_SLICE_LINES = 4096;

/** The protobuf encoder, imported on the first protobuf render (a manager that is never asked for it never loads it). */
let protobufModule: Promise<typeof import('./protobuf.js')> | undefined;

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `# HELP` and `# TYPE` of a family whose name as sent (escaped, or as registered under `allow-utf-8`) is `sent`. */
function header(f: FamilyView, sent: string, om: boolean): string {
  if (!om) {
    const name = writtenName(sent);
    const help = f.help ? `# HELP ${name} ${escapeHelp(f.help, false)}\n` : '';
    return `${help}# TYPE ${name} ${f.type}\n`;
  }
  // OpenMetrics: a counter's family name drops `_total`; a counter without `_total` is written as `unknown` with
  // its samples under its own name (client_golang / prometheus/common v0.67), so the stored series name is the
  // same whichever format Prometheus negotiated.
  const base = f.type === 'counter' ? counterBaseName(sent) : sent;
  const type = f.type === 'untyped' || (f.type === 'counter' && base === sent) ? 'unknown' : f.type;
  const name = writtenName(base);
  const help = f.help ? `# HELP ${name} ${escapeHelp(f.help, true)}\n` : '';
  return `${help}# TYPE ${name} ${type}\n`;
}

/**
 * Header bytes of families whose names need no escaping, per view: our metrics hand out the same view from scrape
 * to scrape (see `Metric.view`), so their headers are encoded once, not per scrape.
 */
const headerCache = new WeakMap<FamilyView, { text?: Uint8Array; om?: Uint8Array }>();

function writeHeader(out: TextSink, f: FamilyView, escaping: EscapingScheme, om: boolean): void {
  const sent = sentName(f.name, escaping);
  if (sent !== f.name) {
    out.text(header(f, sent, om));
    return;
  }
  let cached = headerCache.get(f);
  if (!cached) headerCache.set(f, (cached = {}));
  const bytes = om
    ? (cached.om ??= Buffer.from(header(f, sent, true)))
    : (cached.text ??= Buffer.from(header(f, sent, false)));
  out.bytes(bytes);
}

/** The families of one collect, sorted by name; render them with {@link MetricsSnapshot.chunks}. */
export class MetricsSnapshot {
  constructor(
    /** Families sorted by name; those without series are never rendered. */
    readonly families: readonly FamilyView[],
    private readonly sliceLines = DEFAULT_SLICE_LINES,
  ) {}

  /** Number of sample lines the exposition will have (approximate for histograms; exact for the others). */
  get lineCount(): number {
    let n = 0;
    for (const f of this.families) n += f.units * f.linesPerUnit;
    return n;
  }

  /**
   * The exposition as UTF-8 chunks, rendered slice by slice with a turn of the event loop between slices.
   * Values are read while rendering. OpenMetrics ends with `# EOF`; protobuf is length-delimited `MetricFamily`
   * messages (its encoder is loaded on the first protobuf render). Names that are not legacy are written as
   * `escaping` says: quoted under `allow-utf-8`, else escaped (default `underscores`, client_golang's).
   * Text is written into blocks from `lease` when given (the chunks are views of them: release the lease only once
   * nothing reads them any longer), else into blocks of its own.
   */
  async *chunks(
    format: ExpositionFormat,
    escaping: EscapingScheme = 'underscores',
    lease?: BlockLease,
  ): AsyncGenerator<Buffer> {
    if (format === 'protobuf') {
      const { protobufChunks } = await (protobufModule ??= import('./protobuf.js'));
      yield* protobufChunks(this.families, this.sliceLines, escaping);
      return;
    }
    const om = format === 'openmetrics';
    const budget = this.sliceLines;
    // a small exposition gets a first block its size (≈ 100 bytes a line), not a whole one
    const out = new TextSink(this.lineCount * 100 + 1024, lease);
    let lines = 0;
    for (const f of this.families) {
      if (f.units === 0) continue;
      writeHeader(out, f, escaping, om);
      lines += 2;
      const per = Math.max(1, f.linesPerUnit);
      let i = 0;
      while (i < f.units) {
        const room = Math.max(1, Math.ceil((budget - lines) / per));
        const to = Math.min(f.units, i + room);
        if (f.write) f.write(out, format, i, to, escaping);
        else out.text(f.render(format, i, to, escaping));
        lines += (to - i) * per;
        i = to;
        if (lines >= budget) {
          yield* out.take();
          lines = 0;
          await yieldToLoop();
        }
      }
    }
    if (om) out.text('# EOF\n');
    yield* out.take();
  }

  /** The whole exposition in a text format as one string (tests, examples, small registries). */
  async text(format: TextFormat = 'text', escaping: EscapingScheme = 'underscores'): Promise<string> {
    return (await this.bytes(format, escaping)).toString('utf8');
  }

  /** The whole exposition in any format as one Buffer. */
  async bytes(format: ExpositionFormat, escaping: EscapingScheme = 'underscores'): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const c of this.chunks(format, escaping)) parts.push(c);
    return Buffer.concat(parts);
  }
}

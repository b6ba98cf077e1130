/** Reading V8's `--trace-gc` lines (one per collection) for bench/memory-anatomy.ts. */

/** One collection: its kind, heap used before → after, and heap committed after, in MB as V8 prints them. */
export interface GcEvent {
  kind: string;
  beforeMb: number;
  afterMb: number;
  committedAfterMb: number;
}

// e.g. "[7308:0x68b6c00]     8120 ms: Scavenge 14.6 (20.0) -> 9.2 (18.1) MB, 0.25 / 0.00 ms  (average mu = …"
// ("Scavenge (interleaved)" and "Mark-Compact (reduce)" are kinds of the same collections)
const GC_LINE =
  /\d+ ms: (Scavenge|Mark-Compact|Mark-Sweep|Minor Mark-Compact|Minor Mark-Sweep)(?: \([a-z ]+\))? ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/;

/** The collection a `--trace-gc` line reports, or undefined for any other line. */
export function parseGcLine(line: string): GcEvent | undefined {
  const m = GC_LINE.exec(line);
  if (!m) return undefined;
  return { kind: m[1], beforeMb: Number(m[2]), afterMb: Number(m[4]), committedAfterMb: Number(m[5]) };
}

/** Young-generation collections (the rest are full collections of the whole heap). */
export function isYoungGc(e: GcEvent): boolean {
  return e.kind === 'Scavenge' || e.kind.startsWith('Minor');
}

/**
 * The protobuf exposition: length-delimited `io.prometheus.client.MetricFamily` messages (Prometheus' client_model
 * `metrics.proto`, proto2), as client_golang's `expfmt` writes them: fields in field-number order, every field it
 * sets written even when zero, repeated fields unpacked, classic buckets cumulative without the `+Inf` bucket, and
 * a created timestamp on counters and histograms.
 *
 * The messages are laid out here field by field on `@bufbuild/protobuf`'s wire writer rather than built as
 * generated message objects and serialised: a scrape then allocates no object per series, and each series' label
 * pairs are encoded once and kept in its cell for the scrapes after. This module is loaded on the first protobuf
 * scrape only.
 */
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { Exemplar } from './exemplar.js';
import { sentName } from './names.js';
import type { EscapingScheme } from './negotiate.js';
import type { FamilyView, MetricType, ProtoLabelNames, ProtoLabels, ProtoNativeBuckets, ProtoSink } from './family.js';
import { spansAndDeltas, type BucketSpan } from './native-buckets.js';

/** `MetricFamily.type` (client_model `MetricType`). */
const TYPE_NUMBER: Record<MetricType, number> = { counter: 0, gauge: 1, summary: 2, untyped: 3, histogram: 4 };

/** Go's `math.NaN()` (0x7FF8000000000001, little-endian): client_golang's NaN, where V8 writes 0x7FF8000000000000. */
const GO_NAN = new Uint8Array([1, 0, 0, 0, 0, 0, 0xf8, 0x7f]);

/** A double field; NaN with Go's bits, so a NaN sample is the same bytes as a Go manager's. */
function double(w: BinaryWriter, field: number, v: number): void {
  w.tag(field, WireType.Bit64);
  if (v === v) w.double(v);
  else w.raw(GO_NAN);
}

/** A count as the uint64 it is written as: an integer in [0, 2^53) (NaN and negatives, which no count is, as 0). */
function countOf(n: number): number {
  return n >= 0 ? Math.min(Math.trunc(n), Number.MAX_SAFE_INTEGER) : 0;
}

/** A {@link countOf} value as a uint64 varint (values beyond 2^32 take the 64-bit path). */
function uvarint(w: BinaryWriter, n: number): void {
  if (n <= 0xffffffff) w.uint32(n);
  else w.uint64(BigInt(n));
}

/** `google.protobuf.Timestamp` (proto3: zero fields are left out) of a Unix ms time, as field `field`. */
function timestamp(w: BinaryWriter, field: number, ms: number): void {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  w.tag(field, WireType.LengthDelimited).fork();
  // int64 and uint32 varints are the same bytes for 0 ≤ v < 2^32 (until 2106), and uint32 skips the 64-bit path
  if (seconds !== 0) w.tag(1, WireType.Varint)[seconds > 0 && seconds <= 0xffffffff ? 'uint32' : 'int64'](seconds);
  if (nanos !== 0) w.tag(2, WireType.Varint).int32(nanos);
  w.join();
}

/** An `Exemplar` message as field `field`: its label pairs, value and timestamp. */
function exemplarField(w: BinaryWriter, field: number, e: Exemplar): void {
  w.tag(field, WireType.LengthDelimited).fork();
  for (const [k, v] of e.labels) {
    w.tag(1, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(k);
    w.tag(2, WireType.LengthDelimited).string(v);
    w.join();
  }
  double(w, 2, e.value);
  timestamp(w, 3, e.timestampMs);
  w.join();
}

/** Bytes of a varint holding `n` (0 ≤ n < 2^53). */
function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Per bucket bound, `upper_bound` as written (its tag and the double), the same for every series of a family. */
const boundBytesCache = new WeakMap<ArrayLike<number>, Uint8Array[]>();

function boundBytes(bounds: ArrayLike<number>): Uint8Array[] {
  let out = boundBytesCache.get(bounds);
  if (!out) {
    out = [];
    for (let b = 0; b < bounds.length; b++) {
      const w = new BinaryWriter();
      double(w, 2, bounds[b]);
      out.push(w.finish());
    }
    boundBytesCache.set(bounds, out);
  }
  return out;
}

/** `upper_bound` = +Inf as written. */
const INF_BOUND = (() => {
  const w = new BinaryWriter();
  double(w, 2, Infinity);
  return w.finish();
})();

/** A `Bucket` (field 3 of `Histogram`) with an exemplar: cumulative count, upper bound (its bytes), exemplar. */
function bucketWithExemplar(w: BinaryWriter, count: number, bound: Uint8Array, e: Exemplar): void {
  w.tag(3, WireType.LengthDelimited).fork();
  w.tag(1, WireType.Varint);
  uvarint(w, count);
  w.raw(bound);
  exemplarField(w, 3, e);
  w.join();
}

/** Writers kept between renders, so a render does not grow a buffer from empty (concurrent renders take one each). */
const idleWriters: BinaryWriter[] = [];

/** `BucketSpan`s and their deltas as fields `spanField` and `spanField + 1`. */
function spansFields(
  w: BinaryWriter,
  spanField: number,
  spans: readonly BucketSpan[],
  deltas: readonly number[],
): void {
  for (const s of spans) {
    w.tag(spanField, WireType.LengthDelimited).fork();
    w.tag(1, WireType.Varint).sint32(s.offset);
    w.tag(2, WireType.Varint).uint32(s.length);
    w.join();
  }
  for (const d of deltas) w.tag(spanField + 1, WireType.Varint).sint64(d);
}

/**
 * The native part of a `Histogram` message (fields 5–13), as client_golang writes it: schema, zero threshold and
 * zero count always, then negative and positive spans and deltas; with a zero threshold of 0, no observation in
 * the zero bucket and no bucket at all, a no-op positive span `{0, 0}` keeps it recognisable as native.
 */
function nativeFields(w: BinaryWriter, n: ProtoNativeBuckets): void {
  w.tag(5, WireType.Varint).sint32(n.schema);
  double(w, 6, n.zeroThreshold);
  w.tag(7, WireType.Varint);
  uvarint(w, countOf(n.zeroCount));
  const neg = spansAndDeltas(n.negative);
  const pos = spansAndDeltas(n.positive);
  spansFields(w, 9, neg.spans, neg.deltas);
  if (n.zeroThreshold === 0 && n.zeroCount === 0 && pos.spans.length === 0 && neg.spans.length === 0)
    pos.spans.push({ offset: 0, length: 0 });
  spansFields(w, 12, pos.spans, pos.deltas);
}

/** Writes each series as a `Metric` (field 4 of the open `MetricFamily`) on one writer. */
class MetricEncoder implements ProtoSink {
  private readonly pairs = new BinaryWriter();

  constructor(private readonly w: BinaryWriter) {}

  /** The series' `LabelPair`s (field 1 of `Metric`), encoded on first use and kept in `labels.pb`. */
  private labels(names: ProtoLabelNames, labels: ProtoLabels): Uint8Array {
    let pb = labels.pb;
    if (pb) return pb;
    const p = this.pairs;
    const { order } = names;
    for (let i = 0; i < names.names.length; i++) {
      p.tag(1, WireType.LengthDelimited).fork();
      p.tag(1, WireType.LengthDelimited).string(names.names[i]);
      p.tag(2, WireType.LengthDelimited).string(labels.values[order ? order[i] : i]);
      p.join();
    }
    pb = p.finish();
    labels.pb = pb;
    return pb;
  }

  private open(names: ProtoLabelNames, labels: ProtoLabels): BinaryWriter {
    const w = this.w;
    w.tag(4, WireType.LengthDelimited).fork();
    if (names.names.length) w.raw(this.labels(names, labels));
    return w;
  }

  private scalar(field: number, names: ProtoLabelNames, labels: ProtoLabels, value: number): void {
    const w = this.open(names, labels);
    w.tag(field, WireType.LengthDelimited).fork();
    double(w, 1, value);
    w.join();
    w.join();
  }

  counter(names: ProtoLabelNames, labels: ProtoLabels, value: number, createdMs: number, exemplar?: Exemplar): void {
    const w = this.open(names, labels);
    w.tag(3, WireType.LengthDelimited).fork();
    double(w, 1, value);
    if (exemplar) exemplarField(w, 2, exemplar);
    if (createdMs) timestamp(w, 3, createdMs);
    w.join();
    w.join();
  }

  gauge(names: ProtoLabelNames, labels: ProtoLabels, value: number): void {
    this.scalar(2, names, labels, value);
  }

  untyped(names: ProtoLabelNames, labels: ProtoLabels, value: number): void {
    this.scalar(5, names, labels, value);
  }

  histogram(
    names: ProtoLabelNames,
    labels: ProtoLabels,
    bounds: ArrayLike<number>,
    counts: ArrayLike<number>,
    cumulative: boolean,
    sum: number,
    count: number,
    createdMs: number,
    native?: ProtoNativeBuckets,
    exemplars?: ArrayLike<Exemplar | undefined>,
  ): void {
    const w = this.open(names, labels);
    w.tag(7, WireType.LengthDelimited).fork();
    w.tag(1, WireType.Varint);
    uvarint(w, countOf(count));
    double(w, 2, sum);
    const bb = boundBytes(bounds);
    let cum = 0;
    for (let b = 0; b < bounds.length; b++) {
      cum = cumulative ? counts[b] : cum + counts[b];
      // Bucket {cumulative_count = 1, upper_bound = 2}: at most 1+8+9 bytes, so its length is one byte
      const c = countOf(cum);
      const bound = bb[b];
      const e = exemplars?.[b];
      if (e === undefined) {
        w.uint32(0x1a)
          .uint32(1 + varintSize(c) + bound.length)
          .uint32(0x08);
        uvarint(w, c);
        w.raw(bound);
      } else bucketWithExemplar(w, c, bound, e);
    }
    // the +Inf bucket is written only to carry its exemplar (its count is the sample count)
    const inf = exemplars?.[bounds.length];
    if (inf !== undefined) bucketWithExemplar(w, countOf(count), INF_BOUND, inf);
    if (native) nativeFields(w, native);
    if (createdMs) timestamp(w, 15, createdMs);
    w.join();
    w.join();
  }

  summary(
    names: ProtoLabelNames,
    labels: ProtoLabels,
    quantiles: ArrayLike<number>,
    values: ArrayLike<number>,
    sum: number,
    count: number,
    createdMs: number,
  ): void {
    const w = this.open(names, labels);
    w.tag(4, WireType.LengthDelimited).fork();
    w.tag(1, WireType.Varint);
    uvarint(w, countOf(count));
    double(w, 2, sum);
    for (let i = 0; i < quantiles.length; i++) {
      w.tag(3, WireType.LengthDelimited).fork();
      double(w, 1, quantiles[i]);
      double(w, 2, values[i]);
      w.join();
    }
    if (createdMs) timestamp(w, 4, createdMs);
    w.join();
    w.join();
  }
}

const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The families (sorted, as the text formats) as delimited `MetricFamily` messages, in Buffers of about
 * `sliceLines` lines with a turn of the event loop between slices. A message's length comes before it, so a
 * family larger than a slice is held until it is whole (the loop still turns between its slices).
 */
export async function* protobufChunks(
  families: readonly FamilyView[],
  sliceLines: number,
  escaping: EscapingScheme = 'underscores',
): AsyncGenerator<Buffer> {
  for (const f of families) {
    if (typeof f.encode !== 'function')
      throw new TypeError(
        `metric family ${f.name}: its collector's FamilyView has no encode(), which the protobuf format needs`,
      );
  }
  const w = idleWriters.pop() ?? new BinaryWriter();
  try {
    yield* encodeFamilies(w, families, sliceLines, escaping);
  } finally {
    w.finish();
    if (idleWriters.length < 2) idleWriters.push(w);
  }
}

async function* encodeFamilies(
  w: BinaryWriter,
  families: readonly FamilyView[],
  sliceLines: number,
  escaping: EscapingScheme,
): AsyncGenerator<Buffer> {
  const out = new MetricEncoder(w);
  let lines = 0;
  for (const f of families) {
    if (f.units === 0) continue;
    w.fork();
    w.tag(1, WireType.LengthDelimited).string(sentName(f.name, escaping));
    w.tag(2, WireType.LengthDelimited).string(f.help);
    w.tag(3, WireType.Varint).uint32(TYPE_NUMBER[f.type]);
    const per = Math.max(1, f.linesPerUnit);
    let i = 0;
    while (i < f.units) {
      const room = Math.max(1, Math.ceil((sliceLines - lines) / per));
      const to = Math.min(f.units, i + room);
      f.encode(out, i, to, escaping);
      lines += (to - i) * per;
      i = to;
      if (lines >= sliceLines && i < f.units) {
        lines = 0;
        await yieldToLoop();
      }
    }
    w.join();
    if (lines >= sliceLines) {
      yield bufferOf(w.finish());
      lines = 0;
      await yieldToLoop();
    }
  }
  const rest = w.finish();
  if (rest.length) yield bufferOf(rest);
}

function bufferOf(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** Reading a V8 heap snapshot (`.heapsnapshot` JSON) into the live heap by kind, for the memory benches. */

/** Live bytes and object count of one kind: a constructor's name for objects, else V8's node type. */
export interface HeapKind {
  kind: string;
  count: number;
  bytes: number;
}

/** A snapshot summed by kind; the snapshot's own GC ran first, so this is the live heap. */
export interface HeapSummary {
  totalMb: number;
  nodes: number;
  kinds: Map<string, HeapKind>;
}

interface RawSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Sums a snapshot's nodes by kind (strings of every representation count as one kind). */
export function summarizeHeapSnapshot(json: string | Buffer): HeapSummary {
  const snap = JSON.parse(typeof json === 'string' ? json : json.toString('utf8')) as RawSnapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const kinds = new Map<string, HeapKind>();
  let total = 0;
  let nodes = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + iType]];
    const size = snap.nodes[i + iSize];
    const kind = type.includes('string')
      ? 'strings (incl. module sources)'
      : type === 'code'
        ? 'code (bytecode, compiled)'
        : type === 'object'
          ? `object ${snap.strings[snap.nodes[i + iName]]}`
          : type;
    let k = kinds.get(kind);
    if (!k) kinds.set(kind, (k = { kind, count: 0, bytes: 0 }));
    k.count++;
    k.bytes += size;
    total += size;
    nodes++;
  }
  return { totalMb: total / 1048576, nodes, kinds };
}

/** The kinds whose live bytes changed most from `a` to `b`, largest growth first. */
export function heapGrowth(
  a: HeapSummary,
  b: HeapSummary,
  limit: number,
): Array<{ kind: string; dCount: number; dBytes: number; bytes: number }> {
  const names = new Set([...a.kinds.keys(), ...b.kinds.keys()]);
  const rows = [...names].map((kind) => {
    const x = a.kinds.get(kind);
    const y = b.kinds.get(kind);
    return {
      kind,
      dCount: (y?.count ?? 0) - (x?.count ?? 0),
      dBytes: (y?.bytes ?? 0) - (x?.bytes ?? 0),
      bytes: y?.bytes ?? 0,
    };
  });
  return rows.sort((p, q) => q.dBytes - p.dBytes).slice(0, limit);
}

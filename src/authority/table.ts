/**
 * `meta.k8s.io/v1 Table` output (what `kubectl get` asks for): NAME and AGE, plus a CRD's additional printer columns.
 */
import type { KubeObject, ResourceType } from './resources.js';

/** kube's `duration.HumanDuration` (as in the AGE column). */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** True when the Accept header asks for a Table. */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept.split(',')[0] ?? '');
}

function jsonPathValue(obj: KubeObject, path: string): unknown {
  let cur: unknown = obj;
  for (const p of path.replace(/^\./, '').split('.')) {
    if (!p) continue;
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function partialMetadata(o: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata };
}

/** Converts objects to a Table; `includeObject` is the query parameter (`None`, `Metadata` (default), `Object`). */
export function toTable(t: ResourceType, objects: KubeObject[], opts: { includeObject?: string | null; resourceVersion?: string; now?: number }): KubeObject {
  const now = opts.now ?? Date.now();
  const extra = (t.printerColumns ?? []).filter((c) => c.jsonPath !== '.metadata.creationTimestamp');
  const columnDefinitions = [
    { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
    ...extra.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
    { name: 'Age', type: 'string', format: '', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.', priority: 0 },
  ];
  const rows = objects.map((o) => {
    const created = Date.parse(String(o.metadata?.creationTimestamp ?? ''));
    const cells: unknown[] = [o.metadata?.name, ...extra.map((c) => {
      const v = jsonPathValue(o, c.jsonPath);
      if (c.type === 'date' && typeof v === 'string') return humanDuration(now - Date.parse(v));
      return v ?? null;
    }), Number.isNaN(created) ? '<unknown>' : humanDuration(now - created)];
    const row: KubeObject = { cells };
    if (opts.includeObject !== 'None') row.object = opts.includeObject === 'Object' ? o : partialMetadata(o);
    return row;
  });
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: opts.resourceVersion ?? '' }, columnDefinitions, rows };
}

/**
 * Label selectors (`a=b,c!=d,e in (x,y),f notin (z),g,!h`) and the field selectors kube supports on every type.
 */
import { badRequest } from './status.js';
import type { KubeObject } from './types.js';

type Pred = (labels: Record<string, string>) => boolean;

/** Parses a label selector string into a predicate; throws 400 on a malformed selector. */
export function parseLabelSelector(sel: string | null | undefined): (obj: KubeObject) => boolean {
  if (!sel || !sel.trim()) return () => true;
  const preds: Pred[] = [];
  for (const term of splitTerms(sel)) {
    const t = term.trim();
    if (!t) continue;
    let m: RegExpExecArray | null;
    if ((m = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(t))) {
      const key = m[1];
      const vals = new Set(m[3].split(',').map((v) => v.trim()));
      preds.push(m[2] === 'in' ? (l) => key in l && vals.has(l[key]) : (l) => !(key in l) || !vals.has(l[key]));
    } else if ((m = /^([^\s!=]+)\s*!=\s*([^\s!=]*)$/.exec(t))) {
      const [, key, val] = m as unknown as [string, string, string];
      preds.push((l) => l[key] !== val);
    } else if ((m = /^([^\s!=]+)\s*==?\s*([^\s!=]*)$/.exec(t))) {
      const [, key, val] = m as unknown as [string, string, string];
      preds.push((l) => key in l && l[key] === val);
    } else if ((m = /^!\s*([^\s!=]+)$/.exec(t))) {
      const key = m[1];
      preds.push((l) => !(key in l));
    } else if ((m = /^([^\s!=()]+)$/.exec(t))) {
      const key = m[1];
      preds.push((l) => key in l);
    } else {
      throw badRequest(`unable to parse requirement: ${JSON.stringify(t)}: invalid label selector`);
    }
  }
  return (obj) => {
    const labels = obj.metadata?.labels ?? {};
    return preds.every((p) => p(labels));
  };
}

function splitTerms(sel: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of sel) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function fieldValue(obj: KubeObject, path: string): string | undefined {
  let cur: unknown = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur === undefined || cur === null ? undefined : String(cur);
}

const SUPPORTED_FIELDS: Record<string, string[]> = {
  secrets: ['type'],
  events: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'type',
  ],
  '': ['metadata.name', 'metadata.namespace'],
};

/** Parses a field selector (`metadata.name=x,metadata.namespace!=y`) for a resource. */
export function parseFieldSelector(sel: string | null | undefined, resource: string): (obj: KubeObject) => boolean {
  if (!sel || !sel.trim()) return () => true;
  const allowed = new Set([...SUPPORTED_FIELDS[''], ...(SUPPORTED_FIELDS[resource] ?? [])]);
  const preds: Array<(o: KubeObject) => boolean> = [];
  for (const term of sel.split(',')) {
    const m = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${sel}'; can't understand '${term}'`);
    const [, field, op, value] = m as unknown as [string, string, string, string];
    if (!allowed.has(field))
      throw badRequest(`"${field}" is not a known field selector: only "${[...allowed].join('", "')}"`);
    preds.push(
      op === '!=' ? (o) => (fieldValue(o, field) ?? '') !== value : (o) => (fieldValue(o, field) ?? '') === value,
    );
  }
  return (obj) => preds.every((p) => p(obj));
}

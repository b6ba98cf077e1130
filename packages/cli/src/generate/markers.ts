/**
 * kubebuilder's markers in `//` comments (`// +kubebuilder:validation:Minimum=1`): the known names with the shape
 * of their values, and a parser of controller-gen's value syntax (quoted or bare strings, numbers, booleans,
 * `a;b` and `{a,b}` lists, `{k: v}` maps, `name=value,…` arguments). Unlike controller-gen, an unknown marker or a
 * malformed value is an error naming the file and line.
 */
import { CtrlmetricsError } from 'ctrlmetrics/internal';

/** Where a marker was written. */
export interface MarkerSite {
  file: string;
  line: number;
}

/** One parsed marker: its registered name and its value (arguments as a map for argument markers). */
export interface Marker extends MarkerSite {
  name: string;
  value: unknown;
  /** The comment text as written (after `//`), for messages. */
  text: string;
}

/** A marker that cannot be used, with where it was written. */
export class MarkerError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_MARKER';
  override name = 'MarkerError';
  constructor(site: MarkerSite, message: string) {
    super(`${site.file}:${site.line}: ${message}`);
  }
}

type Shape =
  | 'flag'
  | 'bool'
  | 'int'
  | 'number'
  | 'string'
  | 'strings'
  | 'any'
  | 'json'
  | { args: Record<string, ArgShape>; required?: string[] };
type ArgShape = 'bool' | 'int' | 'string' | 'strings';

/** The markers understood, by name, with the shape of their value. */
const MARKERS: Record<string, Shape> = {
  // package (file) level
  groupName: 'string',
  versionName: 'string',
  'kubebuilder:skip': 'flag',
  'kubebuilder:object:generate': 'bool',
  'kubebuilder:object:root': 'bool',
  'kubebuilder:rbac': {
    args: {
      groups: 'strings',
      resources: 'strings',
      resourceNames: 'strings',
      verbs: 'strings',
      urls: 'strings',
      namespace: 'string',
      roleName: 'string',
    },
    required: ['verbs'],
  },
  'kubebuilder:webhook': {
    args: {
      path: 'string',
      url: 'string',
      mutating: 'bool',
      failurePolicy: 'string',
      matchPolicy: 'string',
      sideEffects: 'string',
      timeoutSeconds: 'int',
      groups: 'strings',
      resources: 'strings',
      verbs: 'strings',
      versions: 'strings',
      name: 'string',
      admissionReviewVersions: 'strings',
      reinvocationPolicy: 'string',
      serviceName: 'string',
      serviceNamespace: 'string',
      servicePort: 'int',
      webhookVersions: 'strings',
    },
    required: ['mutating', 'groups', 'resources', 'verbs', 'versions', 'name', 'admissionReviewVersions'],
  },
  // validation, on fields and types
  'kubebuilder:validation:Minimum': 'number',
  'kubebuilder:validation:Maximum': 'number',
  'kubebuilder:validation:ExclusiveMinimum': 'bool',
  'kubebuilder:validation:ExclusiveMaximum': 'bool',
  'kubebuilder:validation:MultipleOf': 'number',
  'kubebuilder:validation:MinLength': 'int',
  'kubebuilder:validation:MaxLength': 'int',
  'kubebuilder:validation:Pattern': 'string',
  'kubebuilder:validation:MinItems': 'int',
  'kubebuilder:validation:MaxItems': 'int',
  'kubebuilder:validation:UniqueItems': 'bool',
  'kubebuilder:validation:MinProperties': 'int',
  'kubebuilder:validation:MaxProperties': 'int',
  'kubebuilder:validation:Enum': 'any',
  'kubebuilder:validation:Format': 'string',
  'kubebuilder:validation:Type': 'string',
  'kubebuilder:validation:Required': 'flag',
  'kubebuilder:validation:Optional': 'flag',
  'kubebuilder:validation:XPreserveUnknownFields': 'flag',
  'kubebuilder:pruning:PreserveUnknownFields': 'flag',
  'kubebuilder:validation:XEmbeddedResource': 'flag',
  'kubebuilder:validation:EmbeddedResource': 'flag',
  'kubebuilder:validation:XIntOrString': 'flag',
  'kubebuilder:validation:Schemaless': 'flag',
  'kubebuilder:validation:XValidation': {
    args: {
      rule: 'string',
      message: 'string',
      messageExpression: 'string',
      reason: 'string',
      fieldPath: 'string',
      optionalOldSelf: 'bool',
    },
    required: ['rule'],
  },
  'kubebuilder:default': 'any',
  default: 'json',
  'kubebuilder:example': 'any',
  'kubebuilder:title': 'string',
  optional: 'flag',
  required: 'flag',
  nullable: 'flag',
  listType: 'string',
  listMapKey: 'string',
  mapType: 'string',
  structType: 'string',
  // CRD level, on the kind
  'kubebuilder:resource': {
    args: { path: 'string', shortName: 'strings', categories: 'strings', singular: 'string', scope: 'string' },
  },
  'kubebuilder:subresource:status': 'flag',
  'kubebuilder:subresource:scale': {
    args: { specpath: 'string', statuspath: 'string', selectorpath: 'string' },
    required: ['specpath', 'statuspath'],
  },
  'kubebuilder:printcolumn': {
    args: {
      name: 'string',
      type: 'string',
      JSONPath: 'string',
      description: 'string',
      format: 'string',
      priority: 'int',
    },
    required: ['name', 'type', 'JSONPath'],
  },
  'kubebuilder:storageversion': 'flag',
};

/** Markers a `kubebuilder:validation:items:<Name>` form exists for (applied to an array's items). */
const ITEM_FORMS = [
  'Minimum',
  'Maximum',
  'ExclusiveMinimum',
  'ExclusiveMaximum',
  'MultipleOf',
  'MinLength',
  'MaxLength',
  'Pattern',
  'MinItems',
  'MaxItems',
  'UniqueItems',
  'MinProperties',
  'MaxProperties',
  'Enum',
  'Format',
  'Type',
  'XPreserveUnknownFields',
  'XEmbeddedResource',
  'XIntOrString',
  'XValidation',
];
for (const f of ITEM_FORMS) MARKERS[`kubebuilder:validation:items:${f}`] = MARKERS[`kubebuilder:validation:${f}`]!;

const NAMES = Object.keys(MARKERS).sort((a, b) => b.length - a.length);

/** Whether a comment line is a marker (`+` then a letter, as controller-gen reads them). */
export function isMarkerLine(text: string): boolean {
  return /^\s*\+[A-Za-z]/.test(text);
}

/** Parses one marker comment (the text after `//`). */
export function parseMarker(text: string, site: MarkerSite): Marker {
  const body = text.trim().slice(1);
  // where scaffolding commands insert lines (src/main.ts): read by them, not by the generators
  const scaffold = /^(ctrlmetrics|kubebuilder):scaffold:([A-Za-z0-9-]+)$/.exec(body);
  if (scaffold) return { name: 'scaffold', value: scaffold[2], text: text.trim(), ...site };
  const name = NAMES.find((n) => body === n || body.startsWith(`${n}=`) || body.startsWith(`${n}:`));
  if (!name) throw new MarkerError(site, `unknown marker ${JSON.stringify(`+${body.split('=')[0]}`)}`);
  const shape = MARKERS[name];
  let rest = body.slice(name.length);
  const fail = (why: string) => new MarkerError(site, `marker +${name}: ${why}`);
  if (typeof shape === 'object') {
    if (rest.startsWith(':')) rest = rest.slice(1);
    else if (rest.startsWith('=')) throw fail('expected arguments (name=value,…)');
    const args = parseArgs(rest, fail);
    const out: Record<string, unknown> = {};
    for (const [k, raw] of args) {
      const argShape = shape.args[k];
      if (!argShape) throw fail(`unknown argument ${JSON.stringify(k)}`);
      if (k in out) throw fail(`argument ${JSON.stringify(k)} given twice`);
      out[k] = coerce(argShape, raw, fail, k);
    }
    for (const r of shape.required ?? []) if (!(r in out)) throw fail(`missing argument ${JSON.stringify(r)}`);
    return { name, value: out, text: text.trim(), ...site };
  }
  if (shape === 'flag') {
    if (rest === '' || rest === '=true') return { name, value: true, text: text.trim(), ...site };
    throw fail(`takes no value, got ${JSON.stringify(rest)}`);
  }
  if (!rest.startsWith('=')) throw fail('needs a value (+name=value)');
  const raw = rest.slice(1);
  if (shape === 'json') {
    try {
      return { name, value: JSON.parse(raw), text: text.trim(), ...site };
    } catch {
      throw fail(`value is not JSON: ${raw}`);
    }
  }
  return { name, value: coerce(shape, raw, fail), text: text.trim(), ...site };
}

/** Splits `a=1,b="x,y",c={p;q}` at top-level commas into name/value pairs. */
function parseArgs(s: string, fail: (why: string) => Error): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let i = 0;
  while (i < s.length) {
    const eq = s.indexOf('=', i);
    if (eq < 0) throw fail(`expected name=value at ${JSON.stringify(s.slice(i))}`);
    const key = s.slice(i, eq).trim();
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(key)) throw fail(`invalid argument name ${JSON.stringify(key)}`);
    const end = valueEnd(s, eq + 1, fail);
    out.push([key, s.slice(eq + 1, end)]);
    i = end;
    if (s[i] === ',') i++;
  }
  return out;
}

/** Index just after a value starting at `i` (quotes and braces balanced; a bare value ends at a comma). */
function valueEnd(s: string, i: number, fail: (why: string) => Error): number {
  let depth = 0;
  let j = i;
  while (j < s.length) {
    const c = s[j];
    if (c === '"' || c === '`') {
      const close = c === '"' ? closingQuote(s, j) : s.indexOf('`', j + 1);
      if (close < 0) throw fail(`unterminated string in ${JSON.stringify(s.slice(i))}`);
      j = close + 1;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) return j;
    j++;
  }
  if (depth !== 0) throw fail(`unbalanced braces in ${JSON.stringify(s.slice(i))}`);
  return j;
}

function closingQuote(s: string, open: number): number {
  for (let k = open + 1; k < s.length; k++) {
    if (s[k] === '\\') k++;
    else if (s[k] === '"') return k;
  }
  return -1;
}

function coerce(
  shape: Exclude<Shape, object | 'flag' | 'json'> | ArgShape,
  raw: string,
  fail: (why: string) => Error,
  arg?: string,
): unknown {
  const what = arg ? `argument ${JSON.stringify(arg)}` : 'value';
  const v = parseValue(raw.trim(), fail);
  switch (shape) {
    case 'bool':
      if (typeof v !== 'boolean') throw fail(`${what} must be true or false, got ${raw}`);
      return v;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw fail(`${what} must be an integer, got ${raw}`);
      return v;
    case 'number':
      if (typeof v !== 'number') throw fail(`${what} must be a number, got ${raw}`);
      return v;
    case 'string':
      if (typeof v === 'string') return v;
      // a bare token that reads as a number or boolean is still the text written (a pattern, a name)
      if (!raw.trim().startsWith('{')) return raw.trim();
      throw fail(`${what} must be a string, got ${raw}`);
    case 'strings':
      if (Array.isArray(v)) return v.map(String);
      return [typeof v === 'string' ? v : raw.trim()];
    default:
      return v;
  }
}

/**
 * A marker value in controller-gen's syntax: `"quoted"` or `` `raw` `` strings, integers and floats, booleans,
 * `{a,b}` or `a;b` lists, `{k: v}` maps, else the bare text. Unlike controller-gen v0.21, a bare token that only
 * starts like a number (`100Mi`) stays a string.
 */
export function parseValue(raw: string, fail: (why: string) => Error): unknown {
  const s = raw.trim();
  if (s === '') return '';
  if (s.startsWith('"')) {
    if (closingQuote(s, 0) !== s.length - 1) throw fail(`malformed string ${s}`);
    try {
      return JSON.parse(s);
    } catch {
      throw fail(`malformed string ${s}`);
    }
  }
  if (s.startsWith('`')) {
    if (!s.endsWith('`') || s.length < 2) throw fail(`malformed string ${s}`);
    return s.slice(1, -1);
  }
  if (s === 'true') return true;
  if (s === 'false') return false;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/.test(s)) return Number(s);
  if (s.startsWith('{')) {
    if (!s.endsWith('}')) throw fail(`unbalanced braces in ${s}`);
    const inner = s.slice(1, -1).trim();
    if (inner === '') return {};
    const parts = splitTop(inner, ',', fail);
    const isMap = parts.every((p) => /^\s*("[^"]*"|[A-Za-z0-9_.-]+)\s*:/.test(p) && !/^\s*"[^"]*"\s*$/.test(p));
    if (isMap) {
      const out: Record<string, unknown> = {};
      for (const part of parts) {
        const p = part.trim();
        const colon = p.startsWith('"') ? p.indexOf(':', closingQuote(p, 0)) : p.indexOf(':');
        const k = p.slice(0, colon).trim();
        out[k.startsWith('"') ? (JSON.parse(k) as string) : k] = parseValue(p.slice(colon + 1), fail);
      }
      return out;
    }
    return parts.map((p) => parseValue(p, fail));
  }
  if (s.includes(';')) return splitTop(s, ';', fail).map((p) => parseValue(p, fail));
  return s;
}

function splitTop(s: string, sep: string, fail: (why: string) => Error): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let j = 0; j < s.length; j++) {
    const c = s[j];
    if (c === '"') {
      const close = closingQuote(s, j);
      if (close < 0) throw fail(`unterminated string in ${s}`);
      j = close;
    } else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === sep && depth === 0) {
      out.push(s.slice(start, j));
      start = j + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

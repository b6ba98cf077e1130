/**
 * An independent, strict parser of the OpenMetrics 1.0.0 text format for tests (it shares no code with
 * src/metrics). It enforces the rules a scraper relies on and throws with the offending line otherwise:
 * `# EOF` last and only once; no blank lines; families contiguous with their metadata first; sample names that
 * fit the family type (counter `_total`, histogram `_bucket`/`_sum`/`_count`); valid escapes; canonical `le`;
 * histogram buckets increasing, cumulative and ending in `+Inf` equal to `_count`; non-negative counters.
 */

export interface OmSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface OmFamily {
  name: string;
  type: string;
  help: string;
  samples: OmSample[];
}

const TYPES = new Set(['counter', 'gauge', 'histogram', 'gaugehistogram', 'stateset', 'info', 'summary', 'unknown']);
const SUFFIXES: Record<string, string[]> = {
  counter: ['_total', '_created'],
  gauge: [''],
  unknown: [''],
  histogram: ['_bucket', '_count', '_sum', '_created'],
  gaugehistogram: ['_bucket', '_gcount', '_gsum'],
  summary: ['', '_count', '_sum', '_created'],
  info: ['_info'],
  stateset: [''],
};

function parseNumber(s: string, line: string): number {
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s))
    throw new Error(`bad number ${JSON.stringify(s)} in ${JSON.stringify(line)}`);
  return Number(s);
}

function unescape(s: string, line: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '\\') {
      out += s[i];
      continue;
    }
    const c = s[++i];
    if (c === 'n') out += '\n';
    else if (c === '\\') out += '\\';
    else if (c === '"') out += '"';
    else throw new Error(`bad escape \\${c ?? ''} in ${JSON.stringify(line)}`);
  }
  return out;
}

function parseSample(line: string): OmSample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (!m) throw new Error(`bad sample line ${JSON.stringify(line)}`);
  const name = m[1];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    let first = true;
    while (line[i] !== '}') {
      if (!first) {
        if (line[i] !== ',') throw new Error(`expected , in ${JSON.stringify(line)}`);
        i++;
      }
      first = false;
      const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
      if (!lm) throw new Error(`bad label at ${i} in ${JSON.stringify(line)}`);
      i += lm[0].length;
      let raw = '';
      while (line[i] !== '"') {
        if (i >= line.length) throw new Error(`unterminated label value in ${JSON.stringify(line)}`);
        if (line[i] === '\\') raw += line[i++];
        raw += line[i++];
      }
      i++;
      if (lm[1] in labels) throw new Error(`duplicate label ${lm[1]} in ${JSON.stringify(line)}`);
      labels[lm[1]] = unescape(raw, line);
    }
    i++;
    if (first) throw new Error(`empty label set {} in ${JSON.stringify(line)}`);
  }
  if (line[i] !== ' ') throw new Error(`expected one space before the value in ${JSON.stringify(line)}`);
  const rest = line.slice(i + 1).split(' ');
  if (rest.length < 1 || rest.length > 2 || rest.some((p) => p === ''))
    throw new Error(`bad value part in ${JSON.stringify(line)}`);
  return { name, labels, value: parseNumber(rest[0], line) };
}

function checkHistograms(f: OmFamily): void {
  const groups = new Map<string, { les: number[]; counts: number[]; count?: number }>();
  const keyOf = (labels: Record<string, string>) =>
    JSON.stringify(
      Object.entries(labels)
        .filter(([k]) => k !== 'le')
        .sort(),
    );
  for (const s of f.samples) {
    const g = groups.get(keyOf(s.labels)) ?? { les: [], counts: [] };
    groups.set(keyOf(s.labels), g);
    if (s.name === f.name + '_bucket') {
      const le = s.labels['le'];
      if (le === undefined) throw new Error(`${s.name} without le`);
      if (le !== '+Inf' && !/^-?\d+\.\d+(e[-+]\d+)?$|^-?\d(\.\d+)?e[-+]\d+$/.test(le))
        throw new Error(`le ${JSON.stringify(le)} of ${f.name} is not a canonical float`);
      g.les.push(parseNumber(le, le));
      g.counts.push(s.value);
    } else if (s.name === f.name + '_count') g.count = s.value;
  }
  for (const [k, g] of groups) {
    if (g.les.length === 0) throw new Error(`histogram ${f.name} ${k} has no buckets`);
    if (g.les[g.les.length - 1] !== Infinity) throw new Error(`histogram ${f.name} ${k} does not end in le="+Inf"`);
    for (let i = 1; i < g.les.length; i++) {
      if (!(g.les[i] > g.les[i - 1])) throw new Error(`histogram ${f.name} ${k}: le not increasing`);
      if (g.counts[i] < g.counts[i - 1]) throw new Error(`histogram ${f.name} ${k}: buckets not cumulative`);
    }
    if (g.count !== undefined && g.count !== g.counts[g.counts.length - 1])
      throw new Error(`histogram ${f.name} ${k}: _count differs from the +Inf bucket`);
  }
}

/** Parses and validates an OpenMetrics exposition; families in order of appearance. */
export function parseOpenMetrics(text: string): Map<string, OmFamily> {
  if (!text.endsWith('# EOF\n') && !text.endsWith('# EOF')) throw new Error('exposition does not end with # EOF');
  const lines = text.replace(/\n$/, '').split('\n');
  const families = new Map<string, OmFamily>();
  let current: OmFamily | undefined;
  let sawSamples = false;
  const closed = new Set<string>();
  const start = (name: string): OmFamily => {
    if (current?.name === name) return current;
    if (current) closed.add(current.name);
    if (closed.has(name) || families.has(name)) throw new Error(`family ${name} is not contiguous`);
    current = { name, type: 'unknown', help: '', samples: [] };
    families.set(name, current);
    sawSamples = false;
    return current;
  };
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    if (line === '# EOF') {
      if (n !== lines.length - 1) throw new Error('# EOF is not the last line');
      break;
    }
    if (line === '') throw new Error(`blank line at ${n + 1}`);
    if (line.startsWith('#')) {
      const m = /^# (TYPE|HELP|UNIT) ([a-zA-Z_:][a-zA-Z0-9_:]*)(?: (.*))?$/.exec(line);
      if (!m) throw new Error(`bad comment line ${JSON.stringify(line)}`);
      const f = start(m[2]);
      if (sawSamples) throw new Error(`metadata after samples of ${f.name}`);
      if (m[1] === 'TYPE') {
        if (!TYPES.has(m[3] ?? '')) throw new Error(`bad type in ${JSON.stringify(line)}`);
        f.type = m[3]!;
        if (f.type === 'counter' && f.name.endsWith('_total'))
          throw new Error(`counter family ${f.name} must not end in _total`);
      } else if (m[1] === 'HELP') f.help = unescape(m[3] ?? '', line);
      continue;
    }
    const s = parseSample(line);
    if (!current || !SUFFIXES[current.type].some((suf) => s.name === current!.name + suf)) {
      throw new Error(`sample ${s.name} does not belong to family ${current?.name} of type ${current?.type}`);
    }
    if (current.type === 'counter' && !(s.value >= 0))
      throw new Error(`negative or NaN counter in ${JSON.stringify(line)}`);
    sawSamples = true;
    current.samples.push(s);
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistograms(f);
  return families;
}

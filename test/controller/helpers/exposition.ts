/**
 * An independent parser of the Prometheus text exposition format 0.0.4 for tests (it shares no code with
 * src/metrics), plus `promtool check metrics` and an HTTPS scrape helper.
 */
import { spawn } from 'node:child_process';
import https from 'node:https';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

function unescapeHelp(s: string): string {
  return s.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
}

function parseValue(s: string): number {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  const n = Number(s);
  if (Number.isNaN(n)) throw new Error(`bad sample value ${JSON.stringify(s)}`);
  return n;
}

/** Parses one sample line. */
export function parseSampleLine(line: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (!m) throw new Error(`bad sample line ${JSON.stringify(line)}`);
  const name = m[1];
  let i = name.length;
  const labels: Record<string, string> = {};
  if (line[i] === '{') {
    i++;
    for (;;) {
      while (line[i] === ' ') i++;
      if (line[i] === '}') {
        i++;
        break;
      }
      const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
      if (!lm) throw new Error(`bad label at ${i} in ${JSON.stringify(line)}`);
      i += lm[0].length;
      let v = '';
      while (line[i] !== '"') {
        if (i >= line.length) throw new Error(`unterminated label value in ${JSON.stringify(line)}`);
        if (line[i] === '\\') {
          const c = line[i + 1];
          v += c === 'n' ? '\n' : c === '"' ? '"' : c === '\\' ? '\\' : '\\' + c;
          i += 2;
        } else v += line[i++];
      }
      i++;
      if (lm[1] in labels) throw new Error(`duplicate label ${lm[1]} in ${JSON.stringify(line)}`);
      labels[lm[1]] = v;
      if (line[i] === ',') i++;
    }
  }
  const rest = line.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 2) throw new Error(`bad sample line ${JSON.stringify(line)}`);
  return { name, labels, value: parseValue(rest[0]) };
}

/** Parses a text exposition into families keyed by name. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: 'untyped', help: '', samples: [] };
      families.set(name, f);
    }
    return f;
  };
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (!line) continue;
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) continue;
      const f = family(m[2]);
      if (m[1] === 'HELP') f.help = unescapeHelp(m[3] ?? '');
      else f.type = (m[3] ?? '').trim();
      current = f;
      continue;
    }
    const s = parseSampleLine(line);
    // samples of histograms/summaries carry suffixes
    let owner = current;
    if (!owner || !(s.name === owner.name || s.name.startsWith(owner.name + '_'))) owner = family(s.name);
    owner.samples.push(s);
  }
  return families;
}

/** The samples of `family` (optionally of one sample name) whose labels include `match`. */
export function samples(
  families: Map<string, Family>,
  family: string,
  match: Record<string, string> = {},
  sampleName?: string,
): Sample[] {
  const f = families.get(family);
  if (!f) return [];
  return f.samples.filter(
    (s) =>
      (sampleName === undefined || s.name === sampleName) && Object.entries(match).every(([k, v]) => s.labels[k] === v),
  );
}

/**
 * The single value of a series, or undefined. `name` is a family name or a sample name of one
 * (`x_count`, `x_sum`, `x_bucket` of histogram `x`).
 */
export function value(families: Map<string, Family>, name: string, match: Record<string, string>): number | undefined {
  const family = families.has(name) ? name : name.replace(/_(count|sum|bucket)$/, '');
  const s = samples(families, family, match, name);
  if (s.length > 1) throw new Error(`${name} ${JSON.stringify(match)} matches ${s.length} series`);
  return s[0]?.value;
}

/** Runs `promtool check metrics` on an exposition; resolves { code, output }. */
export function promtoolCheck(text: string, timeoutMs = 20_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const t = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error('promtool timed out'));
    }, timeoutMs);
    p.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, output: out });
    });
    p.stdin.on('error', () => {}); // an early exit closes the pipe: the exit status tells
    p.stdin.end(text);
  });
}

/** GETs a URL over HTTPS (self-signed accepted) with an optional bearer token. */
export function httpsGet(
  url: string,
  token?: string,
  timeoutMs = 10_000,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      url,
      {
        rejectUnauthorized: false,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        timeout: timeoutMs,
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
  });
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export async function eventually<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 15_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
      );
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

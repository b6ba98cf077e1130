/**
 * `npm run bench:store [-- flags]`: the embedded authority's store with a state directory, at several object counts.
 * For each count N a state directory holding N ConfigMaps of ~1.2 KB is prepared, then `ctrlmetrics authority`
 * (packages/cli/dist/cli.js of each tree measured; dist/cli.js of a tree from before the workspace split) is
 * started on it and measured:
 *
 * - restart: time from spawn to the `authority ready` line, and RSS right after it;
 * - creates/s with 8 concurrent clients (each answered only once on disk), over `--creates` creates;
 * - the slowest single-object GET (one client, back to back) while those creates run, and while a full LIST of
 *   the N objects is being answered.
 *
 * Repetitions run the trees alternately (old, new, old, new, ...) on fresh copies of the state; medians and ranges
 * are printed. Flags: --sizes=1k,10k,50k · --reps=3 · --creates=2000 · --trees=NAME=DIR,... (default: this
 * checkout as `new`; add e.g. `old=/tmp/ctrlmetrics-old` holding a built earlier commit).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseStatusMemory } from './lib/proc.js';

interface Settings {
  sizes: number[];
  reps: number;
  creates: number;
  trees: Array<{ name: string; dir: string }>;
}

function parseArgs(argv: string[]): Settings {
  const s: Settings = {
    sizes: [1000, 10_000, 50_000],
    reps: 3,
    creates: 2000,
    trees: [{ name: 'new', dir: resolve('.') }],
  };
  for (const a of argv) {
    const m = /^--([a-z]+)=(.*)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    const [, k, v] = m as unknown as [string, string, string];
    if (k === 'sizes') s.sizes = v.split(',').map((x) => Number(x.replace(/k$/, '')) * (x.endsWith('k') ? 1000 : 1));
    else if (k === 'reps') s.reps = Number(v);
    else if (k === 'creates') s.creates = Number(v);
    else if (k === 'trees') {
      s.trees = v.split(',').map((t) => {
        const [name, dir] = t.split('=');
        if (!name || !dir) throw new Error('--trees=NAME=DIR,...');
        return { name, dir: resolve(dir) };
      });
    } else throw new Error(`unknown flag --${k}`);
  }
  if (s.sizes.some((n) => !Number.isInteger(n) || n < 1) || !(s.reps >= 1) || !(s.creates >= 1))
    throw new Error('bad --sizes, --reps or --creates');
  return s;
}

const PAYLOAD = 'x'.repeat(1000);

function configMap(ns: string, name: string, rv: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: ns,
      uid: `00000000-0000-4000-8000-${String(rv).padStart(12, '0')}`,
      resourceVersion: String(rv),
      creationTimestamp: '2026-11-26T00:00:00Z',
    },
    data: { payload: PAYLOAD },
  };
}

/** A state directory with `n` ConfigMaps in namespace `load` (the CA and keys come from a first start). */
async function prepareState(seedDir: string, n: number, out: string): Promise<void> {
  cpSync(seedDir, out, { recursive: true });
  rmSync(join(out, 'authority.pid'), { force: true });
  // the log of the first start (bootstrap objects) is dropped: missing bootstrap objects are made again at start
  for (const f of readdirSync(out)) if (/^state\.\d+\.log$/.test(f)) rmSync(join(out, f));
  const snap = JSON.parse(readFileSync(join(out, 'state.json'), 'utf8')) as {
    resourceVersion: number;
    objects: Record<string, unknown[]>;
  };
  let rv = snap.resourceVersion;
  snap.objects['namespaces'] = [
    ...(snap.objects['namespaces'] ?? []),
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'load',
        uid: '00000000-0000-4000-8000-load00000000',
        resourceVersion: String(++rv),
        creationTimestamp: '2026-11-26T00:00:00Z',
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    },
  ];
  const cms: unknown[] = (snap.objects['configmaps'] ?? []).slice();
  for (let i = 0; i < n; i++) cms.push(configMap('load', `cm-${String(i).padStart(6, '0')}`, ++rv));
  snap.objects['configmaps'] = cms;
  snap.resourceVersion = rv;
  writeFileSync(join(out, 'state.json'), JSON.stringify(snap), { mode: 0o600 });
}

interface Running {
  child: ChildProcess;
  url: string;
  ca: string;
  token: string;
  readyMs: number;
  rssMb: number;
}

/** A tree's built CLI: the CLI package's since the workspace split, the root's before it. */
function cliOf(treeDir: string): string {
  const split = join(treeDir, 'packages/cli/dist/cli.js');
  return existsSync(split) ? split : join(treeDir, 'dist/cli.js');
}

function startAuthority(treeDir: string, stateDir: string): Promise<Running> {
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      cliOf(treeDir),
      'authority',
      '--listen',
      '127.0.0.1:0',
      '--state-dir',
      stateDir,
      '--kubeconfig-out',
      join(stateDir, 'kubeconfig'),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolvePromise, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"msg":"authority ready".*"url":"(https:\/\/[^"]+)"/.exec(out);
      if (!m) return;
      const readyMs = performance.now() - t0;
      child.stdout.off('data', onData);
      child.stderr.off('data', onData);
      const rssMb = parseStatusMemory(readFileSync(`/proc/${child.pid}/status`, 'utf8')).rssKb / 1024;
      resolvePromise({
        child,
        url: m[1],
        ca: readFileSync(join(stateDir, 'ca.crt'), 'utf8'),
        token: readFileSync(join(stateDir, 'admin.token'), 'utf8').trim(),
        readyMs,
        rssMb,
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`authority exited (${code}) before it was ready: ${out.slice(-500)}`)),
    );
  });
}

async function stopAuthority(r: Running): Promise<void> {
  if (r.child.exitCode !== null) return;
  const exited = new Promise((res) => r.child.once('exit', res));
  r.child.kill('SIGTERM');
  await exited;
}

function call(
  r: Running,
  agent: Agent,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; bytes: number }> {
  const u = new URL(path, r.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((res, rej) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        ca: r.ca,
        agent,
        headers: { Authorization: `Bearer ${r.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      },
      (resp) => {
        let bytes = 0;
        resp.on('data', (c: Buffer) => (bytes += c.length));
        resp.on('end', () => res({ status: resp.statusCode ?? 0, bytes }));
        resp.on('error', rej);
      },
    );
    req.on('error', rej);
    req.end(payload);
  });
}

/** Runs single-object GETs back to back until `until` settles; returns the slowest, in ms. */
async function slowestGet(r: Running, until: Promise<unknown>): Promise<{ maxMs: number; count: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let done = false;
  void until.finally(() => (done = true));
  let maxMs = 0;
  let count = 0;
  while (!done) {
    const t = performance.now();
    const g = await call(r, agent, 'GET', '/api/v1/namespaces/load/configmaps/cm-000007');
    if (g.status !== 200) throw new Error(`GET answered ${g.status}`);
    maxMs = Math.max(maxMs, performance.now() - t);
    count++;
  }
  agent.destroy();
  return { maxMs, count };
}

/** Creates `total` ConfigMaps with 8 clients, or with `snapshotOf`, until that state.json is rewritten (at most `total`). */
async function createLoad(r: Running, total: number, tag: string, snapshotOf?: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  let next = 0;
  const t0 = performance.now();
  const mtime = () => statSync(snapshotOf!).mtimeMs;
  const before = snapshotOf ? mtime() : 0;
  const more = () => next < total && (!snapshotOf || mtime() === before);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (more()) {
        const i = next++;
        const c = await call(r, agent, 'POST', '/api/v1/namespaces/load/configmaps', {
          metadata: { name: `new-${tag}-${i}` },
          data: { payload: PAYLOAD },
        });
        if (c.status !== 201) throw new Error(`create answered ${c.status}`);
      }
    }),
  );
  agent.destroy();
  if (snapshotOf && mtime() === before) throw new Error(`no snapshot was written within ${total} creates`);
  return next / ((performance.now() - t0) / 1000);
}

interface Sample {
  readyMs: number;
  rssMb: number;
  createsPerS: number;
  getMaxDuringCreatesMs: number;
  listMs: number;
  listMb: number;
  getMaxDuringListMs: number;
  getMaxDuringSnapshotMs: number;
}

async function measure(tree: string, stateDir: string, n: number, creates: number, tag: string): Promise<Sample> {
  const r = await startAuthority(tree, stateDir);
  try {
    const load = createLoad(r, creates, tag);
    const during = await slowestGet(r, load);
    const createsPerS = await load;
    const agent = new Agent({ keepAlive: false });
    const t = performance.now();
    const list = call(r, agent, 'GET', '/api/v1/namespaces/load/configmaps');
    const duringList = await slowestGet(r, list);
    const l = await list;
    const listMs = performance.now() - t;
    if (l.status !== 200) throw new Error(`LIST answered ${l.status}`);
    // creates until the store writes its whole state (every few ms in the old tree, once the log outgrows the
    // snapshot in the new one), then a little beyond, so that the write itself is covered
    const toSnapshot = createLoad(r, 2 * n + 20_000, `${tag}-snap`, join(stateDir, 'state.json')).then(() =>
      createLoad(r, 300, `${tag}-after`),
    );
    const duringSnapshot = await slowestGet(r, toSnapshot);
    await toSnapshot;
    return {
      readyMs: r.readyMs,
      rssMb: r.rssMb,
      createsPerS,
      getMaxDuringCreatesMs: during.maxMs,
      listMs,
      listMb: l.bytes / 1e6,
      getMaxDuringListMs: duringList.maxMs,
      getMaxDuringSnapshotMs: duringSnapshot.maxMs,
    };
  } finally {
    await stopAuthority(r);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (xs: number[], digits = 0) =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

async function main(): Promise<void> {
  const s = parseArgs(process.argv.slice(2));
  const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-bench-store-'));
  try {
    // a first start of each tree makes the CA, keys and bootstrap objects; its state seeds every run of that tree
    const seeds = new Map<string, string>();
    for (const t of s.trees) {
      const seed = join(work, `seed-${t.name}`);
      mkdirSync(seed);
      await stopAuthority(await startAuthority(t.dir, seed));
      seeds.set(t.name, seed);
    }
    const rows: string[] = [];
    for (const n of s.sizes) {
      const samples = new Map<string, Sample[]>(s.trees.map((t) => [t.name, []]));
      for (let rep = 0; rep < s.reps; rep++) {
        for (const t of s.trees) {
          const dir = join(work, `${t.name}-${n}-${rep}`);
          await prepareState(seeds.get(t.name)!, n, dir);
          const sample = await measure(t.dir, dir, n, s.creates, `${rep}`);
          samples.get(t.name)!.push(sample);
          rmSync(dir, { recursive: true, force: true });
          process.stderr.write(
            `${n} objects, ${t.name}, rep ${rep + 1}: ${JSON.stringify(sample, (_k, v: unknown) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}\n`,
          );
        }
      }
      for (const t of s.trees) {
        const xs = samples.get(t.name)!;
        const col = (f: (x: Sample) => number, d = 0) => fmt(xs.map(f), d);
        rows.push(
          `| ${n.toLocaleString('en')} | ${t.name} | ${col((x) => x.createsPerS)} | ${col((x) => x.getMaxDuringCreatesMs, 1)} | ${col((x) => x.listMs)} (${median(xs.map((x) => x.listMb)).toFixed(0)} MB) | ${col((x) => x.getMaxDuringListMs, 1)} | ${col((x) => x.getMaxDuringSnapshotMs, 1)} | ${col((x) => x.readyMs / 1000, 2)} | ${col((x) => x.rssMb)} |`,
        );
      }
    }
    console.log(`\nnode ${process.version}, ${s.reps} repetitions, ${s.creates} creates per run; medians (min–max)\n`);
    console.log(
      '| objects | tree | creates/s (8 clients, durable acks) | slowest GET during creates, ms | full LIST, ms | slowest GET during the LIST, ms | slowest GET while the whole state is written, ms | restart, s | RSS after restart, MB |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();

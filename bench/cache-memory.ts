/**
 * `npm run bench:cache-memory [-- --objects=10000,50000 --reps=3]`: what a manager's cache holds per object, and
 * what a field index buys — the figures of docs/benchmarks.md, "Cache options".
 *
 * The embedded authority runs in this process, with `--objects` ConfigMaps (8 data keys, 3 labels) written by
 * server-side apply, so each carries the managedFields a real cluster keeps. For each variant a child process (its
 * heap holding nothing else) runs an informer that lists and watches them, as a manager's does, and reports the
 * heap the cache adds, measured after forced GCs, `--reps` times:
 * the plain cache, the cache with `transforms.stripManagedFields`, a metadata-only cache, and both. Then, on the plain
 * cache indexed by owner (10 objects per owner), the time of `byIndex` (a reconcile's `matchingFields` list) and of
 * a scan of every cached object for the same 10: medians of many lookups, side by side.
 *
 * Needs `--expose-gc` (the npm script passes it).
 */
import { spawn } from 'node:child_process';
import { KubeClient } from '../packages/ctrlmetrics/src/index.js';
import { transforms } from '../packages/ctrlmetrics/src/exports/cache.js';
import { startAuthority } from '../packages/envtest/src/index.js';
import { Informer } from '../packages/ctrlmetrics/src/kube/informer.js';

interface Settings {
  objects: number[];
  reps: number;
}

function parseArgs(argv: string[]): Settings {
  const s: Settings = { objects: [10_000, 50_000], reps: 3 };
  for (const a of argv) {
    const m = /^--([a-z-]+)=(.*)$/.exec(a);
    if (!m) throw new Error(`unknown argument ${a}`);
    if (m[1] === 'objects') s.objects = m[2].split(',').map(Number);
    else if (m[1] === 'reps') s.reps = Number(m[2]);
    else throw new Error(`unknown flag --${m[1]}`);
  }
  if (!s.objects.every((n) => Number.isInteger(n) && n >= 10) || !(Number.isInteger(s.reps) && s.reps >= 1))
    throw new Error('--objects are integers of 10 or more, --reps a positive integer');
  return s;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:cache-memory does)');

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc!();
  return process.memoryUsage().heapUsed;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function seed(client: KubeClient, ns: string, n: number): Promise<void> {
  await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const data = Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`key-${k}`, `value-${k}-${'x'.repeat(24)}`]));
  const batch = 64;
  for (let i = 0; i < n; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, (_, j) => {
        const name = `cm-${i + j}`;
        return client.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, {
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name, labels: { app: 'bench', tier: 'cache', owner: `owner-${Math.floor((i + j) / 10)}` } },
            data,
          },
          contentType: 'application/apply-patch+yaml',
          query: { fieldManager: 'bench-apply' },
        });
      }),
    );
  }
}

async function cacheBytes(client: KubeClient, path: string, variant: string, n: number): Promise<number> {
  const before = heapAfterGc();
  let inf: Informer<Record<string, unknown>> | undefined = new Informer(client, {
    path,
    labelSelector: 'app=bench',
    resyncMs: 0,
    ...(variant.includes('stripManagedFields') ? { transform: transforms.stripManagedFields } : {}),
    ...(variant.includes('metadataOnly') ? { metadataOnly: true } : {}),
  });
  inf.start();
  if (!(await inf.waitForSync(600_000))) throw new Error(`${variant}: no sync`);
  if (inf.list().length !== n) throw new Error(`${variant}: ${inf.list().length} cached, expected ${n}`);
  const after = heapAfterGc();
  await inf.stop();
  // eslint-disable-next-line no-useless-assignment -- dropped so the collector can free it before the next measurement
  inf = undefined;
  heapAfterGc();
  return (after - before) / n;
}

async function lookups(client: KubeClient, path: string, n: number): Promise<{ indexMs: number; scanMs: number }> {
  type Labelled = {
    metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  };
  const inf = new Informer<Labelled>(client, { path, labelSelector: 'app=bench', resyncMs: 0 });
  inf.addIndex('owner', (o) => o.metadata?.labels?.owner);
  inf.start();
  if (!(await inf.waitForSync(600_000))) throw new Error('index: no sync');
  const owners = Math.floor(n / 10);
  const pick = (i: number) => `owner-${(i * 7919) % owners}`;
  const indexTimes: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const t0 = performance.now();
    const found = inf.byIndex('owner', pick(i));
    indexTimes.push(performance.now() - t0);
    if (found.length !== 10) throw new Error(`index found ${found.length}`);
  }
  const scanTimes: number[] = [];
  for (let i = 0; i < 30; i++) {
    const owner = pick(i);
    const t0 = performance.now();
    const found = inf.list().filter((o) => o.metadata?.labels?.owner === owner);
    scanTimes.push(performance.now() - t0);
    if (found.length !== 10) throw new Error(`scan found ${found.length}`);
  }
  await inf.stop();
  return { indexMs: median(indexTimes), scanMs: median(scanTimes) };
}

/** Child mode: one informer of `variant` against the API in `config`; prints the heap per cached object. */
async function child(variant: string, config: string, n: number): Promise<void> {
  const c = new KubeClient(JSON.parse(config));
  const perObject = await cacheBytes(c, '/api/v1/namespaces/bench-cache/configmaps', variant, n);
  c.close();
  process.stdout.write(`${perObject}\n`);
}

function runChild(variant: string, config: object, n: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        '--expose-gc',
        '--conditions=ctrlmetrics-source',
        '--import',
        'tsx',
        import.meta.filename,
        'child',
        variant,
        JSON.stringify(config),
        String(n),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('exit', (code) =>
      code === 0
        ? resolve(Number(out.trim().split('\n').pop()))
        : reject(new Error(`${variant}: child exited ${code}`)),
    );
  });
}

if (process.argv[2] === 'child') {
  await child(process.argv[3], process.argv[4], Number(process.argv[5]));
  process.exit(0);
}

const settings = parseArgs(process.argv.slice(2));
console.log(`# cache memory and lookups — Node ${process.version}, ${settings.reps} reps`);
for (const n of settings.objects) {
  const authority = await startAuthority({});
  const client = new KubeClient({ ...authority.restConfig, qps: 1_000_000, burst: 1_000_000 });
  const ns = 'bench-cache';
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  try {
    const t0 = performance.now();
    await seed(client, ns, n);
    console.log(`\n## ${n} ConfigMaps (server-side applied in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    const rows: Array<[string, number[]]> = [];
    for (const variant of ['plain', 'stripManagedFields', 'metadataOnly', 'metadataOnly+stripManagedFields']) {
      const per: number[] = [];
      for (let r = 0; r < settings.reps; r++)
        per.push(await runChild(variant, { ...authority.restConfig, qps: 1_000_000, burst: 1_000_000 }, n));
      rows.push([variant, per]);
    }
    const plain = median(rows[0][1]);
    console.log('| cache | heap per object, median (range) | vs plain |');
    console.log('|---|---|---|');
    for (const [variant, per] of rows) {
      console.log(
        `| ${variant} | ${(median(per) / 1024).toFixed(2)} KiB (${(Math.min(...per) / 1024).toFixed(2)}–${(Math.max(...per) / 1024).toFixed(2)}) | ${(median(per) / plain).toFixed(2)}× |`,
      );
    }
    const { indexMs, scanMs } = await lookups(client, path, n);
    console.log(
      `\nthe 10 objects of one owner: byIndex median ${(indexMs * 1000).toFixed(1)} µs, scan median ${scanMs.toFixed(2)} ms (${(scanMs / indexMs).toFixed(0)}× slower)`,
    );
  } finally {
    client.close();
    await authority.stop();
  }
}

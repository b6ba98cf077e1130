/**
 * `node --import tsx bench/render-ab.ts OLD_DIR NEW_DIR [--series=667]`: an in-process A/B of two built trees'
 * exposition, immune to the run-to-run noise of separate server runs. Each tree's `dist/` builds the bench
 * registry (10 counter and 10 histogram vectors with `route`, `code`, N series each: N=667 ≈ 100k lines); then,
 * alternating the trees pair by pair:
 *
 * - one collect + OpenMetrics render (15 pairs of 10 renders);
 * - gzip at the server's level (1) of each tree's body (11 pairs of 5), which shows what the body's byte order
 *   alone costs zlib;
 * - bound `inc()` and `observe()` (9 pairs of 5M calls).
 *
 * Prints medians and the median (and range) of the paired new/old ratios.
 */
import { existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { resolve } from 'node:path';

interface Trees<T> {
  old: T;
  new: T;
}
type MetricsModule = typeof import('../packages/ctrlmetrics/src/metrics/index.js');
/** The built runtime of a checkout: packages/ctrlmetrics/dist, or dist/ of a checkout from before the packages. */
const libIndex = (dir: string) =>
  [`${dir}/packages/ctrlmetrics/dist/src/index.js`, `${dir}/dist/src/index.js`].find((f) => existsSync(f)) ??
  `${dir}/packages/ctrlmetrics/dist/src/index.js`;

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const series = Number(/^--series=(\d+)$/.exec(process.argv.find((a) => a.startsWith('--series=')) ?? '')?.[1] ?? 667);
if (args.length !== 2) throw new Error('usage: bench/render-ab.ts OLD_DIR NEW_DIR [--series=N]');
const CODES = ['200', '404', '500'];

async function load(dir: string): Promise<MetricsModule> {
  return ((await import(libIndex(resolve(dir)))) as { metrics: MetricsModule }).metrics;
}

function registryOf(m: MetricsModule): InstanceType<MetricsModule['Registry']> {
  const r = new m.Registry();
  for (let v = 0; v < 10; v++) {
    const cv = new m.Counter({
      name: `app_requests_${v}_total`,
      help: 'x',
      labelNames: ['route', 'code'],
      registers: [r],
    });
    const hv = new m.Histogram({
      name: `app_request_duration_${v}_seconds`,
      help: 'x',
      labelNames: ['route', 'code'],
      registers: [r],
    });
    for (let i = 0; i < series; i++) {
      cv.labels(`/api/v1/resource/${i}`, CODES[i % 3]).inc(i + 1);
      const h = hv.labels(`/api/v1/resource/${i}`, CODES[i % 3]);
      for (let k = 0; k < 5; k++) h.observe((i % 100) / 100 + k * 0.01);
    }
  }
  return r;
}

async function render(r: InstanceType<MetricsModule['Registry']>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of (await r.collect()).chunks('openmetrics')) parts.push(c);
  return Buffer.concat(parts);
}

const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1];

async function ab(
  what: string,
  pairs: number,
  run: (k: keyof Trees<unknown>) => Promise<number> | number,
): Promise<void> {
  for (const k of ['old', 'new'] as const) await run(k);
  const t: Trees<number[]> = { old: [], new: [] };
  for (let p = 0; p < pairs; p++)
    for (const k of p % 2 ? (['old', 'new'] as const) : (['new', 'old'] as const)) t[k].push(await run(k));
  const ratios = t.new.map((v, i) => v / t.old[i]).sort((a, b) => a - b);
  console.log(
    `${what}: old ${median(t.old).toFixed(3)}, new ${median(t.new).toFixed(3)}; paired new/old ${median(ratios).toFixed(3)} (${ratios[0].toFixed(3)}–${ratios.at(-1)!.toFixed(3)})`,
  );
}

const mods: Trees<MetricsModule> = { old: await load(args[0]), new: await load(args[1]) };
const regs = { old: registryOf(mods.old), new: registryOf(mods.new) };
const bodies = { old: await render(regs.old), new: await render(regs.new) };
console.log(`${series} series per vector: ${bodies.new.length} bytes (old ${bodies.old.length})`);

await ab('collect + OpenMetrics render, ms', 15, async (k) => {
  const s = performance.now();
  for (let i = 0; i < 10; i++) await render(regs[k]);
  return (performance.now() - s) / 10;
});
await ab('gzip level 1 of the body, ms', 11, (k) => {
  const s = performance.now();
  for (let i = 0; i < 5; i++) gzipSync(bodies[k], { level: 1 });
  return (performance.now() - s) / 5;
});
const bound = {
  old: {
    c: new mods.old.Counter({ name: 'c_total', help: 'x', labelNames: ['a'], registers: [] }).labels('x'),
    h: new mods.old.Histogram({ name: 'h', help: 'x', labelNames: ['a'], registers: [] }).labels('x'),
  },
  new: {
    c: new mods.new.Counter({ name: 'c_total', help: 'x', labelNames: ['a'], registers: [] }).labels('x'),
    h: new mods.new.Histogram({ name: 'h', help: 'x', labelNames: ['a'], registers: [] }).labels('x'),
  },
};
await ab('bound inc(), ns', 9, (k) => {
  const c = bound[k].c;
  const s = performance.now();
  for (let i = 0; i < 5e6; i++) c.inc();
  return ((performance.now() - s) * 1e6) / 5e6;
});
await ab('bound observe(), ns', 9, (k) => {
  const h = bound[k].h;
  const s = performance.now();
  for (let i = 0; i < 5e6; i++) h.observe((i & 1023) / 1000);
  return ((performance.now() - s) * 1e6) / 5e6;
});

/**
 * Summarises V8 .cpuprofile files (from `CTRLMETRICS_BENCH_CPU_PROF=DIR npm run bench ...`): self time per function
 * and per source file, highest first. Usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [top=25]
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [top]\n');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
for (let i = 0; i < p.samples.length; i++) selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

const perFn = new Map<string, number>();
const perFile = new Map<string, number>();
for (const [id, us] of selfUs) {
  const f = byId.get(id)!.callFrame;
  const where = f.url ? basename(f.url.replace(/^file:\/\//, '')) : '(native)';
  const fn = `${f.functionName || '(anonymous)'} ${where}${f.url ? `:${f.lineNumber + 1}` : ''}`;
  perFn.set(fn, (perFn.get(fn) ?? 0) + us);
  perFile.set(where, (perFile.get(where) ?? 0) + us);
}
const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const show = (title: string, m: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
};
process.stdout.write(`${basename(file)}: ${(total / 1000).toFixed(0)} ms sampled over ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s\n`);
show('self time by function', perFn);
show('self time by file', perFile);

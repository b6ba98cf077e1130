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
for (let i = 0; i < p.samples.length; i++)
  selfUs.set(p.samples[i], (selfUs.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
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
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`${pct(us)} ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
};
process.stdout.write(
  `${basename(file)}: ${(total / 1000).toFixed(0)} ms sampled over ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s\n`,
);
show('self time by function', perFn);
show('self time by file', perFile);

// Busy stretches: consecutive samples that are not (idle), i.e. how long the event loop ran without a break,
// with the functions that took the time in each. The longest ones are what event-loop delay measures.
const fnOf = (id: number) => {
  const f = byId.get(id)!.callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url ? basename(f.url.replace(/^file:\/\//, '')) + ':' + (f.lineNumber + 1) : '(native)'}`;
};
const stretches: Array<{ us: number; fns: Map<string, number> }> = [];
let cur: { us: number; fns: Map<string, number> } | undefined;
for (let i = 0; i < p.samples.length; i++) {
  const id = p.samples[i];
  const dt = p.timeDeltas[i + 1] ?? 0; // a sample's duration is the delta to the next sample
  if (byId.get(id)!.callFrame.functionName === '(idle)') {
    if (cur) stretches.push(cur);
    cur = undefined;
    continue;
  }
  cur ??= { us: 0, fns: new Map() };
  cur.us += dt;
  const fn = fnOf(id);
  cur.fns.set(fn, (cur.fns.get(fn) ?? 0) + dt);
}
if (cur) stretches.push(cur);
stretches.sort((a, b) => b.us - a.us);
const q = (x: number) =>
  stretches.length
    ? (stretches[Math.min(stretches.length - 1, Math.floor(stretches.length * x))].us / 1000).toFixed(2)
    : '–';
process.stdout.write(
  `\nbusy stretches: ${stretches.length}; longest ${q(0)} ms, top 1% from ${q(0.01)} ms, top 10% from ${q(0.1)} ms\n`,
);
for (const st of stretches.slice(0, Math.min(10, top))) {
  const fns = [...st.fns]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([k, us]) => `${k} ${(us / 1000).toFixed(1)}`)
    .join(', ');
  process.stdout.write(`${(st.us / 1000).toFixed(1).padStart(7)} ms  ${fns}\n`);
}

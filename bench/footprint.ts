/**
 * `npm run bench:footprint [-- --reps=10] [--no-pin]`: what starting costs, in fresh processes, medians
 * (min–max) of `--reps` each, the kinds alternated (see bench/lib/footprint.ts):
 * - a bare `node` vs one that runs `await import('ctrlmetrics')`: the import's wall time and the RSS right after it;
 * - the README's quick-start manager (`dist/examples/quickstart.js`: one controller, leader election, the secure
 *   endpoint with the real filter and a self-signed certificate) against the embedded authority, already running
 *   in this process: from spawning it to its first `/metrics` answer 200 for a reader's token, and its RSS then.
 * Child processes run pinned to CPU 0 unless `--no-pin`. Prints a Markdown report. `npm run bench` reports the
 * same cells.
 */
import { stopAll } from './lib/children.js';
import { footprintTable, measureFootprint } from './lib/footprint.js';
import { startTestCluster } from '../test/helpers/cluster.js';

function parseArgs(argv: string[]): { reps: number; pin: boolean } {
  const s = { reps: 10, pin: true };
  for (const a of argv) {
    const m = /^--reps=(\d+)$/.exec(a);
    if (m && Number(m[1]) >= 1 && Number(m[1]) <= 100) s.reps = Number(m[1]);
    else if (a === '--no-pin') s.pin = false;
    else throw new Error(`unknown argument ${a}: --reps=N (1–100), --no-pin`);
  }
  return s;
}

const s = parseArgs(process.argv.slice(2));
const cluster = await startTestCluster();
try {
  const r = await measureFootprint(cluster, s.reps, s.pin);
  const out = [
    `## Footprint: Node ${process.version}, ${s.reps} fresh processes each, medians (min–max)${s.pin ? ', pinned to CPU 0' : ''}`,
    '',
    `    npm run bench:footprint${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    '',
    ...footprintTable(r),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
} finally {
  await cluster.stop();
  await stopAll();
}

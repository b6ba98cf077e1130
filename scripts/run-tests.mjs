// Runs node:test over a suite's files. Node 20's `--test` does not expand globs, so the file list is built here.
// Suites: unit (test/*.test.ts and test/<area>/*.test.ts, except e2e and reliability), e2e, reliability, all.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const suite = process.argv[2] ?? 'all';
const only = process.argv.slice(3);

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const all = walk('test');
const isE2e = (f) => f.startsWith(join('test', 'e2e'));
const isRel = (f) => f.startsWith(join('test', 'reliability'));
const groups = {
  unit: all.filter((f) => !isE2e(f) && !isRel(f)),
  e2e: all.filter(isE2e),
  reliability: all.filter(isRel),
};
const order = suite === 'all' ? ['unit', 'e2e', 'reliability'] : [suite];
// Unit test files run one at a time unless CTRLMETRICS_TEST_CONCURRENCY says otherwise (CI runs two at once: each
// file starts its own process and transpiles its imports, time the two cores can overlap). The e2e and reliability
// files always run one at a time: their load, fault and timing cases must not share the machine with another file.
const unitConcurrency = Math.max(1, Number(process.env.CTRLMETRICS_TEST_CONCURRENCY) || 1);
let failed = false;
for (const name of order) {
  let files = groups[name];
  if (!files) {
    console.error(`unknown suite ${name}: use unit, e2e, reliability or all`);
    process.exit(2);
  }
  if (only.length) files = files.filter((f) => only.some((o) => f.includes(o)));
  if (files.length === 0) continue;
  console.log(`\n# suite ${name}: ${files.length} file(s)`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${name === 'unit' ? unitConcurrency : 1}`, '--test-reporter=spec', ...files],
    { stdio: 'inherit', env: { ...process.env, CTRLMETRICS_TEST: '1' } },
  );
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);

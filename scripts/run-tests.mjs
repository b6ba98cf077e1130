// Runs node:test over a suite's files. Node 20's `--test` does not expand globs, so the file list is built here.
// Suites: unit (test/*.test.ts and test/<area>/*.test.ts, except e2e, reliability and real-api), e2e, reliability,
// real-api, all.
//
// The real-api suite (test/real-api) runs against a real cluster, given one of two ways (test/helpers/real-kube.ts):
// CTRLMETRICS_TEST_KUBECONFIG, a cluster-admin kubeconfig of a cluster you have; or CTRLMETRICS_SHARED_KUBE, a
// folder whose start.sh DIR / stop.sh DIR start and stop a control plane, one for the whole suite, passed to the
// test files as CTRLMETRICS_REAL_KUBE_DIR and removed when the suite ends. The suite's files share one run id
// (CTRLMETRICS_TEST_RUN_ID) that every name they make carries, and delete what carries it. With neither variable
// the suite says in one line how to run it and is skipped.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
const isReal = (f) => f.startsWith(join('test', 'real-api'));
const groups = {
  unit: all.filter((f) => !isE2e(f) && !isRel(f) && !isReal(f)),
  e2e: all.filter(isE2e),
  reliability: all.filter(isRel),
  'real-api': all.filter(isReal),
};
const order = suite === 'all' ? ['unit', 'e2e', 'reliability', 'real-api'] : [suite];
const sharedKube = process.env.CTRLMETRICS_SHARED_KUBE ? resolve(process.env.CTRLMETRICS_SHARED_KUBE) : undefined;
const testKubeconfig = process.env.CTRLMETRICS_TEST_KUBECONFIG;

/** Starts the real-api suite's control plane; returns its directory. */
function startControlPlane() {
  if (!existsSync(join(sharedKube, 'start.sh')))
    throw new Error(`CTRLMETRICS_SHARED_KUBE names ${sharedKube}, which holds no start.sh`);
  const dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-kube-'));
  const r = spawnSync('bash', [join(sharedKube, 'start.sh'), dir], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 180_000,
  });
  if (r.status !== 0) {
    stopControlPlane(dir);
    throw new Error(`${sharedKube}/start.sh failed (exit ${r.status}); its output is above`);
  }
  return dir;
}

function stopControlPlane(dir) {
  spawnSync('bash', [join(sharedKube, 'stop.sh'), dir], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });
  rmSync(dir, { recursive: true, force: true });
}

// Unit test files run one at a time unless CTRLMETRICS_TEST_CONCURRENCY says otherwise (CI runs two at once: each
// file starts its own process and transpiles its imports, time the two cores can overlap). The e2e and reliability
// files always run one at a time: their load, fault and timing cases must not share the machine with another file.
const unitConcurrency = Math.max(1, Number(process.env.CTRLMETRICS_TEST_CONCURRENCY) || 1);
let failed = false;
// Ctrl-C reaches the test runner too; this process lives on to stop the control plane (its processes are in their
// own sessions), then stops running suites.
let interrupted = false;
process.on('SIGINT', () => {}).on('SIGTERM', () => {});
for (const name of order) {
  let files = groups[name];
  if (!files) {
    console.error(`unknown suite ${name}: use unit, e2e, reliability, real-api or all`);
    process.exit(2);
  }
  if (only.length) files = files.filter((f) => only.some((o) => f.includes(o)));
  if (files.length === 0) continue;
  console.log(`\n# suite ${name}: ${files.length} file(s)`);
  const env = { ...process.env, CTRLMETRICS_TEST: '1' };
  let kubeDir;
  if (name === 'real-api') {
    if (!testKubeconfig && !sharedKube) {
      console.log(
        '# real-api: skipped, no real cluster: set CTRLMETRICS_TEST_KUBECONFIG=<cluster-admin kubeconfig> (a cluster you have) or CTRLMETRICS_SHARED_KUBE=<dir with start.sh/stop.sh> (a control plane of its own); see docs/guides/testing.md',
      );
      continue;
    }
    env.CTRLMETRICS_TEST_RUN_ID ||= `r${randomBytes(3).toString('hex')}`;
    console.log(
      `# real-api: run id ${env.CTRLMETRICS_TEST_RUN_ID}, against ${testKubeconfig ? `the cluster of ${testKubeconfig}` : `a control plane from ${sharedKube}`}`,
    );
    if (!testKubeconfig) {
      kubeDir = startControlPlane();
      env.CTRLMETRICS_REAL_KUBE_DIR = kubeDir;
    }
  }
  try {
    const r = spawnSync(
      process.execPath,
      [
        // the packages' imports of each other resolve to their sources (package.json's exports), as the tests' own do
        '--conditions=ctrlmetrics-source',
        '--import',
        'tsx',
        '--test',
        `--test-concurrency=${name === 'unit' ? unitConcurrency : 1}`,
        '--test-reporter=spec',
        ...files,
      ],
      { stdio: 'inherit', env },
    );
    if (r.status !== 0) failed = true;
    if (r.signal) interrupted = true;
  } finally {
    if (kubeDir) stopControlPlane(kubeDir);
  }
  if (interrupted) break;
}
process.exit(failed ? 1 : 0);

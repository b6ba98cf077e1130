/**
 * A project as a new user gets it: `ctrlmetrics init` with no flags (the built CLI of this working
 * tree, which packs the three packages into the project's vendor/), then in the project `npm install`, `npm run lint`, `npm run build` and the
 * project's own `npm test` (the embedded authority, the manager, grant, token, scrape: 200 and 401) on this Node
 * and on Node 24 LTS. Then the Dockerfile's steps without Docker: the builder stage's COPY sources copied into an
 * empty folder and its RUN lines run there (npm ci, build, prune), the runtime stage's COPY --from=builder into
 * another, and its entrypoint started from that folder.
 *
 * Needs the npm registry (the project's dependencies other than ctrlmetrics) and `npm run build` done first (as
 * `npm test` does).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { ROOT, run } from '../helpers/process.js';
import { must, testSummary, userEnv } from '../helpers/project-run.js';

const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-scaffolded-'));
after(() => rmSync(work, { recursive: true, force: true }));
const project = join(work, 'my-op');

test(
  "init with no flags → npm install → npm run build → the project's own npm test passes, on this Node and on Node 24",
  { timeout: 600_000 },
  async () => {
    assert.ok(existsSync(join(ROOT, 'packages/cli/dist/cli.js')), 'run npm run build first (npm test does)');
    await must(
      'ctrlmetrics init',
      run(
        process.execPath,
        [join(ROOT, 'packages/cli/dist/cli.js'), 'init', '--project-name', 'my-op', '--dir', project],
        {
          timeoutMs: 120_000,
        },
      ),
    );
    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.match(pkg.dependencies['ctrlmetrics'], /^file:vendor\/ctrlmetrics-\d+\.\d+\.\d+.*\.tgz$/);

    await must('npm install', run('npm', ['install', '--no-audit', '--no-fund'], { cwd: project, timeoutMs: 300_000 }));
    const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string; version?: string }>;
    };
    assert.match(
      lock.packages['node_modules/ctrlmetrics']?.resolved ?? '',
      /vendor\/ctrlmetrics-.*\.tgz$/,
      'the lock file points at the vendored tarball',
    );
    for (const dev of ['@ctrlmetrics/cli', '@ctrlmetrics/envtest'])
      assert.match(
        lock.packages[`node_modules/${dev}`]?.resolved ?? '',
        /vendor\/ctrlmetrics-(cli|envtest)-.*\.tgz$/,
        `the lock file points ${dev} at its vendored tarball`,
      );
    // the lint setup init wrote passes on what it wrote, with the tools npm installed
    await must('npm run lint', run('npm', ['run', 'lint'], { cwd: project, timeoutMs: 180_000 }));
    await must('npm run build', run('npm', ['run', 'build'], { cwd: project, timeoutMs: 180_000 }));
    assert.ok(existsSync(join(project, 'dist/main.js')));

    const here = await must('npm test', run('npm', ['test'], { cwd: project, env: userEnv, timeoutMs: 300_000 }));
    assert.deepEqual(
      testSummary(here.stdout),
      { tests: 3, pass: 3, fail: 0, cancelled: 0, skipped: 0, todo: 0 },
      here.stdout.slice(-3000),
    );
    for (const name of [
      '/metrics answers 401 without a token',
      'a service account granted metrics-reader scrapes the reconcile metrics',
      'a token without metrics-reader is refused with 403',
    ]) {
      assert.ok(
        here.stdout.split('\n').some((l) => /^ok \d+ - /.test(l) && l.endsWith(` - ${name}`)),
        `passed: ${name}`,
      );
    }

    const node24 = await must(
      'npm test on Node 24',
      run(
        'bash',
        [join(ROOT, 'scripts/with-node.sh'), '24', 'sh', '-c', 'cd "$1" && node --version && npm test', 'sh', project],
        { env: userEnv, timeoutMs: 400_000 },
      ),
    );
    assert.match(node24.stdout, /^v24\./m);
    assert.deepEqual(
      testSummary(node24.stdout),
      { tests: 3, pass: 3, fail: 0, cancelled: 0, skipped: 0, todo: 0 },
      node24.stdout.slice(-3000),
    );
  },
);

/** `*` in the last path segment, as Docker's COPY matches it (a pattern matching nothing is fine if another source matched). */
function expand(context: string, source: string): string[] {
  if (!source.includes('*')) return existsSync(join(context, source)) ? [source] : [];
  const dir = dirname(source);
  const re = new RegExp(
    `^${basename(source)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')}$`,
  );
  return readdirSync(join(context, dir))
    .filter((n) => re.test(n))
    .map((n) => (dir === '.' ? n : join(dir, n)));
}

/** The packages of a node_modules folder (scoped ones as @scope/name) and the bytes of all its files. */
function installed(dir: string): { bytes: number; packages: string[] } {
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) bytes += statSync(p).size;
    }
  };
  walk(dir);
  const packages = readdirSync(dir)
    .filter((n) => !n.startsWith('.'))
    .flatMap((n) => (n.startsWith('@') ? readdirSync(join(dir, n)).map((s) => `${n}/${s}`) : [n]))
    .sort();
  return { bytes, packages };
}

/** Docker's COPY: into the folder `dest` when it ends in `/`, else to `dest` itself. */
function copyInto(from: string, toDir: string, dest: string): void {
  const target = dest.endsWith('/') ? join(toDir, dest, basename(from)) : join(toDir, dest);
  mkdirSync(dirname(target), { recursive: true });
  cpSync(from, target, { recursive: statSync(from).isDirectory() });
}

test(
  "the Dockerfile's steps, run without Docker, build the image's files, and its entrypoint starts",
  { timeout: 600_000 },
  async (t) => {
    assert.ok(existsSync(join(project, 'package-lock.json')), 'the previous test installed the project');
    const lines = readFileSync(join(project, 'Dockerfile'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() && !l.startsWith('#'));
    const stages: string[][] = [];
    for (const l of lines) {
      if (l.startsWith('FROM ')) stages.push([l]);
      else stages.at(-1)!.push(l);
    }
    assert.equal(stages.length, 2, 'a build stage and a runtime stage');
    assert.equal(stages[0][0], 'FROM node:24-slim AS builder');

    // 1. build stage: only what its COPY lines name reaches the build
    const build = join(work, 'image-build');
    mkdirSync(build);
    for (const l of stages[0].slice(1)) {
      const [instr, ...rest] = l.split(' ');
      if (instr === 'WORKDIR') continue;
      if (instr === 'COPY') {
        const dest = rest.pop()!;
        const sources = rest.flatMap((s) => expand(project, s));
        assert.ok(sources.length > 0, `${l}: a source exists`);
        for (const s of sources) copyInto(join(project, s), build, dest);
      } else if (instr === 'RUN') {
        await must(l, run('sh', ['-c', rest.join(' ')], { cwd: build, timeoutMs: 300_000 }));
      } else assert.fail(`an instruction this test does not know: ${l}`);
    }
    assert.ok(existsSync(join(build, 'dist/main.js')), 'the build stage built dist/main.js');
    assert.equal(existsSync(join(build, 'node_modules/typescript')), false, 'dev dependencies pruned');

    // 2. runtime stage: the files copied from the build stage
    const image = join(work, 'image');
    mkdirSync(image);
    let entrypoint: string[] = [];
    for (const l of stages[1].slice(1)) {
      const [instr, ...rest] = l.split(' ');
      if (instr === 'WORKDIR' || instr === 'USER') continue;
      if (instr === 'COPY') {
        assert.equal(rest[0], '--from=builder', l);
        copyInto(join(build, rest[1].replace(/^\/app\//, '')), image, rest[2]);
      } else if (instr === 'ENTRYPOINT') entrypoint = JSON.parse(rest.join(' ')) as string[];
      else assert.fail(`an instruction this test does not know: ${l}`);
    }
    assert.equal(entrypoint[0], '/nodejs/bin/node');
    // what the image carries besides the project's own build: its production node_modules, measured and reported
    const modules = installed(join(image, 'node_modules'));
    t.diagnostic(
      `the image's node_modules: ${(modules.bytes / 1e6).toFixed(1)} MB in ${modules.packages.length} packages (${modules.packages.join(', ')})`,
    );
    for (const dev of ['typescript', 'tsx', '@types/node'])
      assert.ok(!modules.packages.includes(dev), `${dev} is not in the image`);
    // the image's node is distroless Node 24's; this machine's node runs the same files
    const help = await must(
      'the entrypoint',
      run(process.execPath, [entrypoint[1].replace(/^\/app\//, `${image}/`), '--help'], {
        cwd: image,
        timeoutMs: 60_000,
      }),
    );
    assert.match(help.stdout, /--metrics-bind-address/);
    assert.match(help.stdout, /--zap-log-level\n/);

    // controller-runtime's logging flags and Go's booleans: a bad value exits 2 naming it; good ones reach the logger
    const main = entrypoint[1].replace(/^\/app\//, `${image}/`);
    const bad = await run(process.execPath, [main, '--zap-log-level=verbose'], { cwd: image, timeoutMs: 60_000 });
    assert.equal(bad.code, 2);
    assert.equal(
      bad.stderr,
      `invalid log level "verbose": one of 'debug', 'info', 'error', 'panic', or an integer > 0\n`,
    );
    const missing = join(work, 'no-such.kubeconfig');
    const consoleRun = await run(
      process.execPath,
      [
        main,
        '--leader-elect=True',
        '--zap-log-level=debug',
        '--zap-encoder=console',
        '--zap-time-encoding=rfc3339',
        `--kubeconfig=${missing}`,
      ],
      { cwd: image, timeoutMs: 60_000 },
    );
    assert.equal(consoleRun.code, 1, consoleRun.stderr);
    assert.match(
      consoleRun.stderr,
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\tERROR\tsetup\tproblem running manager\t\{"error":".*no-such\.kubeconfig.*"\}$/m,
    );
    assert.match(consoleRun.stderr, /^\s*at /m, "errors carry a stack trace (zap's production stacktrace level)");
    const jsonRun = await run(
      process.execPath,
      [main, '--zap-encoder=json', '--zap-stacktrace-level=panic', `--kubeconfig=${missing}`],
      { cwd: image, timeoutMs: 60_000 },
    );
    assert.equal(jsonRun.code, 1);
    const entry = JSON.parse(jsonRun.stderr.trim().split('\n').at(-1)!) as Record<string, unknown>;
    assert.equal(entry.level, 'error');
    assert.equal(entry.msg, 'problem running manager');
    assert.equal(
      jsonRun.stderr.split('\n').filter((l) => l.includes('no-such.kubeconfig')).length,
      1,
      `the start-up failure is logged once:\n${jsonRun.stderr}`,
    );
    assert.equal(entry.stacktrace, undefined, '--zap-stacktrace-level=panic: no stack trace');
  },
);

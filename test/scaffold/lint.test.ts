/**
 * The project hygiene `init` scaffolds: `npm run lint` (ESLint with typescript-eslint, Prettier's check) passes on a
 * fresh project and on one `create api` and `create webhook` added to, run with this repository's ESLint and
 * Prettier (the versions the project's package.json names); the GitHub workflows run scripts the project has.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { createApi } from '../../packages/cli/src/scaffold/create-api.js';
import { createWebhook } from '../../packages/cli/src/scaffold/create-webhook.js';
import { PRETTIER_OPTIONS } from '../../packages/cli/src/scaffold/templates/project-hygiene.js';
import { run } from '../helpers/process.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

const ROOT = resolve(import.meta.dirname, '../..');
let work: string;
before(() => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-lint-'));
});
after(() => rmSync(work, { recursive: true, force: true }));

/** The project's lint script's two commands, with the tools of this repository (linked as its node_modules). */
async function lint(app: string): Promise<string[]> {
  const problems: string[] = [];
  for (const [tool, args] of [
    ['eslint/bin/eslint.js', ['.']],
    ['prettier/bin/prettier.cjs', ['--check', '.']],
  ] as const) {
    const r = await run(process.execPath, [join(ROOT, 'node_modules', tool), ...args], {
      cwd: app,
      timeoutMs: 120_000,
    });
    if (r.code !== 0) problems.push(`${tool}: ${r.stdout}${r.stderr}`);
  }
  return problems;
}

async function newProject(name: string): Promise<string> {
  const app = join(work, name);
  await initProject({ projectName: name, domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
  symlinkSync(join(ROOT, 'node_modules'), join(app, 'node_modules'));
  return app;
}

test(
  'the lint script, ESLint and Prettier: the versions the CLI formats with, and a clean fresh project',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = await newProject('tidy-op');
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    assert.equal(pkg.scripts.lint, 'eslint . && prettier --check .');
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const tool of ['eslint', '@eslint/js', 'typescript-eslint', 'prettier'])
      assert.equal(
        pkg.devDependencies[tool],
        own.devDependencies[tool],
        `${tool}: the version this repository lints with`,
      );
    assert.deepEqual(JSON.parse(readFileSync(join(app, '.prettierrc.json'), 'utf8')), PRETTIER_OPTIONS);
    assert.deepEqual(await lint(app), []);
    // the check is real: an unused variable and a badly formatted line fail it
    writeFileSync(join(app, 'src/extra.ts'), 'const unused:number=1\n');
    const problems = await lint(app);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0], /'unused' is assigned a value but never used/);
    assert.match(problems[1], /src\/extra\.ts/);
  },
);

test(
  'lint passes after create api (a kind, a built-in kind) and create webhook (admission, conversion)',
  { skip: SECOND_NODE_SKIP_COMPILER },
  async () => {
    const app = await newProject('busy-op');
    await createApi({ dir: app, group: 'fleet', version: 'v1', kind: 'FrigateWithAVeryLongKindName' });
    await createApi({
      dir: app,
      group: 'fleet',
      version: 'v2',
      kind: 'FrigateWithAVeryLongKindName',
      controller: false,
    });
    await createWebhook({
      dir: app,
      group: 'fleet',
      version: 'v1',
      kind: 'FrigateWithAVeryLongKindName',
      defaulting: true,
      programmaticValidation: true,
    });
    await createWebhook({
      dir: app,
      group: 'fleet',
      version: 'v1',
      kind: 'FrigateWithAVeryLongKindName',
      conversion: true,
      spoke: ['v2'],
    });
    await createApi({ dir: app, group: 'apps', version: 'v1', kind: 'StatefulSet', resource: false, controller: true });
    assert.deepEqual(await lint(app), []);
  },
);

test('the GitHub workflows: lint, test, and the tests on a kind cluster, each after npm ci', async () => {
  // the first test's project, or one of its own where that test is skipped (CI's second Node major)
  const app = existsSync(join(work, 'tidy-op', 'package.json'))
    ? join(work, 'tidy-op')
    : await newProject('workflows-op');
  const scripts = Object.keys(
    (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { scripts: object }).scripts,
  );
  const steps = (name: string) =>
    (
      parse(readFileSync(join(app, '.github/workflows', name), 'utf8')) as {
        on: Record<string, unknown>;
        jobs: Record<string, { 'runs-on': string; steps: Array<{ run?: string; env?: Record<string, string> }> }>;
      }
    ).jobs;
  const runs = (name: string) =>
    Object.values(steps(name)).flatMap((j) => j.steps.map((s) => s.run ?? '').filter(Boolean));
  for (const [file, script] of [
    ['lint.yml', 'lint'],
    ['test.yml', 'test'],
    ['test-e2e.yml', 'test'],
  ] as const) {
    const r = runs(file);
    assert.ok(r.includes('npm ci'), `${file} installs with npm ci`);
    assert.ok(
      r.some((x) => x === `npm run ${script}` || (script === 'test' && x === 'npm test')),
      `${file} runs ${script}`,
    );
    assert.ok(scripts.includes(script), `the project has the ${script} script`);
  }
  const e2e = Object.values(steps('test-e2e.yml'))[0].steps;
  assert.ok(e2e.some((s) => s.run === 'kind create cluster'));
  assert.deepEqual(e2e.find((s) => s.run === 'npm test')?.env, { USE_EXISTING_CLUSTER: 'true' });
});

/**
 * `ctrlmetrics alpha generate`: a project re-created from its PROJECT file with today's templates. One made by
 * today's commands comes out the same, file for file; one with its user's code gets that code carried over (the
 * manifests generated from it), the files the templates rewrite listed to merge, and what it cannot carry listed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { createApi } from '../../packages/cli/src/scaffold/create-api.js';
import { createWebhook } from '../../packages/cli/src/scaffold/create-webhook.js';
import { editProject } from '../../packages/cli/src/scaffold/edit.js';
import { alphaGenerate } from '../../packages/cli/src/scaffold/alpha-generate.js';
import { CHART_DIR, HELM_PLUGIN, generateHelmChart } from '../../packages/cli/src/scaffold/helm.js';
import { setPlugin } from '../../packages/cli/src/scaffold/project-file.js';
import { ScaffoldError } from '../../packages/cli/src/scaffold/errors.js';
import { writeCrds, writeRoles, writeWebhooks } from '../../packages/cli/src/generate/index.js';
import { runCli } from '../helpers/process.js';

let work: string;
before(() => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-alpha-'));
});
after(() => rmSync(work, { recursive: true, force: true }));

/** Every file under `dir`, path → content. */
function tree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return out;
}

/** A project as the CLI makes it: init, a kind, a built-in kind's controller, webhooks, an option, the manifests. */
async function madeToday(name: string): Promise<string> {
  const app = join(work, name);
  await initProject({ projectName: name, domain: 'example.com', dir: app, ctrlmetricsVersion: '^0.1.0' });
  await createApi({ dir: app, group: 'fleet', version: 'v1', kind: 'Frigate' });
  await createApi({ dir: app, group: 'apps', version: 'v1', kind: 'Deployment', resource: false, controller: true });
  await createWebhook({
    dir: app,
    group: 'fleet',
    version: 'v1',
    kind: 'Frigate',
    defaulting: true,
    programmaticValidation: true,
  });
  await editProject(app, { enable: ['prometheus'] });
  await writeCrds({ paths: ['src'], outputDir: 'config/crd/bases', root: app });
  await writeRoles({ paths: ['src'], output: 'config/rbac/role.yaml', root: app });
  await writeWebhooks({ paths: ['src'], output: 'config/webhook/manifests.yaml', root: app });
  // edit --enable helm
  await generateHelmChart(app);
  setPlugin(app, HELM_PLUGIN, true);
  return app;
}

test("a project made by today's commands comes out the same, file for file", async () => {
  const app = await madeToday('same-op');
  const r = await alphaGenerate({ inputDir: app });
  assert.equal(r.dir, `${app}-generated`);
  assert.deepEqual(r.steps, [
    'ctrlmetrics init --project-name same-op --domain example.com',
    'ctrlmetrics create api --group fleet --version v1 --kind Frigate',
    'ctrlmetrics create api --group apps --version v1 --kind Deployment --resource=false',
    'ctrlmetrics create webhook --group fleet --version v1 --kind Frigate --defaulting --programmatic-validation',
    'ctrlmetrics edit --enable prometheus',
    'ctrlmetrics edit --enable helm',
  ]);
  assert.deepEqual([r.carried, r.regenerated, r.notCarried], [[], [], []]);
  const before = tree(app);
  const after = tree(r.dir);
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort());
  for (const [p, text] of before) assert.equal(after.get(p), text, p);
});

test("the user's code is carried and the manifests follow it; rewritten and uncarried files are listed", async () => {
  const app = await madeToday('busy-op');
  const types = 'src/api/v1/frigate-types.ts';
  const typesText = readFileSync(join(app, types), 'utf8');
  assert.match(typesText, /export interface FrigateSpec \{/);
  writeFileSync(
    join(app, types),
    typesText.replace(
      'export interface FrigateSpec {',
      'export interface FrigateSpec {\n  /** How many guns. */\n  // +kubebuilder:validation:Minimum=0\n  guns?: int32;',
    ),
  );
  if (!/\bint32\b.*from 'ctrlmetrics\/api'/.test(typesText))
    writeFileSync(
      join(app, types),
      `import type { int32 } from 'ctrlmetrics/api';\n${readFileSync(join(app, types), 'utf8')}`,
    );
  appendFileSync(join(app, 'src/controllers/frigate-controller.ts'), '\n// my reconcile notes\n');
  mkdirSync(join(app, 'src/util'));
  writeFileSync(join(app, 'src/util/helper.ts'), 'export const helper = 1;\n');
  mkdirSync(join(app, 'docs'));
  writeFileSync(join(app, 'docs/notes.md'), '# notes\n');
  appendFileSync(join(app, 'src/main.ts'), '\n// wired by hand\n');
  writeFileSync(join(app, 'config/default/my_patch.yaml'), 'kind: Deployment\n');
  appendFileSync(join(app, CHART_DIR, 'values.yaml'), 'podLabels: {}\n');

  const out = join(work, 'busy-op-v2');
  const r = await alphaGenerate({ inputDir: app, outputDir: out });
  assert.deepEqual(r.carried.sort(), [
    'docs/notes.md',
    'src/api/v1/frigate-types.ts',
    'src/controllers/frigate-controller.ts',
    'src/util/helper.ts',
  ]);
  for (const p of r.carried) assert.equal(readFileSync(join(out, p), 'utf8'), readFileSync(join(app, p), 'utf8'), p);
  // the chart file edited by hand is to merge; the rest of the chart is made again
  assert.deepEqual(r.regenerated.sort(), [`${CHART_DIR}/values.yaml`, 'src/main.ts']);
  assert.equal(r.notCarried.length, 1);
  assert.match(r.notCarried[0], /^config\/default\/my_patch\.yaml: not one of the templates' files/);
  // the CRD is generated from the carried types
  const crd = readFileSync(join(out, 'config/crd/bases/fleet.example.com_frigates.yaml'), 'utf8');
  assert.match(crd, /guns:\n\s+description: How many guns\.\n\s+format: int32\n\s+minimum: 0\n\s+type: integer/);
  // and so is the chart's
  assert.match(
    readFileSync(
      join(out, CHART_DIR, 'templates/crd/customresourcedefinition-frigates.fleet.example.com.yaml'),
      'utf8',
    ),
    /guns:\n\s+description: How many guns\./,
  );
});

test('the output must be a folder of its own, new or empty; the CLI prints what it did', async () => {
  const app = await madeToday('cli-op');
  await assert.rejects(alphaGenerate({ inputDir: app, outputDir: join(app, 'next') }), (e: unknown) => {
    return e instanceof ScaffoldError && /is inside the project/.test(e.message);
  });
  const full = join(work, 'full');
  mkdirSync(full);
  writeFileSync(join(full, 'x'), '');
  await assert.rejects(alphaGenerate({ inputDir: app, outputDir: full }), /is not empty/);
  await assert.rejects(alphaGenerate({ inputDir: work }), /PROJECT not found/);

  const r = await runCli(['alpha', 'generate', '--output-dir', join(work, 'cli-op-new')], {
    cwd: app,
    timeoutMs: 120_000,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /^generated .*cli-op-new:\n {2}ran: ctrlmetrics init --project-name cli-op --domain example\.com\n/,
  );
  assert.match(r.stdout, /^carried 0 file\(s\) of yours:$/m);
});

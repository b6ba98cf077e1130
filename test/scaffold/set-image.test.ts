/**
 * `ctrlmetrics set-image NAME=IMAGE` (kustomize's `edit set image`, which the deploy and build-installer scripts
 * run with IMG): the kustomization's `images` entry, checked by what kubectl's own kustomize renders from it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseImageRef, setImage } from '../../packages/cli/src/scaffold/set-image.js';
import { ScaffoldError } from '../../packages/cli/src/scaffold/errors.js';
import { initProject } from '../../packages/cli/src/scaffold/init.js';
import { run, runCli } from '../helpers/process.js';

let work: string;
before(() => {
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-set-image-'));
});
after(() => rmSync(work, { recursive: true, force: true }));

/** The image of the manager's container as `kubectl kustomize` renders the project's config/default. */
async function renderedImage(project: string): Promise<string> {
  const r = await run('kubectl', ['kustomize', join(project, 'config/default')], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  const deployment = r.stdout
    .split(/^---$/m)
    .map((d) => parse(d) as { kind?: string; spec?: { template: { spec: { containers: Array<{ image: string }> } } } })
    .find((d) => d?.kind === 'Deployment');
  return deployment!.spec!.template.spec.containers[0].image;
}

test('image references split as kustomize holds them; what is none is refused', () => {
  assert.deepEqual(parseImageRef('controller:latest'), { newName: 'controller', newTag: 'latest' });
  assert.deepEqual(parseImageRef('example.com/team/op:v0.1.0'), { newName: 'example.com/team/op', newTag: 'v0.1.0' });
  assert.deepEqual(parseImageRef('localhost:5000/op'), { newName: 'localhost:5000/op' });
  assert.deepEqual(parseImageRef('registry.io:443/op:1.2'), { newName: 'registry.io:443/op', newTag: '1.2' });
  const digest = `sha256:${'ab'.repeat(32)}`;
  assert.deepEqual(parseImageRef(`ghcr.io/o/op@${digest}`), { newName: 'ghcr.io/o/op', digest });
  assert.deepEqual(parseImageRef(`ghcr.io/o/op:v1@${digest}`), { newName: 'ghcr.io/o/op', newTag: 'v1', digest });
  for (const bad of ['', 'Op:v1', 'op:', 'op:-x', 'op@sha256:12', 'a//b', 'bad host/op', ':v1', 'op:v1 ', 'op;rm'])
    assert.equal(parseImageRef(bad), undefined, JSON.stringify(bad));
});

test("npm scripts' IMG: the rendered Deployment runs the image set, and the file keeps its other keys and comments", async () => {
  const project = join(work, 'img-op');
  await initProject({ projectName: 'img-op', dir: project, ctrlmetricsVersion: '^0.1.0' });
  assert.equal(await renderedImage(project), 'controller:latest', 'as init writes it');
  const file = join(project, 'config/manager/kustomization.yaml');
  writeFileSync(file, `# my note\n${readFileSync(file, 'utf8')}`);

  setImage(join(project, 'config/manager'), 'controller', 'example.com/img-op:v0.0.1');
  assert.equal(await renderedImage(project), 'example.com/img-op:v0.0.1');
  const text = readFileSync(file, 'utf8');
  assert.match(text, /^# my note$/m);
  assert.deepEqual((parse(text) as { resources: string[]; images: unknown[] }).resources, ['manager.yaml']);
  assert.deepEqual((parse(text) as { images: unknown[] }).images, [
    { name: 'controller', newName: 'example.com/img-op', newTag: 'v0.0.1' },
  ]);

  const digest = `sha256:${'0f'.repeat(32)}`;
  setImage(join(project, 'config/manager'), 'controller', `example.com/img-op@${digest}`);
  assert.equal(await renderedImage(project), `example.com/img-op@${digest}`);
  // a tag given again drops the digest (the entry is replaced, not merged)
  setImage(join(project, 'config/manager'), 'controller', 'localhost:5000/img-op:dev');
  assert.equal(await renderedImage(project), 'localhost:5000/img-op:dev');
  assert.equal((parse(readFileSync(file, 'utf8')) as { images: unknown[] }).images.length, 1);
});

test('an entry is added where there is none; a missing kustomization or a bad reference is a clear error', () => {
  const dir = join(work, 'plain');
  mkdirSync(dir);
  writeFileSync(join(dir, 'kustomization.yaml'), 'resources:\n- deployment.yaml\n');
  setImage(dir, 'controller', 'op:v2');
  assert.deepEqual(parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')), {
    resources: ['deployment.yaml'],
    images: [{ name: 'controller', newName: 'op', newTag: 'v2' }],
  });
  assert.throws(
    () => setImage(join(work, 'nowhere'), 'controller', 'op:v1'),
    (e: unknown) => {
      return e instanceof ScaffoldError && /no kustomization\.yaml in .*--kustomization/.test(e.message);
    },
  );
  assert.throws(() => setImage(dir, 'controller', 'Op:v1'), /"Op:v1" is not an image reference/);
  writeFileSync(join(dir, 'kustomization.yaml'), 'images: 3\n');
  assert.throws(() => setImage(dir, 'controller', 'op:v1'), /images is not a list/);
});

test('ctrlmetrics set-image: the line it prints; usage and reference errors exit non-zero with one line', async () => {
  const project = join(work, 'cli-op');
  await initProject({ projectName: 'cli-op', dir: project, ctrlmetricsVersion: '^0.1.0' });
  const ok = await runCli(['set-image', 'controller=example.com/cli-op:v1'], { cwd: project });
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, 'config/manager/kustomization.yaml: image controller → example.com/cli-op:v1\n');
  assert.equal(await renderedImage(project), 'example.com/cli-op:v1');

  const usage = await runCli(['set-image', 'example.com/cli-op:v1'], { cwd: project });
  assert.equal(usage.code, 1);
  assert.match(usage.stderr, /^error: "example.com\/cli-op:v1": give NAME=IMAGE/);
  const bad = await runCli(['set-image', 'controller=UPPER:v1'], { cwd: project });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^error: "UPPER:v1" is not an image reference/);
  const elsewhere = await runCli(['set-image', 'controller=op:v1'], { cwd: work });
  assert.match(elsewhere.stderr, /^error: no kustomization\.yaml in config\/manager/);
});

/**
 * test/helpers/helm-render/main.go, built once per process with Debian's golang-go, Sprig
 * (golang-github-masterminds-sprig-dev) and gopkg.in/yaml.v3 (GOPATH mode, no module download;
 * scripts/install-test-deps.sh installs them): a chart rendered the way Helm's engine renders it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

const GO_SRC = resolve(import.meta.dirname, 'helm-render');
let built: Promise<string> | undefined;

function binary(): Promise<string> {
  built ??= (async () => {
    if (!existsSync('/usr/share/gocode/src/github.com/Masterminds/sprig'))
      assert.fail('Sprig is missing: run scripts/install-test-deps.sh (Debian golang-github-masterminds-sprig-dev)');
    const work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-helm-render-'));
    process.once('exit', () => rmSync(work, { recursive: true, force: true }));
    const bin = join(work, 'helm-render');
    await new Promise<void>((res, rej) =>
      execFile(
        'go',
        ['build', '-o', bin, 'main.go'],
        {
          cwd: GO_SRC,
          env: { ...process.env, GOPATH: '/usr/share/gocode', GO111MODULE: 'off', GOFLAGS: '' },
          timeout: 300_000,
        },
        (err, _out, stderr) => (err ? rej(new Error(`go build failed: ${stderr || err.message}`)) : res()),
      ),
    );
    return bin;
  })();
  return built;
}

/** The objects the chart in `chartDir` renders for a release, with `values` laid over its values.yaml. */
export async function renderChart(
  chartDir: string,
  release: { name: string; namespace: string },
  values: Record<string, unknown> = {},
): Promise<Array<Record<string, any>>> {
  const bin = await binary();
  const out = await new Promise<string>((res, rej) =>
    execFile(
      bin,
      [chartDir, release.name, release.namespace, JSON.stringify(values)],
      { timeout: 60_000, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => (err ? rej(new Error(`helm-render failed: ${stderr || err.message}`)) : res(stdout)),
    ),
  );
  return parseAllDocuments(out)
    .map((d) => {
      if (d.errors.length) throw new Error(`the chart rendered invalid YAML: ${d.errors[0].message}`);
      return d.toJS() as Record<string, any> | null;
    })
    .filter((o): o is Record<string, any> => o !== null);
}

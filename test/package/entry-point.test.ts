/**
 * What a manager loads by importing the package: `import('ctrlmetrics')` in a fresh process, resolved
 * through package.json's `exports` as an application resolves it, loads the runtime, the metrics and the client —
 * never the embedded authority, the scaffolder, the CLI, X.509 generation or client-node. Those are packages of
 * their own (`@ctrlmetrics/envtest`, `@ctrlmetrics/cli`) or load on first use; every other part of the runtime's
 * API (`ctrlmetrics/manager`, `/client`, …) resolves to its own entry. Checked on the built packages, resolved from
 * the workspace's node_modules as an application resolves them (`npm run build`; `npm test` builds first).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join, resolve } from 'node:path';
import { loadedModules, relativeTo, type LoadedModules } from '../helpers/loaded-modules.js';

const ROOT = resolve(import.meta.dirname, '../..');
const execFileAsync = promisify(execFile);
/** The runtime's build, repository-relative. */
const RT = 'packages/ctrlmetrics/dist/src/';
/** Files of the other two packages. */
const NOT_RUNTIME = /^packages\/(envtest|cli)\//;

/** Packages the main entry point may load at import (today: the filter's token cache). */
const ALLOWED_PACKAGES = ['lru-cache'];

function packageOf(rel: string): string {
  const parts = rel.split('/');
  return parts[1].startsWith('@') ? `${parts[1]}/${parts[2]}` : parts[1];
}

describe('import("ctrlmetrics") in a fresh process', () => {
  let loaded: LoadedModules;
  let files: string[];
  before(async () => {
    assert.ok(existsSync(join(ROOT, RT, 'index.js')), `${RT}index.js is missing: run \`npm run build\` first`);
    // a bare specifier, resolved from the workspace's node_modules (the package's link)
    loaded = await loadedModules('ctrlmetrics', [], ROOT);
    files = [...relativeTo(ROOT, loaded.esm), ...relativeTo(ROOT, loaded.cjs)];
  });

  test('loads the library from dist/ through the exports map', () => {
    assert.ok(files.includes(`${RT}index.js`), files.join('\n'));
    assert.ok(files.includes(`${RT}metrics/registry.js`), 'the global registry is loaded');
    assert.ok(
      files.includes(`${RT}manager/manager.js`) || files.some((f) => f.startsWith(`${RT}manager/`)),
      'the manager is loaded',
    );
  });

  test('nothing of the authority, the scaffolder, the CLI or the operations code', () => {
    assert.deepEqual(
      files.filter((f) => NOT_RUNTIME.test(f)),
      [],
    );
  });

  test('no node:v8 or node:perf_hooks: the process metrics start their monitors with the manager', () => {
    assert.deepEqual(
      loaded.esm.filter((u) => u === 'node:v8' || u === 'node:perf_hooks'),
      [],
    );
  });

  test('no package beyond the allowed ones (no client-node, X.509, yaml, jose or prom-client)', () => {
    const packages = [...new Set(files.filter((f) => f.startsWith('node_modules/')).map(packageOf))].sort();
    assert.deepEqual(packages, ALLOWED_PACKAGES, `packages loaded at import: ${packages.join(', ')}`);
  });
});

describe('subpath exports', () => {
  test('@ctrlmetrics/envtest is the authority itself, @ctrlmetrics/cli/scaffold the scaffolder', async () => {
    const authority = await loadedModules('@ctrlmetrics/envtest', [], ROOT);
    assert.ok(relativeTo(ROOT, authority.esm).includes('packages/envtest/dist/src/index.js'));
    const scaffold = await loadedModules('@ctrlmetrics/cli/scaffold', [], ROOT);
    assert.ok(relativeTo(ROOT, scaffold.esm).includes('packages/cli/dist/src/scaffold/index.js'));
  });

  test('every subpath of package.json resolves to its own entry and loads no authority, scaffolder or CLI', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'packages/ctrlmetrics/package.json'), 'utf8')) as {
      exports: Record<string, { import?: string }>;
    };
    const runtime = Object.entries(pkg.exports).filter(([sub, target]) => sub.startsWith('./') && target.import);
    assert.ok(runtime.length >= 14, `runtime subpaths: ${runtime.length}`);
    for (const [sub, target] of runtime) {
      const spec = `ctrlmetrics/${sub.slice(2)}`;
      const loaded = relativeTo(ROOT, (await loadedModules(spec, [], ROOT)).esm);
      assert.ok(loaded.includes(`packages/ctrlmetrics/${target.import!.slice(2)}`), `${spec} loads ${target.import}`);
      assert.deepEqual(
        loaded.filter((f) => NOT_RUNTIME.test(f)),
        [],
        spec,
      );
    }
  });
});

describe('what the other two packages load of the runtime', () => {
  // the manager, the controllers, the webhook server and the metrics server: the root entry's weight (about 6 MB of
  // a process), which the authority and the command line run without
  const HEAVY =
    /^packages\/ctrlmetrics\/dist\/src\/(manager|webhook|metrics\/server|metrics\/filters|controller\/(?!handlers\.js))/;

  test('@ctrlmetrics/envtest: none of the manager, controllers, webhooks or metrics server', async () => {
    const files = relativeTo(ROOT, (await loadedModules('@ctrlmetrics/envtest', [], ROOT)).esm);
    assert.ok(files.includes('packages/envtest/dist/src/index.js'));
    assert.deepEqual(
      files.filter((f) => HEAVY.test(f)),
      [],
    );
  });

  test("the ctrlmetrics command's entry: the same", async () => {
    const entry = join(ROOT, 'packages/cli/dist/src/cli/index.js');
    const files = relativeTo(ROOT, (await loadedModules(entry, [], ROOT)).esm);
    assert.ok(files.includes('packages/cli/dist/src/cli/index.js'));
    assert.deepEqual(
      files.filter((f) => HEAVY.test(f)),
      [],
    );
  });
});

describe('no import-time side effects', () => {
  const probe = (withImport: boolean) =>
    execFileAsync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `${withImport ? "await import('ctrlmetrics');" : ''}
const events = ['SIGTERM', 'SIGINT', 'SIGHUP', 'exit', 'beforeExit', 'uncaughtException', 'unhandledRejection', 'warning'];
process.stdout.write(JSON.stringify({ resources: process.getActiveResourcesInfo(), listeners: Object.fromEntries(events.map((e) => [e, process.listenerCount(e)])), globals: Object.keys(globalThis).sort() }));`,
      ],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' }, timeout: 30_000 },
    ).then(
      (r) => JSON.parse(r.stdout) as { resources: string[]; listeners: Record<string, number>; globals: string[] },
    );

  test('importing the package starts no timer, socket or handle, adds no process listener and no global', async () => {
    const [bare, imported] = await Promise.all([probe(false), probe(true)]);
    // not ours: Node opens the stderr stream when some builtins load (internal/util/colors), and the ESM loader's
    // last source file may still be closing; every other kind (Timeout, Immediate, TCP, worker…) must be absent
    const ours = (r: string[]) => r.filter((k) => !['PipeWrap', 'TTYWrap', 'CloseReq', 'FSReqCallback'].includes(k));
    assert.deepEqual(ours(imported.resources), ours(bare.resources));
    assert.deepEqual(imported.listeners, bare.listeners);
    assert.deepEqual(imported.globals, bare.globals);
  });
});

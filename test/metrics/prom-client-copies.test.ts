// Metrics created with another prom-client copy than ctrlmetrics' own (here a second install of 15.x in an
// application's node_modules) are collected once that copy is found from the application's directory; a copy
// that cannot be loaded is reported with its path, version and reason, never skipped silently.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  Registry,
  registerPromClientRegistry,
  registry as globalRegistry,
} from '../../packages/ctrlmetrics/src/metrics/registry.js';
import { includePromClientCopies } from '../../packages/ctrlmetrics/src/metrics/prom-client-copies.js';
import { ROOT } from '../helpers/process.js';
import { makeAppWithPromClientCopies } from '../helpers/prom-client-copy.js';

describe('prom-client copies of the application', () => {
  let dir: string;
  let app: string;
  let copyDir: string;

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'prom-copies-')));
    app = join(dir, 'app');
    mkdirSync(app);
    copyDir = makeAppWithPromClientCopies(app);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("includes the application's other copy of prom-client: its metrics are collected with ours", async () => {
    const pkg = JSON.parse(readFileSync(join(copyDir, 'package.json'), 'utf8')) as { main?: string; version: string };
    const theirs = (await import(
      pathToFileURL(join(copyDir, pkg.main ?? 'index.js')).href
    )) as typeof import('prom-client');
    const own = await import('prom-client');
    assert.notEqual(theirs.register, own.register, 'two copies, two default registries');
    new theirs.Counter({
      name: 'second_copy_jobs_total',
      help: 'Jobs counted with the application’s own prom-client.',
    }).inc(3);

    const reg = new Registry({ includePromClientDefault: true });
    const before = await (await reg.collect()).text('text');
    assert.doesNotMatch(before, /second_copy_jobs_total/, 'not seen until found');

    const copies = await includePromClientCopies({ from: [app], into: reg });
    const found = copies.find((c) => c.module === 'prom-client');
    assert.deepEqual(found, { module: 'prom-client', dir: copyDir, version: pkg.version, included: true });
    const text = await (await reg.collect()).text('text');
    assert.match(text, /^# TYPE second_copy_jobs_total counter$/m);
    assert.match(text, /^second_copy_jobs_total 3$/m);

    // found again (a second manager in the process): still once
    await includePromClientCopies({ from: [app], into: reg });
    assert.equal((await (await reg.collect()).text('text')).match(/^second_copy_jobs_total 3$/gm)?.length, 1);
  });

  it('reports a copy it cannot load with its path, version and why', async () => {
    const copies = await includePromClientCopies({ from: [app], into: new Registry() });
    const broken = copies.find((c) => c.module === '@prometheus-io/client');
    assert.ok(broken);
    assert.equal(broken.included, false);
    assert.equal(broken.version, '0.16.1');
    assert.equal(broken.dir, join(app, 'node_modules', '@prometheus-io', 'client'));
    assert.match(broken.reason ?? '', /this build needs Node\.js 22/);
  });

  it("finds nothing to add from a directory that resolves ctrlmetrics' own copy", async () => {
    const copies = await includePromClientCopies({ from: [ROOT], into: new Registry() });
    assert.deepEqual(
      copies.filter((c) => c.module === 'prom-client'),
      [],
    );
  });

  it('metrics.registerPromClientRegistry() includes a registry no resolution reaches in the global registry, once', async () => {
    const pkg = JSON.parse(readFileSync(join(copyDir, 'package.json'), 'utf8')) as { main?: string };
    const theirs = (await import(
      pathToFileURL(join(copyDir, pkg.main ?? 'index.js')).href
    )) as typeof import('prom-client');
    const nested = new theirs.Registry();
    new theirs.Gauge({
      name: 'nested_copy_queue_length',
      help: 'A gauge of a registry nested in another package.',
      registers: [nested],
    }).set(7);
    registerPromClientRegistry(nested, 'a nested registry');
    registerPromClientRegistry(nested);
    const text = await (await globalRegistry.collect()).text('text');
    assert.equal(text.match(/^nested_copy_queue_length 7$/gm)?.length, 1);
    assert.throws(() => registerPromClientRegistry({} as never), /expected a prom-client Registry/);
  });
});

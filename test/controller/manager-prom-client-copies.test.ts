// The manager and the application's own prom-client copy: started from an application directory that resolves a
// second copy of prom-client, the manager serves that copy's metrics on /metrics and says so once; a copy of
// @prometheus-io/client that cannot load is one warning naming its path, version and why.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Manager, filters } from '../../packages/ctrlmetrics/src/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/exports/log.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { makeAppWithPromClientCopies } from '../helpers/prom-client-copy.js';
import { httpsGet, parseExposition, value } from './helpers/exposition.js';

let cluster: TestCluster;
let app: string;
const cwd = process.cwd();

before(async () => {
  app = realpathSync(mkdtempSync(join(tmpdir(), 'mgr-prom-copies-')));
  makeAppWithPromClientCopies(app);
  cluster = await startTestCluster();
});
after(async () => {
  process.chdir(cwd);
  await cluster?.stop();
  rmSync(app, { recursive: true, force: true });
});

test("the application's other prom-client copy is served and reported once; an unloadable copy is a warning naming it", async () => {
  const theirs = (await import(
    pathToFileURL(join(app, 'node_modules', 'prom-client', 'index.js')).href
  )) as typeof import('prom-client');
  new theirs.Counter({
    name: 'app_copy_jobs_total',
    help: 'Jobs counted with the application’s prom-client copy.',
  }).inc(5);
  const reader = await cluster.readerToken();
  const lines: string[] = [];
  const prevSink = setLogSink((l) => lines.push(l));
  process.chdir(app); // the application's directory: where its own imports resolve from
  const mgr = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    healthProbeBindAddress: '127.0.0.1:0',
    metrics: { bindAddress: '127.0.0.1:0', filterProvider: filters.withAuthenticationAndAuthorization },
  });
  const stop = new AbortController();
  const running = mgr.start(stop.signal);
  try {
    await Promise.race([mgr.ready(), running]);
    const r = await httpsGet(`${mgr.metricsServer!.url}/metrics`, reader);
    assert.equal(r.status, 200);
    assert.equal(value(parseExposition(r.body), 'app_copy_jobs_total', {}), 5);
    const included = lines.filter((l) => l.includes('including the default registry of another prom-client copy'));
    assert.equal(included.length, 1, lines.join('\n'));
    assert.match(
      included[0],
      new RegExp(`"dir":"${join(app, 'node_modules', 'prom-client').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}"`),
    );
    const warned = lines.filter((l) => l.includes('will not be served'));
    assert.equal(warned.length, 1, lines.join('\n'));
    assert.match(warned[0], /"level":"warn"/);
    assert.match(
      warned[0],
      /metrics of @prometheus-io\/client 0\.16\.1 at .*node_modules\/@prometheus-io\/client will not be served: this build needs Node\.js 22; pass its register to metrics\.registerPromClientRegistry\(\)/,
    );
  } finally {
    stop.abort();
    await running.catch(() => undefined);
    setLogSink(prevSink);
    process.chdir(cwd);
  }
});

/**
 * `node:http2` is loaded only by a server with `enableHTTP2` (it adds ≈1.8 MB of RSS to every process
 * that loads it). Checked in a fresh process from Node's own list of the built-in modules it has loaded: a server
 * with the default (HTTP/1.1 only) answers a scrape without loading it; the same process then starts one with
 * HTTP/2 and the list has it, which shows the check can see it. Node 24's own `node:http` loads `node:http2`, so
 * there the first check can only show that the server adds nothing to what Node loads by itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const run = promisify(execFile);
const SERVER = pathToFileURL(
  resolve(import.meta.dirname, '../../packages/ctrlmetrics/src/metrics/server/index.ts'),
).href;

const CHILD = `
import 'node:http';
import https from 'node:https';
const hasHttp2 = () => process.moduleLoadList.includes('NativeModule http2');
const loadedByNode = hasHttp2();
const { createMetricsServer } = await import(process.env.SERVER_MODULE);
const scrape = (url) => new Promise((ok, fail) => {
  https.get(url + '/metrics', { rejectUnauthorized: false }, (res) => { res.resume(); res.on('end', () => ok(res.statusCode)); }).on('error', fail);
});
const report = { loadedByNode };
for (const enableHTTP2 of [false, true]) {
  const s = createMetricsServer({ bindAddress: '127.0.0.1:0', shutdownTimeoutMs: 2000, enableHTTP2 });
  await s.start();
  const status = await scrape(s.url);
  report[enableHTTP2 ? 'h2' : 'h1'] = { status, http2Loaded: hasHttp2() };
  await s.stop();
}
process.stdout.write(JSON.stringify(report));
`;

test('a server without enableHTTP2 never loads node:http2; one with it does', async () => {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=ctrlmetrics-source', '--import', 'tsx', '--input-type=module', '-e', CHILD],
    {
      env: { ...process.env, NODE_OPTIONS: '', SERVER_MODULE: SERVER },
      timeout: 60_000,
    },
  );
  const report = JSON.parse(stdout) as { loadedByNode: boolean } & Record<
    'h1' | 'h2',
    { status: number; http2Loaded: boolean }
  >;
  assert.deepEqual(report, {
    loadedByNode: report.loadedByNode,
    h1: { status: 200, http2Loaded: report.loadedByNode },
    h2: { status: 200, http2Loaded: true },
  });
  // Node 20 loads it only on request: there the check above is the one that matters
  if (process.versions.node.startsWith('20.')) assert.equal(report.loadedByNode, false);
});

/**
 * `node:http2` is loaded only by a server with `enableHTTP2` (issue 32: it adds ≈1.8 MB of RSS to every process
 * that loads it). Checked in a fresh process from Node's own list of the built-in modules it has loaded: a server
 * with the default (HTTP/1.1 only) answers a scrape without loading it; the same process then starts one with
 * HTTP/2 and the list has it, which shows the check can see it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const run = promisify(execFile);
const SERVER = pathToFileURL(resolve(import.meta.dirname, '../../src/metrics/server/index.ts')).href;

const CHILD = `
import https from 'node:https';
const { createMetricsServer } = await import(process.env.SERVER_MODULE);
const hasHttp2 = () => process.moduleLoadList.includes('NativeModule http2');
const scrape = (url) => new Promise((ok, fail) => {
  https.get(url + '/metrics', { rejectUnauthorized: false }, (res) => { res.resume(); res.on('end', () => ok(res.statusCode)); }).on('error', fail);
});
const report = {};
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
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    env: { ...process.env, NODE_OPTIONS: '', SERVER_MODULE: SERVER },
    timeout: 60_000,
  });
  const report = JSON.parse(stdout) as Record<'h1' | 'h2', { status: number; http2Loaded: boolean }>;
  assert.deepEqual(report, { h1: { status: 200, http2Loaded: false }, h2: { status: 200, http2Loaded: true } });
});

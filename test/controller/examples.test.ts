/** The runnable custom-metrics example, run as a user would, prints both of its metrics with the recorded values. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { parseExposition, value } from './helpers/exposition.js';

const ROOT = new URL('../../', import.meta.url).pathname;

test('examples/custom-metrics.ts: a mustRegister-ed counter and a plain prom-client counter are both exposed', { timeout: 60_000 }, async () => {
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', 'examples/custom-metrics.ts'], { cwd: ROOT, timeout: 45_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
  const f = parseExposition(out);
  assert.equal(f.get('example_goobers_total')?.type, 'counter');
  assert.equal(f.get('example_goobers_total')?.help, 'Number of goobers processed');
  assert.equal(value(f, 'example_goobers_total', { kind: 'configmap' }), 1);
  assert.equal(f.get('example_widgets_total')?.type, 'counter');
  assert.equal(value(f, 'example_widgets_total', {}), 2);
});

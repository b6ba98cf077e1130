/**
 * prom-client is not loaded by ctrlmetrics itself (≈11 MB of RSS a manager that never uses it would
 * carry); the global registry still serves prom-client's default registry as soon as the application loads it,
 * whatever the import order. Run in a child process for a fresh module cache.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

test('prom-client metrics created after importing ctrlmetrics are served; ctrlmetrics alone does not load prom-client', async () => {
  const fixture = join(import.meta.dirname, 'fixtures', 'prom-client-late.ts');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--conditions=ctrlmetrics-source', '--import', 'tsx', fixture],
    { timeout: 60_000 },
  );
  const r = JSON.parse(stdout) as {
    before: { loaded: boolean; text: string };
    after: { loaded: boolean; text: string };
  };
  assert.equal(r.before.loaded, false, 'importing and collecting ctrlmetrics does not load prom-client');
  assert.doesNotMatch(r.before.text, /late_prom_jobs/);
  assert.match(r.before.text, /^process_cpu_seconds_total /m, 'the built-in families are served without prom-client');
  assert.equal(r.after.loaded, true);
  assert.match(r.after.text, /^# TYPE late_prom_jobs_total counter\nlate_prom_jobs_total 3$/m);
});

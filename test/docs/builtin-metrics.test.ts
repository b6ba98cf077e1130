/**
 * docs/reference/metrics.md lists the built-in families: every family the library registers when it is imported
 * has a row (`nodejs_*` stands for the Node.js runtime's), and every family a row names is one the library
 * registers — at import, or later (the filter's when a filter is made) as a `name: '…'` in src/.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { metrics } from '../../packages/ctrlmetrics/src/index.js';
import '../../packages/ctrlmetrics/src/webhook/index.js';
import { ROOT } from './markdown.js';

const page = readFileSync(join(ROOT, 'docs/reference/metrics.md'), 'utf8');
/** The backticked names of the first column of the table. */
const listed = page
  .split('\n')
  .filter((l) => l.startsWith('| `'))
  .flatMap((l) => [...l.split('|')[1].matchAll(/`([a-z_*]+)`/g)].map((m) => m[1]));

const covered = (family: string) =>
  listed.some((n) => (n.endsWith('*') ? family.startsWith(n.slice(0, -1)) : n === family));

function sourceText(dir: string): string {
  return readdirSync(dir)
    .map((n) => join(dir, n))
    .map((p) => (statSync(p).isDirectory() ? sourceText(p) : p.endsWith('.ts') ? readFileSync(p, 'utf8') : ''))
    .join('\n');
}

test('every family registered at import has a row', () => {
  const families = metrics.registry.familyNames();
  assert.ok(
    families.includes('controller_runtime_reconcile_total') &&
      families.includes('controller_runtime_webhook_requests_total'),
    families.join(' '),
  );
  assert.deepEqual(
    families.filter((f) => !covered(f)),
    [],
  );
});

test('every family a row names is one the library registers', () => {
  const registered = new Set(metrics.registry.familyNames());
  const src = sourceText(join(ROOT, 'packages/ctrlmetrics/src'));
  const unknown = listed.filter((n) => !n.endsWith('*') && !registered.has(n) && !src.includes(`name: '${n}'`));
  assert.ok(listed.length > 30, `rows read (${listed.length})`);
  assert.deepEqual(unknown, []);
});

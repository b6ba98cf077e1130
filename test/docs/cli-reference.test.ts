/** docs/reference/cli.md is what the commands' own help prints today (regenerate it with `npm run docs:cli`). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCliReference } from '../../packages/cli/src/cli/reference.js';
import { ROOT } from './markdown.js';

test("the CLI reference is the commands' current help", () => {
  const page = readFileSync(join(ROOT, 'docs/reference/cli.md'), 'utf8');
  assert.ok(page === renderCliReference(), 'docs/reference/cli.md is out of date: run npm run docs:cli');
  for (const name of ['demo', 'create api', 'generate crd', 'scrape', 'doctor'])
    assert.ok(page.includes(`## \`ctrlmetrics ${name}\``), name);
});

/**
 * Every relative link in README.md and docs/ reaches a file of the repository, and every anchor (`page.md#x`,
 * `#x`) a heading of that page as GitHub renders it — so moving or renaming a section breaks the suite, not the
 * reader. Links to other sites are not fetched (the suite runs offline).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT, markdownPages, readPage } from './markdown.js';

test('every relative link and anchor of the documentation resolves', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const path of markdownPages()) {
    for (const { target, line } of readPage(path).links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      checked++;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const resolved = file === '' ? path : normalize(join(dirname(path), decodeURIComponent(file)));
      if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${path}:${line}: ${target} (no file ${resolved})`);
        continue;
      }
      if (anchor !== undefined) {
        if (!resolved.endsWith('.md'))
          broken.push(`${path}:${line}: ${target} (an anchor into a file that is not a page)`);
        else if (!readPage(resolved).anchors.has(anchor))
          broken.push(`${path}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  assert.ok(checked > 50, `links were found (${checked})`);
  assert.deepEqual(broken, []);
});

test('the link checker finds a broken anchor (it reads headings as GitHub does)', () => {
  const readme = readPage('README.md');
  assert.ok(readme.anchors.has('quick-start'), 'a plain heading');
  const guide = readPage('docs/guides/project.md');
  // backticks, dots and parentheses dropped, spaces and dashes kept
  assert.ok(
    guide.anchors.has('another-version-of-a-kind-create-api-then-create-webhook---conversion'),
    [...guide.anchors].join(' '),
  );
  assert.ok(!readme.anchors.has('no-such-heading'));
});

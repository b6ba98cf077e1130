/**
 * docs/reference/manager-options.md names every field of `ManagerOptions` and of its `cache` block (inherited ones
 * included), and nothing else: the fields are read from the source with the TypeScript checker, the page's table
 * rows from its Markdown.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT } from './markdown.js';

function fieldsOf(typeName: string): string[] {
  const file = join(ROOT, 'packages/ctrlmetrics/src/manager/manager.ts');
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const decl = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === typeName,
  );
  assert.ok(decl, `${typeName} is declared in src/manager/manager.ts`);
  return checker
    .getPropertiesOfType(checker.getTypeAtLocation(decl.name))
    .map((p) => p.name)
    .sort();
}

/** The first cell of each row of the table whose header starts with `header`. */
function firstColumn(page: string, header: string): string[] {
  const lines = page.split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  assert.ok(start >= 0, `a table headed ${header}`);
  const rows: string[] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.split('|')[1].trim().replace(/^`|`$/g, ''));
  }
  return rows.sort();
}

const page = readFileSync(join(ROOT, 'docs/reference/manager-options.md'), 'utf8');

test('the manager options table has one row per field of ManagerOptions', () => {
  assert.deepEqual(firstColumn(page, '| Option |'), fieldsOf('ManagerOptions'));
});

test('the cache table has one row per field of ManagerCacheOptions', () => {
  const fields = fieldsOf('ManagerCacheOptions');
  assert.ok(fields.includes('byObject') && fields.includes('unsafeDisableDeepCopy'), 'inherited fields are read too');
  assert.deepEqual(firstColumn(page, '| `cache.` |'), fields);
});

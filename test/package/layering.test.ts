/**
 * The package floors of `src/` (docs/design.md): each package imports only the packages below it, so a reader
 * knows from a file's path what it may touch. Imports are read with the TypeScript parser (import and export
 * declarations and dynamic imports of literal paths), not text search, so code inside template strings — the
 * scaffold's generated files — does not count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SRC = resolve(import.meta.dirname, '../../src');

/** What each package of `src/` may import besides itself. */
const ALLOWED: Record<string, string[]> = {
  util: [],
  api: [],
  // util: the errors' base class
  generate: ['util'],
  certwatcher: ['util'],
  kube: ['util'],
  // the server core of the metrics, webhook and probe servers
  httpserver: ['util', 'certwatcher'],
  metrics: ['util', 'kube', 'certwatcher', 'httpserver'],
  controller: ['util', 'kube', 'metrics'],
  webhook: ['util', 'kube', 'certwatcher', 'httpserver', 'metrics', 'controller'],
  manager: ['util', 'kube', 'certwatcher', 'httpserver', 'metrics', 'controller', 'webhook'],
  // the public entries of the package's subpaths (ctrlmetrics/manager, …): the runtime's floors, nothing above
  exports: ['util', 'api', 'kube', 'certwatcher', 'httpserver', 'metrics', 'controller', 'webhook', 'manager'],
  authority: ['util', 'kube', 'certwatcher', 'httpserver'],
  ops: ['util', 'kube'],
  // kube: the table of Kubernetes' built-in kinds, which `create api` scaffolds controllers for
  scaffold: ['util', 'api', 'generate', 'kube'],
  cli: [
    'util',
    'api',
    'generate',
    'certwatcher',
    'httpserver',
    'kube',
    'metrics',
    'controller',
    'webhook',
    'manager',
    'authority',
    'ops',
    'scaffold',
    'index.ts',
    '../examples',
  ],
};

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The package (top-level directory of `src/`, or a file there) a path inside `src/` belongs to. */
const packageOf = (path: string) => relative(SRC, path).split(/[\\/]/)[0];

test('every package of src/ imports only the packages below it', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const file of sourceFiles(SRC)) {
    const from = packageOf(file);
    if (!(from in ALLOWED)) continue;
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      // outside src/: only the CLI's demo runs the example operator of examples/
      const to = relative(SRC, target).startsWith('..')
        ? `../${relative(join(SRC, '..'), target).split(/[\\/]/)[0]}`
        : packageOf(target);
      checked++;
      if (to !== from && !ALLOWED[from].includes(to.replace(/\.js$/, '.ts')))
        violations.push(`${relative(SRC, file)} (${from}) imports ${spec} (${to})`);
    }
  }
  assert.ok(checked > 200, `imports were read (${checked})`);
  assert.deepEqual(violations, []);
});

test('every package of src/ has its floor listed', () => {
  const packages = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());
  assert.deepEqual(
    packages.filter((p) => !(p in ALLOWED)),
    [],
    'a new package needs its place in ALLOWED',
  );
});

/**
 * The floors of the three packages (docs/design.md). Inside the runtime (packages/ctrlmetrics/src) each folder —
 * controller-runtime's packages — imports only the folders below it, so a reader knows from a file's path what it
 * may touch; the runtime imports neither of the other two packages. The authority (packages/envtest) and the CLI
 * (packages/cli) reach the runtime only by its package name — its public subpaths and `ctrlmetrics/internal` —
 * never by a relative path into its sources, which a published package could not follow; the CLI reaches the
 * authority by its name too. Imports are read with the TypeScript parser (import and export declarations and
 * dynamic imports of literal paths), not text search, so code inside template strings — the scaffold's generated
 * files — does not count. No package's modules import each other in a loop, types included: a loop makes the order
 * modules are evaluated in matter (a value read before its module ran is undefined) and the files impossible to read
 * one at a time; shared types live in leaf modules (envtest's types.ts, the metrics' exposition-types.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const PACKAGES = resolve(import.meta.dirname, '../../packages');
const SRC = join(PACKAGES, 'ctrlmetrics/src');

/** What each folder of the runtime's `src/` may import besides itself. */
const ALLOWED: Record<string, string[]> = {
  util: [],
  api: [],
  // util: the errors' base class
  certwatcher: ['util'],
  kube: ['util'],
  // the server core of the metrics, webhook and probe servers
  httpserver: ['util', 'certwatcher'],
  metrics: ['util', 'kube', 'certwatcher', 'httpserver'],
  controller: ['util', 'kube', 'metrics'],
  webhook: ['util', 'kube', 'certwatcher', 'httpserver', 'metrics', 'controller'],
  manager: ['util', 'kube', 'certwatcher', 'httpserver', 'metrics', 'controller', 'webhook'],
  // the sharder: a manager's runnables (its controllers and its webhook)
  sharding: ['util', 'kube', 'certwatcher', 'httpserver', 'metrics', 'controller', 'webhook', 'manager'],
  // the public entries of the package's subpaths (ctrlmetrics/manager, …) and the internal one of the other two
  // packages: the runtime's floors, nothing above
  exports: [
    'util',
    'api',
    'kube',
    'certwatcher',
    'httpserver',
    'metrics',
    'controller',
    'webhook',
    'manager',
    'sharding',
  ],
};

/** What each folder of the CLI's `src/` may import besides itself (relative imports). */
const CLI_ALLOWED: Record<string, string[]> = {
  generate: [],
  ops: [],
  scaffold: ['generate'],
  // ../examples: the demo runs the example operator
  cli: ['generate', 'ops', 'scaffold', '../examples'],
};

/** Bare specifiers each package may import of the other two (any subpath of the runtime: `ctrlmetrics/…`). */
const PACKAGE_IMPORTS: Record<string, RegExp> = {
  ctrlmetrics: /^(?!ctrlmetrics(\/|$)|@ctrlmetrics\/)/,
  envtest: /^(?!@ctrlmetrics\/)/,
  cli: /^(?!@ctrlmetrics\/(?!envtest$))/,
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

/** The folder (top-level directory of `src`, or a file there) a path inside `src` belongs to. */
const folderOf = (src: string, path: string) => relative(src, path).split(/[\\/]/)[0];

test("every folder of the runtime's src/ imports only the folders below it", () => {
  const violations: string[] = [];
  let checked = 0;
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(SRC, file);
    if (!(from in ALLOWED)) continue;
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      const to = relative(SRC, target).startsWith('..') ? relative(SRC, target) : folderOf(SRC, target);
      checked++;
      if (to !== from && !ALLOWED[from].includes(to.replace(/\.js$/, '.ts')))
        violations.push(`${relative(SRC, file)} (${from}) imports ${spec} (${to})`);
    }
  }
  assert.ok(checked > 200, `imports were read (${checked})`);
  assert.deepEqual(violations, []);
});

test("every folder of the CLI's src/ imports only the folders below it", () => {
  const src = join(PACKAGES, 'cli/src');
  const violations: string[] = [];
  for (const file of sourceFiles(src)) {
    const from = folderOf(src, file);
    for (const spec of importsOf(file)) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      const to = relative(src, target).startsWith('..')
        ? `../${relative(join(src, '..'), target).split(/[\\/]/)[0]}`
        : folderOf(src, target);
      if (to !== from && !(CLI_ALLOWED[from] ?? []).includes(to))
        violations.push(`${relative(src, file)} (${from}) imports ${spec} (${to})`);
    }
  }
  assert.deepEqual(violations, []);
});

test('a package reaches another only by its name, and only the packages below it', () => {
  const violations: string[] = [];
  let named = 0;
  for (const pkg of Object.keys(PACKAGE_IMPORTS)) {
    const root = join(PACKAGES, pkg);
    for (const dir of ['src', 'examples', 'cli.ts'].map((d) => join(root, d))) {
      let files: string[];
      try {
        files = statSync(dir).isDirectory() ? [...sourceFiles(dir)] : [dir];
      } catch {
        continue;
      }
      for (const file of files) {
        for (const spec of importsOf(file)) {
          if (spec.startsWith('.')) {
            if (relative(root, resolve(dirname(file), spec)).startsWith('..'))
              violations.push(`${relative(PACKAGES, file)} imports ${spec}, outside its package`);
          } else {
            if (/^(@ctrlmetrics\/|ctrlmetrics(\/|$))/.test(spec)) named++;
            if (!PACKAGE_IMPORTS[pkg].test(spec)) violations.push(`${relative(PACKAGES, file)} imports ${spec}`);
          }
        }
      }
    }
  }
  assert.ok(named > 50, `imports by package name were read (${named})`);
  assert.deepEqual(violations, []);
});

test("every folder of the runtime's src/ has its floor listed", () => {
  const folders = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());
  assert.deepEqual(
    folders.filter((p) => !(p in ALLOWED)),
    [],
    'a new folder needs its place in ALLOWED',
  );
});

/** A module's relative imports (of types too: a loop of types is as hard to read as one of values), as files. */
function relativeImportsOf(file: string): string[] {
  return importsOf(file)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
}

/** The strongly connected groups (more than one module) of an import graph: its loops. */
function loops(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test("no package's modules import each other in a loop", () => {
  const found: string[] = [];
  let modules = 0;
  for (const pkg of Object.keys(PACKAGE_IMPORTS)) {
    const src = join(PACKAGES, pkg, 'src');
    const graph = new Map<string, string[]>();
    for (const file of sourceFiles(src)) graph.set(file, relativeImportsOf(file));
    modules += graph.size;
    for (const group of loops(graph)) found.push(`${pkg}: ${group.map((f) => relative(src, f)).join(', ')}`);
  }
  assert.ok(modules > 250, `modules were read (${modules})`);
  assert.deepEqual(found, []);
});

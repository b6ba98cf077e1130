/**
 * Every fenced block of README.md and docs/ is checked (test/docs/snippets.ts says how): a block that shows a
 * file is that file, TypeScript compiles under `strict` against the library, shell commands name real commands
 * and flags, a map of the source tree names what exists, the `scrape --watch` screen is the renderer's, YAML and
 * JSON parse. A block with no way to check it fails the suite. docs/reference/cli.md is
 * generated from the commands and compared as a whole (cli-reference.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { parse as parseYaml } from 'yaml';
import { buildProgram } from '../../packages/cli/src/cli/index.js';
import { ROOT, markdownPages, readPage, type Fence } from './markdown.js';
import { commandLines, fileSnippet, invocationProblems, shellProblems } from './snippets.js';
import { renderProject } from '../../packages/cli/src/scaffold/index.js';
import { docWatchScreen } from './watch-screen.js';
import { SECOND_NODE_SKIP_COMPILER } from '../helpers/second-node.js';

const GENERATED = new Set(['docs/reference/cli.md']);
const fences = markdownPages()
  .filter((p) => !GENERATED.has(p))
  .flatMap((path) => readPage(path).fences.map((f) => ({ ...f, where: `${path}:${f.line}` })));
type Located = Fence & { where: string };

test('every block says how it is checked', () => {
  const unchecked = fences.filter((f) => {
    if (f.marker) return !/^(file |typecheck( in \S+)?$|layout$|watch-screen$)/.test(f.marker);
    return !['sh', 'indented', 'yaml', 'json'].includes(f.lang); // indented blocks on these pages are commands
  });
  assert.deepEqual(
    unchecked.map((f) => `${f.where} (${f.lang || 'no language'}${f.marker ? `, marker "${f.marker}"` : ''})`),
    [],
  );
});

test('a block that shows a file is that file', () => {
  const blocks = fences.filter((f) => f.marker?.startsWith('file '));
  assert.ok(blocks.length >= 4, `file blocks found (${blocks.length})`);
  for (const f of blocks) assert.equal(f.text, fileSnippet(f.marker!), `${f.where}: differs from ${f.marker}`);
});

test('TypeScript blocks compile under strict against the library', { skip: SECOND_NODE_SKIP_COMPILER }, () => {
  const blocks = fences.filter((f) => f.marker?.startsWith('typecheck'));
  assert.ok(blocks.length >= 3, `typecheck blocks found (${blocks.length})`);
  // inside node_modules, so that @types/node and the library's dependencies resolve as from the repository; a
  // block that imports the example's modules (`typecheck in examples/x`) is written beside them, and removed
  const scratch = join(ROOT, 'node_modules/.cache/ctrlmetrics-doc-snippets', String(process.pid));
  mkdirSync(scratch, { recursive: true });
  const byFile = new Map<string, Located>();
  try {
    blocks.forEach((f, i) => {
      const dir = f.marker!.match(/^typecheck in (\S+)$/)?.[1];
      const file = dir ? join(ROOT, dir, `.doc-snippet-${process.pid}-${i}.ts`) : join(scratch, `block${i}.ts`);
      writeFileSync(file, f.text);
      byFile.set(file, f);
    });
    const program = ts.createProgram([...byFile.keys()], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      verbatimModuleSyntax: true,
      paths: {
        ctrlmetrics: [join(ROOT, 'packages/ctrlmetrics/src/index.ts')],
        'ctrlmetrics/*': [join(ROOT, 'packages/ctrlmetrics/src/exports/*.ts')],
        '@ctrlmetrics/envtest': [join(ROOT, 'packages/envtest/src/index.ts')],
        '@ctrlmetrics/cli/scaffold': [join(ROOT, 'packages/cli/src/scaffold/index.ts')],
      },
      allowImportingTsExtensions: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && byFile.has(d.file.fileName))
      .map((d) => {
        const f = byFile.get(d.file!.fileName)!;
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${f.where.replace(/:\d+$/, '')}:${f.line + 1 + line}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    assert.deepEqual(problems, []);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    for (const file of byFile.keys()) rmSync(file, { force: true });
  }
});

test('shell blocks name commands, flags, npm scripts and files that exist', () => {
  const program = buildProgram();
  const scripts = npmScripts();
  let invocations = 0;
  const problems: string[] = [];
  for (const f of fences.filter((x) => x.lang === 'sh' || x.lang === 'indented')) {
    for (const words of commandLines(f.text)) {
      invocations++;
      problems.push(...invocationProblems(program, words).map((p) => `${f.where}: ${p}`));
    }
    problems.push(...shellProblems(f.text, scripts, (p) => existsSync(join(ROOT, p))).map((p) => `${f.where}: ${p}`));
  }
  assert.ok(invocations > 30, `ctrlmetrics invocations found (${invocations})`);
  assert.deepEqual(problems, []);
});

/** The npm scripts of this repository and of a project `ctrlmetrics init` generates (the tutorial runs those). */
function npmScripts(): Set<string> {
  const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const generated = JSON.parse(
    renderProject({ projectName: 'docs-check', domain: 'example.com', ctrlmetricsVersion: '*' })['package.json'],
  ) as { scripts: Record<string, string> };
  return new Set([...Object.keys(own.scripts), ...Object.keys(generated.scripts)]);
}

test('the shell check finds a flag a command does not have', () => {
  const program = buildProgram();
  assert.deepEqual(invocationProblems(program, ['grant', '--serviceaccount', 'a:b']), []);
  assert.deepEqual(invocationProblems(program, ['grant', '--service-account', 'a:b']), [
    'ctrlmetrics grant has no flag --service-account',
  ]);
  assert.deepEqual(invocationProblems(program, ['grunt']), ['no command grunt']);
  assert.deepEqual(commandLines('TOKEN=$(ctrlmetrics token -n ns sa) && ctrlmetrics scrape URL --watch # --nope'), [
    ['token', '-n', 'ns', 'sa'],
    ['scrape', 'URL', '--watch'],
  ]);
  const exists = (p: string) => p === 'bench/run.ts' || p === 'examples/quickstart.ts';
  assert.deepEqual(
    shellProblems(
      'npm run bench -- --quick && node --import tsx bench/run.ts\nnode dist/examples/quickstart.js',
      new Set(['bench']),
      exists,
    ),
    [],
  );
  assert.deepEqual(shellProblems('npm run bnech\nnode bench/gone.ts', new Set(['bench']), exists), [
    'no npm script bnech',
    'no file bench/gone.ts',
  ]);
});

test('a map of the source tree names directories that exist, every package and every folder of their src/', () => {
  const blocks = fences.filter((f) => f.marker === 'layout');
  assert.ok(blocks.length >= 1, 'a layout block');
  const folders = (src: string) =>
    readdirSync(join(ROOT, src), { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name !== 'data')
      .map((d) => `${src}/${d.name}`);
  const packages = [
    'packages/ctrlmetrics',
    'packages/envtest/src',
    'packages/cli',
    ...folders('packages/ctrlmetrics/src'),
    ...folders('packages/cli/src'),
  ];
  for (const f of blocks) {
    const named = f.text
      .split('\n')
      .flatMap((l) => l.split(/\s{2,}/)[0].split(' '))
      .filter(Boolean)
      .map((p) => p.replace(/\/$/, ''));
    assert.deepEqual(
      named.filter((p) => !existsSync(join(ROOT, p))),
      [],
      `${f.where}: paths that do not exist`,
    );
    assert.deepEqual(
      packages.filter((p) => !named.includes(p)),
      [],
      `${f.where}: packages of src/ left out`,
    );
  }
});

test('the scrape --watch screen is what the renderer draws', () => {
  const blocks = fences.filter((f) => f.marker === 'watch-screen');
  assert.equal(blocks.length, 1);
  assert.equal(blocks[0].text, docWatchScreen(), `${blocks[0].where}: regenerate it from test/docs/watch-screen.ts`);
});

test('YAML and JSON blocks parse', () => {
  for (const f of fences.filter((x) => x.lang === 'yaml' || x.lang === 'json')) {
    assert.doesNotThrow(() => (f.lang === 'json' ? JSON.parse(f.text) : parseYaml(f.text)), f.where);
  }
});

/**
 * How each fenced block of the documentation is checked, from the comment right above it
 * (`<!-- check: … -->`) or its language:
 * - `file PATH [from "A"] [to "B"]`: the block is that file (or the part from the line holding A up to the line
 *   holding B), imports spelled as a user writes them (`'ctrlmetrics'`, `'./api.js'`): the file runs in a test,
 *   so the block does too;
 * - `typecheck`: a TypeScript module on its own, compiled with `strict` against the library's sources;
 * - `sh`, and indented blocks (commands on these pages): every `ctrlmetrics …` command in it (also
 *   `node dist/cli.js …`, `npm start -- …`) names a command that exists and only flags that command has, every
 *   `npm run` script exists (here or in a generated project), every file of the repository it names exists;
 * - `yaml` / `json`: parses;
 * - `layout`: a map of the source tree — the paths it names exist, and it names every package of `src/`;
 * - `watch-screen`: the `scrape --watch` screen, drawn by the renderer from test/docs/watch-screen.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { ROOT } from './markdown.js';

/** Import specifiers of the repository's files, as a user of the package writes them. */
export function asUserWrites(text: string): string {
  return text
    .replace(/'(\.\.\/)+packages\/ctrlmetrics\/src\/index\.js'/g, "'ctrlmetrics'")
    .replace(/'(\.\.\/)+packages\/ctrlmetrics\/src\/exports\/([a-z/]+)\.js'/g, "'ctrlmetrics/$2'")
    .replace(/'(\.\.\/)+packages\/envtest\/src\/index\.js'/g, "'@ctrlmetrics/envtest'")
    .replace(/'(\.\.\/)+packages\/cli\/src\/scaffold\/index\.js'/g, "'@ctrlmetrics/cli/scaffold'")
    .replace(/'(\.\.\/)+examples\/[a-z-]+\/([a-z-]+\.js)'/g, "'./$2'");
}

/** The text a `file …` marker stands for. */
export function fileSnippet(marker: string): string {
  const m = marker.match(/^file\s+(\S+)(?:\s+from\s+"([^"]*)")?(?:\s+to\s+"([^"]*)")?$/);
  if (!m) throw new Error(`malformed marker: file PATH [from "A"] [to "B"]: ${marker}`);
  const [, path, from, to] = m;
  let text = readFileSync(join(ROOT, path), 'utf8');
  if (from !== undefined) {
    const at = text.indexOf(from);
    if (at < 0) throw new Error(`${path} has no "${from}"`);
    text = text.slice(text.lastIndexOf('\n', at) + 1);
  }
  if (to !== undefined) {
    const at = text.indexOf(to);
    if (at < 0) throw new Error(`${path} has no "${to}"`);
    text = text.slice(0, text.lastIndexOf('\n', at) + 1).trimEnd() + '\n';
  }
  return asUserWrites(text);
}

/** The `ctrlmetrics` invocations of a shell block: each with its line. */
export function commandLines(block: string): string[][] {
  const found: string[][] = [];
  const joined = block.replace(/\\\n/g, ' ').replace(/\n\s+(?=\[--)/g, ' '); // continuation lines of a synopsis
  for (const raw of joined.split('\n')) {
    const subs: string[] = [];
    // a command substitution is a command of its own: `--token "$(ctrlmetrics token …)"`
    const line = raw
      .replace(/(^|\s)#.*$/, '')
      .replace(/\$\(([^)]*)\)/g, (_m, inner: string) => (subs.push(inner), 'VALUE'));
    for (const sub of subs) found.push(...commandLines(sub));
    for (const m of line.matchAll(/(?:^|[\s($"])(ctrlmetrics|node dist\/cli\.js|npm start --)(?=\s|$)/g)) {
      const rest = line.slice(m.index + m[0].length);
      const segment = rest.split(/&&|\)|;|\s\|\s|`/)[0];
      const words = segment.trim().split(/\s+/).filter(Boolean);
      found.push(m[1] === 'npm start --' ? ['demo', ...words] : words);
    }
  }
  return found;
}

/** What is wrong with one invocation (`words` after `ctrlmetrics`), against the program's own commands. */
export function invocationProblems(program: Command, words: string[]): string[] {
  let cmd = program;
  let i = 0;
  while (i < words.length) {
    const sub = cmd.commands.find((c) => c.name() === words[i]);
    if (!sub) break;
    cmd = sub;
    i++;
  }
  if (cmd === program) return words.length && !words[0].startsWith('-') ? [`no command ${words[0]}`] : [];
  const longs = new Set(
    [...cmd.options, ...program.options].flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)),
  );
  longs.add('--help').add('-h');
  const problems: string[] = [];
  for (const w of words.slice(i)) {
    for (const f of w.match(/(?<=^|[[|(])--?[a-zA-Z][\w-]*/g) ?? []) {
      if (!longs.has(f)) problems.push(`ctrlmetrics ${cmd.name()} has no flag ${f}`);
    }
  }
  return problems;
}

/**
 * A path of the repository a command names (`bench/run.ts`, `dist/examples/quickstart.js`, `scripts/x.sh`,
 * `packages/cli/dist/cli.js`).
 */
const REPO_PATH =
  /^(?:packages\/[\w-]+\/)?(?:dist\/)?(?:bench|scripts|test|examples|src|cli\.)[\w./-]*\.(?:ts|mjs|js|sh)$/;

/**
 * What else a shell block gets wrong: an `npm run` script that neither this repository nor a generated project
 * has, a file of the repository that does not exist (`dist/x.js` stands for its source `x.ts`).
 */
export function shellProblems(
  block: string,
  scripts: ReadonlySet<string>,
  exists: (path: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const raw of block.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '');
    for (const m of line.matchAll(/\bnpm run ([\w:-]+)/g))
      if (!scripts.has(m[1])) problems.push(`no npm script ${m[1]}`);
    for (const word of line.split(/[\s()"'`=]+/)) {
      if (!REPO_PATH.test(word)) continue;
      const source = word.replace(/^((?:packages\/[\w-]+\/)?)dist\/(.*)\.js$/, '$1$2.ts');
      if (!exists(source)) problems.push(`no file ${source}`);
    }
  }
  return problems;
}

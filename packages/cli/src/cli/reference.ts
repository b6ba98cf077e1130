/**
 * The CLI reference (docs/reference/cli.md) rendered from the commands' own help, so the page cannot drift from
 * what `ctrlmetrics <command> --help` prints: `npm run docs:cli` writes it, a test compares it.
 */
import type { Command } from 'commander';
import { buildProgram } from './index.js';

/** Help lines are wrapped at this width, whatever the terminal (the page must be the same on every machine). */
const HELP_WIDTH = 100;

/** Every command, depth first, with its full name (`create api`). */
function commandsOf(cmd: Command, prefix: string[] = []): Array<{ path: string[]; cmd: Command }> {
  return cmd.commands.flatMap((c) => {
    const path = [...prefix, c.name()];
    return [{ path, cmd: c }, ...commandsOf(c, path)];
  });
}

function helpOf(cmd: Command): string {
  cmd.configureHelp({ helpWidth: HELP_WIDTH });
  return cmd.helpInformation().trimEnd();
}

/** The Markdown page: the program's help, then one section per command with its help as printed. */
export function renderCliReference(): string {
  const program = buildProgram();
  const commands = commandsOf(program);
  const out = [
    '# CLI reference',
    '',
    "<!-- Generated from the commands' own help by `npm run docs:cli` (src/cli/reference.ts); do not edit. -->",
    '',
    'Every command of `ctrlmetrics`, as `ctrlmetrics <command> --help` prints it. The guides explain when to use',
    'each: [the tutorial](../tutorial.md), [testing on the authority](../guides/testing.md),',
    '[running against a real cluster](../guides/real-cluster.md).',
    '',
    ...commands.map(({ path }) => `- [\`${path.join(' ')}\`](#${anchorOf(path)})`),
    '',
    '## `ctrlmetrics`',
    '',
    '```text',
    helpOf(program),
    '```',
  ];
  for (const { path, cmd } of commands)
    out.push('', `## \`ctrlmetrics ${path.join(' ')}\``, '', '```text', helpOf(cmd), '```');
  return out.join('\n') + '\n';
}

/** GitHub's anchor of the heading `ctrlmetrics <path>` in backticks. */
function anchorOf(path: string[]): string {
  return ['ctrlmetrics', ...path]
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '');
}

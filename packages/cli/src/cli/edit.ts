/** `ctrlmetrics edit`: switches optional parts of a generated project on and off in its kustomizations. */
import type { Command } from 'commander';
import { CliError, UsageError } from './errors.js';
import {
  SCAFFOLD_OPTIONS,
  ScaffoldError,
  editProject,
  isScaffoldOption,
  type ScaffoldOption,
} from '../scaffold/index.js';
import { setMultigroup } from '../scaffold/project-file.js';
import { parseGoBool } from 'ctrlmetrics/log';

const collect = (value: string, previous: string[]): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

function options(values: string[], flag: string): ScaffoldOption[] {
  const bad = values.filter((v) => !isScaffoldOption(v));
  if (bad.length > 0) {
    throw new UsageError(`unknown option "${bad[0]}" for ${flag}: choose from ${SCAFFOLD_OPTIONS.join(', ')}`);
  }
  return values as ScaffoldOption[];
}

export function register(program: Command): void {
  program
    .command('edit')
    .description(
      `Enable or disable optional parts of a project (${SCAFFOLD_OPTIONS.join(', ')}), keeping your own edits`,
    )
    .option(
      '--enable <option>',
      `turn an option on (repeatable, or comma-separated): ${SCAFFOLD_OPTIONS.join(', ')}`,
      collect,
      [],
    )
    .option('--disable <option>', 'turn an option off (repeatable, or comma-separated)', collect, [])
    .option(
      '--multigroup [bool]',
      "switch the project to the multi-group layout (kubebuilder's edit --multigroup): new kinds go to src/api/<group>/<version>/",
    )
    .option('--dir <dir>', 'project directory', '.')
    .action(async (flags: { enable: string[]; disable: string[]; dir: string; multigroup?: boolean | string }) => {
      const enable = options(flags.enable, '--enable');
      const disable = options(flags.disable, '--disable');
      if (enable.length === 0 && disable.length === 0 && flags.multigroup === undefined) {
        throw new UsageError(
          `nothing to do: pass --enable or --disable with one of ${SCAFFOLD_OPTIONS.join(', ')}, or --multigroup`,
        );
      }
      try {
        if (flags.multigroup !== undefined) {
          const on = typeof flags.multigroup === 'boolean' ? flags.multigroup : parseGoBool(flags.multigroup);
          if (on === undefined)
            throw new UsageError(
              `invalid argument "${String(flags.multigroup)}" for "--multigroup" flag: strconv.ParseBool: parsing "${String(flags.multigroup)}": invalid syntax`,
            );
          const changed = setMultigroup(flags.dir, on);
          process.stdout.write(
            changed
              ? on
                ? 'PROJECT: multigroup: true; new kinds go to src/api/<group>/<version>/ and src/controllers/<group>/ (the kinds made before stay where they are)\n'
                : 'PROJECT: multigroup removed\n'
              : 'PROJECT: no changes\n',
          );
          if (enable.length === 0 && disable.length === 0) return;
        }
        const result = await editProject(flags.dir, { enable, disable, validate: true });
        for (const m of result.messages) process.stdout.write(m + '\n');
        process.stdout.write(result.changed.length ? `updated ${result.changed.join(', ')}\n` : 'no changes\n');
      } catch (err) {
        if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
        throw err;
      }
    });
}

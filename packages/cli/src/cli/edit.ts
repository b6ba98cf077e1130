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
import { readProjectFile, setMultigroup, setPlugin } from '../scaffold/project-file.js';
import { CHART_DIR, HELM_PLUGIN } from '../scaffold/helm.js';
import { helm } from './generate.js';

/** The chart of the project (dist/chart/, generate helm), which edit switches on beside the kustomize options. */
const HELM = 'helm';
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
    throw new UsageError(`unknown option "${bad[0]}" for ${flag}: choose from ${SCAFFOLD_OPTIONS.join(', ')}, helm`);
  }
  return values as ScaffoldOption[];
}

export function register(program: Command): void {
  program
    .command('edit')
    .description(
      `Enable or disable optional parts of a project (${SCAFFOLD_OPTIONS.join(', ')}, helm), keeping your own edits`,
    )
    .option(
      '--enable <option>',
      `turn an option on (repeatable, or comma-separated): ${SCAFFOLD_OPTIONS.join(', ')}, helm (the Helm chart in dist/chart/)`,
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
      // helm is no part of the kustomizations: the chart is made from them (generate helm)
      const helmOn = flags.enable.includes(HELM);
      const helmOff = flags.disable.includes(HELM);
      if (helmOn && helmOff) throw new UsageError('cannot both enable and disable helm');
      const enable = options(
        flags.enable.filter((o) => o !== HELM),
        '--enable',
      );
      const disable = options(
        flags.disable.filter((o) => o !== HELM),
        '--disable',
      );
      if (enable.length === 0 && disable.length === 0 && flags.multigroup === undefined && !helmOn && !helmOff) {
        throw new UsageError(
          `nothing to do: pass --enable or --disable with one of ${SCAFFOLD_OPTIONS.join(', ')}, helm, or --multigroup`,
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
          if (enable.length === 0 && disable.length === 0 && !helmOn && !helmOff) return;
        }
        let changed = false;
        if (enable.length || disable.length) {
          const result = await editProject(flags.dir, { enable, disable, validate: true });
          for (const m of result.messages) process.stdout.write(m + '\n');
          process.stdout.write(result.changed.length ? `updated ${result.changed.join(', ')}\n` : 'no changes\n');
          changed = result.changed.length > 0;
        }
        if (helmOff) {
          process.stdout.write(
            setPlugin(flags.dir, HELM_PLUGIN, false)
              ? `disabled helm (PROJECT); ${CHART_DIR} is left as it is: delete it if you no longer want it\n`
              : 'helm is already disabled\n',
          );
        } else if (helmOn || (changed && readProjectFile(flags.dir).plugins?.[HELM_PLUGIN])) {
          // the chart follows the kustomizations it is made from
          await helm(flags.dir, false);
          if (helmOn && setPlugin(flags.dir, HELM_PLUGIN, true)) process.stdout.write('enabled helm (PROJECT)\n');
        }
      } catch (err) {
        if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
        throw err;
      }
    });
}

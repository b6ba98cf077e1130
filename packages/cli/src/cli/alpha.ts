/** `ctrlmetrics alpha generate`: the project re-created with today's templates, beside it (kubebuilder's command). */
import type { Command } from 'commander';
import { relative } from 'node:path';
import { CliError } from './errors.js';
import { ScaffoldError } from '../scaffold/errors.js';

export function register(program: Command): void {
  const alpha = program.command('alpha').description('Alpha-stage commands (kubebuilder alpha)');
  alpha
    .command('generate')
    .description(
      "Re-create the project from its PROJECT file with this version's templates, in a folder of its own, carrying your code over",
    )
    .option('--input-dir <dir>', 'the project to re-create', '.')
    .option('--output-dir <dir>', 'where the new project goes (default: <input-dir>-generated); new or empty')
    .option(
      '--ctrlmetrics-version <spec>',
      "npm spec of the new project's ctrlmetrics (default: the project's registry version, else the running packages vendored)",
    )
    .action(async (flags: { inputDir: string; outputDir?: string; ctrlmetricsVersion?: string }) => {
      const { alphaGenerate } = await import('../scaffold/alpha-generate.js');
      let r;
      try {
        r = await alphaGenerate({
          inputDir: flags.inputDir,
          ...(flags.outputDir ? { outputDir: flags.outputDir } : {}),
          ...(flags.ctrlmetricsVersion ? { ctrlmetricsVersion: flags.ctrlmetricsVersion } : {}),
        });
      } catch (err) {
        if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
        throw err;
      }
      const out = (s: string) => process.stdout.write(`${s}\n`);
      out(`generated ${relative(process.cwd(), r.dir) || '.'}:`);
      for (const s of r.steps) out(`  ran: ${s}`);
      out(`carried ${r.carried.length} file(s) of yours:`);
      for (const f of r.carried) out(`  ${f}`);
      if (r.regenerated.length) {
        out('written anew by the templates, and different from yours (diff and merge by hand):');
        for (const f of r.regenerated) out(`  ${f}`);
      }
      if (r.notCarried.length) {
        out('not carried:');
        for (const f of r.notCarried) out(`  ${f}`);
      }
    });
}

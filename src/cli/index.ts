/**
 * The `ctrlmetrics` command line: one file per command in this folder, each exporting `register(program)`.
 */
import { Command, CommanderError } from 'commander';
import { CliError } from './errors.js';
import * as authority from './authority.js';
import * as demo from './demo.js';
import * as init from './init.js';
import * as edit from './edit.js';
import * as grant from './grant.js';
import * as token from './token.js';
import * as monitors from './monitors.js';
import * as labelNamespace from './label-namespace.js';
import * as scrape from './scrape.js';
import * as doctor from './doctor.js';
import * as prometheusConfig from './prometheus-config.js';

const COMMANDS = [demo, authority, init, edit, grant, token, monitors, labelNamespace, scrape, doctor, prometheusConfig];

/** Builds the program with every command registered. */
export function buildProgram(): Command {
  const program = new Command('ctrlmetrics')
    .description('Secure metrics endpoint for TypeScript Kubernetes controller managers')
    .version('0.1.0')
    .showHelpAfterError('(run ctrlmetrics --help for usage)')
    .exitOverride();
  for (const c of COMMANDS) c.register(program);
  return program;
}

/** Runs the CLI; resolves to the process exit code. Errors are one clear line on stderr. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  program.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit with 0; usage errors were already printed by commander
      return err.exitCode;
    }
    if (err instanceof CliError) {
      process.stderr.write(`error: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

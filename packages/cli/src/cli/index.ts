/**
 * The `ctrlmetrics` command line: one file per command in this folder, each exporting `register(program)`.
 */
import { Command, CommanderError } from 'commander';
import { CliError, UsageError } from './errors.js';
import { OpsError, OpsUsageError } from '../ops/errors.js';
import { causeChain } from 'ctrlmetrics/internal';
import * as version from './version.js';
import * as authority from './authority.js';
import * as sharder from './sharder.js';
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
import * as generate from './generate.js';
import * as create from './create.js';
import * as dev from './dev.js';
import * as setImage from './set-image.js';
import * as alpha from './alpha.js';

const COMMANDS = [
  demo,
  authority,
  sharder,
  init,
  edit,
  create,
  generate,
  dev,
  setImage,
  alpha,
  grant,
  token,
  monitors,
  labelNamespace,
  scrape,
  doctor,
  prometheusConfig,
  version,
];

/** Builds the program with every command registered. */
export function buildProgram(): Command {
  const program = new Command('ctrlmetrics')
    .description('Secure metrics endpoint for TypeScript Kubernetes controller managers')
    .version(version.packageVersion(), '-V, --version', 'Print the version number')
    .helpOption('-h, --help', 'Show help for the command')
    .helpCommand('help [command]', 'Help about any command')
    .option('-v, --verbose', 'On an error, also print the errors that caused it')
    // the program's own options (--version, --help) only before a command: `create api --version v1` is the API's
    .enablePositionalOptions()
    .exitOverride();
  for (const c of COMMANDS) c.register(program);
  return program;
}

/** The subcommand argv names, if any (the first argument that is one). */
function subcommandOf(program: Command, args: string[]): string | undefined {
  const names = new Set(program.commands.map((c) => c.name()));
  return args.find((a) => names.has(a));
}

/**
 * A commander usage error in kubectl's words: `unknown flag: --x`, `required flag(s) "namespace" not set`,
 * `unknown command "x" for "ctrlmetrics"`; other messages as commander words them.
 */
function usageMessage(err: CommanderError): string {
  const text = err.message.replace(/^error: /, '');
  switch (err.code) {
    case 'commander.unknownOption':
      return `unknown flag: ${/'([^']+)'/.exec(text)?.[1] ?? text}`;
    case 'commander.missingMandatoryOptionValue':
      return `required flag(s) "${/--([a-z0-9-]+)/.exec(text)?.[1] ?? text}" not set`;
    case 'commander.unknownCommand':
      return `unknown command "${/'([^']+)'/.exec(text)?.[1] ?? text}" for "ctrlmetrics"`;
    default:
      return text;
  }
}

/** kubectl's last line of a usage error: which help to read. */
function usageHint(sub: string | undefined): string {
  return sub ? `See 'ctrlmetrics ${sub} --help' for usage.` : "Run 'ctrlmetrics --help' for usage.";
}

/** Runs the CLI; resolves to the process exit code. Errors are one clear line on stderr. */
export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const args = argv.slice(2);
  // commander's own error text is replaced by kubectl's wording below
  program.configureOutput({ writeErr: (s) => process.stderr.write(s), outputError: () => undefined });
  for (const c of program.commands)
    c.configureOutput({ writeErr: (s) => process.stderr.write(s), outputError: () => undefined });
  if (args.length === 0) {
    // bare, as kubectl: the help on stdout, exit 0
    process.stdout.write(program.helpInformation());
    return 0;
  }
  const sub = subcommandOf(program, args);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    const code = report(err, sub);
    // -v: what the error was caused by, one line each (the first line stays the one-line error)
    if (program.opts<{ verbose?: boolean }>().verbose) {
      for (const cause of causeChain(err).slice(1)) process.stderr.write(`  caused by: ${causeText(cause)}\n`);
    }
    return code;
  }
}

/** Prints a failed command's error as kubectl does; answers the exit code. */
function report(err: unknown, sub: string | undefined): number {
  if (err instanceof CommanderError) {
    // --help and --version end here with exit code 0
    if (err.exitCode === 0) return 0;
    process.stderr.write(
      `error: ${usageMessage(err)}\n${usageHint(err.code === 'commander.unknownCommand' ? undefined : sub)}\n`,
    );
    return 1;
  }
  if (err instanceof UsageError || err instanceof OpsUsageError) {
    process.stderr.write(`error: ${err.message}\n${usageHint(sub)}\n`);
    return 1;
  }
  if (err instanceof CliError) {
    process.stderr.write(`error: ${err.message}\n`);
    return err.exitCode;
  }
  if (err instanceof OpsError) {
    process.stderr.write(`error: ${err.message}\n`);
    return 1;
  }
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** One cause as the verbose output prints it: its message and, when it has one, its code (`ENOENT`, `ERR_…`). */
function causeText(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as Error & { code?: unknown }).code;
  return typeof code === 'string' ? `${cause.message} (${code})` : cause.message;
}

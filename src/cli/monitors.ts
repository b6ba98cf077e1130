// PLACEHOLDER: replaced by the implementation of `ctrlmetrics monitors`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('monitors')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics monitors is not implemented yet');
    });
}

// PLACEHOLDER: replaced by the implementation of `ctrlmetrics grant`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('grant')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics grant is not implemented yet');
    });
}

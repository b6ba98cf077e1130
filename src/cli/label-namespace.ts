// PLACEHOLDER: replaced by the implementation of `ctrlmetrics label-namespace`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('label-namespace')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics label-namespace is not implemented yet');
    });
}

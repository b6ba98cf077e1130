// PLACEHOLDER: replaced by the implementation of `ctrlmetrics doctor`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('doctor')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics doctor is not implemented yet');
    });
}

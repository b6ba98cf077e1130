// PLACEHOLDER: replaced by the implementation of `ctrlmetrics token`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('token')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics token is not implemented yet');
    });
}

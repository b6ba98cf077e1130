// PLACEHOLDER: replaced by the implementation of `ctrlmetrics prometheus-config`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('prometheus-config')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics prometheus-config is not implemented yet');
    });
}

// PLACEHOLDER: replaced by the implementation of `ctrlmetrics scrape`.
import type { Command } from 'commander';
import { CliError } from './errors.js';

export function register(program: Command): void {
  program
    .command('scrape')
    .description('(not implemented yet)')
    .allowUnknownOption()
    .action(() => {
      throw new CliError('ctrlmetrics scrape is not implemented yet');
    });
}

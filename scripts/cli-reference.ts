// Writes docs/reference/cli.md from the commands' own help (npm run docs:cli).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCliReference } from '../packages/cli/src/cli/reference.js';

const target = join(import.meta.dirname, '../docs/reference/cli.md');
writeFileSync(target, renderCliReference());
process.stdout.write(`wrote ${target}\n`);

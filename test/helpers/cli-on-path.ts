/**
 * A project's `node_modules/.bin/ctrlmetrics` that runs this repository's CLI ({@link cliArgs}), for tests that run a
 * generated project's npm scripts (which call `ctrlmetrics`) without installing the packages into it.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliArgs } from './process.js';

/** Writes the wrapper into `project`'s node_modules/.bin, where `npm run` looks first. */
export function putCliOnPath(project: string): void {
  const bin = join(project, 'node_modules', '.bin');
  mkdirSync(bin, { recursive: true });
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const file = join(bin, 'ctrlmetrics');
  writeFileSync(file, `#!/bin/sh\nexec ${[process.execPath, ...cliArgs()].map(quote).join(' ')} "$@"\n`);
  chmodSync(file, 0o755);
}

#!/usr/bin/env node
// Entry point of the `ctrlmetrics` command (package.json `bin` → dist/cli.js).
import { main } from './src/cli/index.js';

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);

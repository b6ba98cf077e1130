// Marks the compiled CLI entry point executable so `bin` works after `npm install -g` or `npm link`.
import { chmodSync, existsSync } from 'node:fs';
if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);

// Marks the compiled CLI entry point executable so `bin` works after `npm install -g` or `npm link`, and copies the
// data files tsc does not (the authority's built-in OpenAPI documents) beside the compiled modules that read them.
import { chmodSync, cpSync, existsSync } from 'node:fs';
if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
cpSync('src/authority/data', 'dist/src/authority/data', { recursive: true });

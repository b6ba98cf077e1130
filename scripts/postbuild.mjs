// Marks the compiled CLI entry point executable so `bin` works after `npm install -g` or `npm link`, and copies the
// data files tsc does not (the authority's built-in OpenAPI documents) beside the compiled modules that read them.
import { chmodSync, cpSync, existsSync } from 'node:fs';
if (existsSync('packages/cli/dist/cli.js')) chmodSync('packages/cli/dist/cli.js', 0o755);
cpSync('packages/envtest/src/data', 'packages/envtest/dist/src/data', { recursive: true });

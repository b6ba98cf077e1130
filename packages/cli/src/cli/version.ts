/** `ctrlmetrics version`: this CLI's version, the Node.js running it and the platform, as `kubectl version --client`. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from './errors.js';
import { toKubectlYaml } from '../ops/output.js';

/** The CLI's version, from the nearest package.json named @ctrlmetrics/cli above this module (src/cli or dist/src/cli). */
export function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@ctrlmetrics/cli' && pkg.version) return pkg.version;
    } catch {
      // no package.json here: one folder up
    }
    if (dir.pathname === '/') return '0.0.0';
  }
}

/** What `-o json|yaml` prints: kubectl's `clientVersion` object, with ctrlmetrics' fields. */
export function versionInfo(): { clientVersion: { gitVersion: string; nodeVersion: string; platform: string } } {
  return {
    clientVersion: {
      gitVersion: `v${packageVersion()}`,
      nodeVersion: process.version,
      platform: `${process.platform}/${process.arch}`,
    },
  };
}

export function register(program: Command): void {
  program
    .command('version')
    .description('Print the ctrlmetrics version, the Node.js version and the platform')
    .option('-o, --output <format>', 'json or yaml')
    .action((flags: { output?: string }) => {
      const info = versionInfo();
      if (flags.output === 'json') process.stdout.write(JSON.stringify(info, null, 2) + '\n');
      else if (flags.output === 'yaml') process.stdout.write(toKubectlYaml(info));
      else if (flags.output === undefined) {
        process.stdout.write(
          `Client Version: ${info.clientVersion.gitVersion}\nNode.js Version: ${info.clientVersion.nodeVersion}\nPlatform: ${info.clientVersion.platform}\n`,
        );
      } else throw new UsageError(`--output must be 'yaml' or 'json'`);
    });
}

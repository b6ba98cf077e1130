/** `ctrlmetrics init`: generates a TypeScript operator project with kubebuilder-style config/ overlays. */
import type { Command } from 'commander';
import { CliError } from './errors.js';
import { ScaffoldError, ctrlmetricsPackageVersion, initProject } from '../scaffold/index.js';

interface InitFlags {
  projectName?: string;
  domain: string;
  dir: string;
  force?: boolean;
  ctrlmetricsVersion?: string;
  multigroup?: boolean;
}

export function register(program: Command): void {
  program
    .command('init')
    .description(
      'Generate a TypeScript operator project: package.json, src/main.ts, Dockerfile and config/ (kustomize)',
    )
    .requiredOption(
      '--project-name <name>',
      'project name (DNS-1123 label): namePrefix "<name>-" and namespace "<name>-system"',
    )
    .option('--domain <domain>', 'domain of the project (leader-election ID)', 'my.domain')
    .option('--dir <dir>', 'directory to generate the project in', '.')
    .option(
      '--force',
      'write into a non-empty directory, overwriting the files init generates (other files are left alone)',
    )
    .option(
      '--multigroup',
      "lay the project out for several API groups of its own: src/api/<group>/<version>/, src/controllers/<group>/ (kubebuilder's multi-group layout)",
    )
    .option(
      '--ctrlmetrics-version <spec>',
      `npm spec of the ctrlmetrics dependency, e.g. ^${ctrlmetricsPackageVersion()}, a git URL or file:../ctrlmetrics (default: this ctrlmetrics, packed into vendor/ctrlmetrics-${ctrlmetricsPackageVersion()}.tgz)`,
    )
    .action(async (flags: InitFlags) => {
      try {
        const { dir, files } = await initProject({
          projectName: flags.projectName ?? '',
          domain: flags.domain,
          dir: flags.dir,
          force: !!flags.force,
          multigroup: !!flags.multigroup,
          ...(flags.ctrlmetricsVersion ? { ctrlmetricsVersion: flags.ctrlmetricsVersion } : {}),
        });
        process.stdout.write(
          `generated ${files.length} files in ${dir}\n` +
            `next: cd ${dir} && npm install && npm test; npm run build-installer writes dist/install.yaml\n` +
            `optional parts: ctrlmetrics edit --enable prometheus|certmanager|metrics-tls|network-policy|grafana|sharding\n`,
        );
      } catch (err) {
        if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
        throw err;
      }
    });
}

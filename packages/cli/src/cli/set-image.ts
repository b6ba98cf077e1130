/** `ctrlmetrics set-image NAME=IMAGE`: kustomize's `edit set image`, for the scripts that deploy a built image. */
import type { Command } from 'commander';
import { CliError, UsageError } from './errors.js';
import { ScaffoldError } from '../scaffold/errors.js';
import { setImage } from '../scaffold/set-image.js';

export function register(program: Command): void {
  program
    .command('set-image')
    .description(
      'Set the image a kustomization deploys (kustomize edit set image): what npm run deploy and build-installer run with IMG',
    )
    .argument('<name=image>', 'the image name in the manifests and its replacement, e.g. controller=example.com/op:v1')
    .option('--kustomization <dir>', 'the directory of the kustomization to edit', 'config/manager')
    .action((arg: string, flags: { kustomization: string }) => {
      const eq = arg.indexOf('=');
      if (eq <= 0 || eq === arg.length - 1)
        throw new UsageError(`"${arg}": give NAME=IMAGE, e.g. controller=example.com/op:v1`);
      try {
        const r = setImage(flags.kustomization, arg.slice(0, eq), arg.slice(eq + 1));
        const ref = `${r.image.newName}${r.image.newTag ? `:${r.image.newTag}` : ''}${r.image.digest ? `@${r.image.digest}` : ''}`;
        process.stdout.write(`${r.file}: image ${r.name} → ${ref}\n`);
      } catch (err) {
        if (err instanceof ScaffoldError) throw new CliError(err.message, 1, { cause: err });
        throw err;
      }
    });
}

/** `ctrlmetrics label-namespace NS...`: lets pods of these namespaces through the metrics NetworkPolicy. */
import type { Command } from 'commander';
import { labelNamespace } from '../ops/label-namespace.js';
import { withClient, type KubeFlags } from '../ops/kube.js';
import { parseDryRun } from '../ops/output.js';
import { CliError } from './errors.js';
import { OpsError } from '../ops/errors.js';

export function register(program: Command): void {
  program
    .command('label-namespace')
    .description(
      'Set metrics=enabled on each namespace whose pods scrape the metrics endpoint (for the allow-metrics-traffic NetworkPolicy)',
    )
    .argument('<namespace...>', 'namespaces to label')
    .option(
      '--overwrite',
      'replace another value of the metrics label (without it such a namespace is an error, as kubectl label)',
    )
    .option('--dry-run [strategy]', '"client": print what would change, change nothing (as kubectl)')
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (namespaces: string[], flags: KubeFlags & { overwrite?: boolean; dryRun?: string | boolean }) => {
      const dryRun = parseDryRun(flags.dryRun);
      let failed = 0;
      await withClient(flags, async (client) => {
        for (const ns of namespaces) {
          try {
            process.stdout.write(
              `namespace/${ns} ${await labelNamespace(client, ns, { overwrite: flags.overwrite, dryRun })}\n`,
            );
          } catch (err) {
            if (!(err instanceof OpsError)) throw err;
            failed++;
            process.stderr.write(`error: ${err.message}\n`);
          }
        }
      });
      if (failed > 0) throw new CliError(`${failed} of ${namespaces.length} namespaces could not be labeled`);
    });
}

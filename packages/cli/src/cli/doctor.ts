/** `ctrlmetrics doctor`: checks every link between a scraper and the secure metrics endpoint, with the fix for each. */
import type { Command } from 'commander';
import { assertApiReachable, formatReport, runDoctor } from '../ops/doctor.js';
import { parseServiceAccountRef, withClient, type KubeFlags } from '../ops/kube.js';
import { CliError, UsageError } from './errors.js';

interface DoctorFlags extends KubeFlags {
  namespace: string;
  project?: string;
  as?: string;
  url?: string;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description(
      'Check the whole metrics chain (Deployment, Service and endpoints, RBAC, ServiceMonitor, NetworkPolicy, certificate, a real scrape), one line per check with the fix',
    )
    .requiredOption('-n, --namespace <ns>', "the manager's namespace, <project>-system (required)")
    .option('--project <name>', 'project name (name prefix; default: the namespace without -system)')
    .option('--as <ns:name>', 'the scraper service account to check (e.g. monitoring:prometheus)')
    .option(
      '--url <url>',
      'scrape this URL as the scraper, e.g. https://127.0.0.1:8443/metrics through kubectl port-forward (default in a pod: the Service)',
    )
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (flags: DoctorFlags) => {
      const as = flags.as ? parseServiceAccountRef(flags.as, '--as') : undefined;
      if (flags.url !== undefined && !/^https?:\/\/[^/]/.test(flags.url)) {
        throw new UsageError(
          `--url ${JSON.stringify(flags.url)} is not an http(s) URL: e.g. --url https://127.0.0.1:8443/metrics`,
        );
      }
      const checks = await withClient(flags, async (client) => {
        await assertApiReachable(client).catch((err: Error) => {
          throw new CliError(err.message, 1, { cause: err });
        });
        return runDoctor(client, {
          namespace: flags.namespace,
          project: flags.project,
          as,
          url: flags.url,
          inCluster: !!process.env.KUBERNETES_SERVICE_HOST,
        });
      });
      process.stdout.write(formatReport(checks));
      const failed = checks.filter((c) => c.status === 'fail').length;
      if (failed > 0) throw new CliError(`${failed} of ${checks.length} checks failed`);
    });
}

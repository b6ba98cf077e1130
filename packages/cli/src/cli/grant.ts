/** `ctrlmetrics grant`: binds the metrics-reader ClusterRole to a service account (a scraper such as Prometheus). */
import type { Command } from 'commander';
import { applyGrant, buildBinding, defaultBindingName, findReaderRole, serviceAccountExists } from '../ops/grant.js';
import { parseServiceAccountRef, withClient, type KubeFlags } from '../ops/kube.js';
import { formatObject, parseDryRun, parseOutput, resourceName } from '../ops/output.js';
import { UsageError } from './errors.js';

interface GrantFlags extends KubeFlags {
  serviceaccount?: string;
  clusterrole?: string;
  name?: string;
  dryRun?: string | boolean;
  output?: string;
}

/**
 * What a user sees right after a grant: a manager keeps a denial for a token it already checked (the filter's
 * deny cache, 30 s as controller-runtime's), while a new token is reviewed at once.
 */
export function denyCacheNote(sa: { namespace: string; name: string }): string {
  return (
    `note: a manager that already answered 403 to a token of ${sa.namespace}:${sa.name} keeps answering 403 to that token for up to 30 s ` +
    `(it caches denials, as controller-runtime does); a new token is allowed at once: ctrlmetrics token -n ${sa.namespace} ${sa.name}\n`
  );
}

export function register(program: Command): void {
  program
    .command('grant')
    .description('Bind the metrics-reader ClusterRole to a service account so it may GET /metrics (idempotent)')
    .requiredOption('--serviceaccount <ns:name>', 'the service account that scrapes, e.g. monitoring:prometheus')
    .option(
      '--clusterrole <name>',
      'the reader ClusterRole (default: <project>-metrics-reader for a service account in <project>-system, else the only *-metrics-reader in the cluster)',
    )
    .option('--name <binding>', 'ClusterRoleBinding name (default: <clusterrole>:<ns>:<name>)')
    .option('--dry-run [strategy]', 'only "client": print the object, create nothing')
    .option('-o, --output <format>', 'yaml, json or name')
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (flags: GrantFlags) => {
      const sa = parseServiceAccountRef(flags.serviceaccount ?? '', '--serviceaccount');
      const output = parseOutput(flags.output);
      const dryRun = parseDryRun(flags.dryRun);
      if (dryRun && !flags.clusterrole) {
        // kubectl's client dry run never asks the server; neither do we: the role comes from the namespace name.
        if (!sa.namespace.endsWith('-system')) {
          throw new UsageError(
            '--dry-run=client needs --clusterrole when the service account is not in <project>-system (the role is otherwise looked up in the cluster)',
          );
        }
        flags.clusterrole = `${sa.namespace.slice(0, -'-system'.length)}-metrics-reader`;
      }
      const print = (obj: unknown, name: string, verb: string) => {
        const ref = resourceName('clusterrolebinding', 'rbac.authorization.k8s.io', name);
        process.stdout.write(output ? formatObject(obj, output, ref) : `${ref} ${verb}\n`);
      };
      if (dryRun) {
        const role = flags.clusterrole!;
        const binding = buildBinding(flags.name ?? defaultBindingName(role, sa), role, sa);
        print(binding, binding.metadata.name, 'created (dry run)');
        return;
      }
      await withClient(flags, async (client) => {
        const role = flags.clusterrole ?? (await findReaderRole(client, sa.namespace));
        const binding = buildBinding(flags.name ?? defaultBindingName(role, sa), role, sa);
        if ((await serviceAccountExists(client, sa)) === false) {
          process.stderr.write(
            `warning: serviceaccount ${sa.namespace}/${sa.name} does not exist yet; the binding applies once it is created\n`,
          );
        }
        const result = await applyGrant(client, binding);
        print(result.binding, binding.metadata.name, result.status);
        if (result.warning) process.stderr.write(`warning: ${result.warning}\n`);
        if (result.status !== 'unchanged') process.stderr.write(denyCacheNote(sa));
      });
    });
}

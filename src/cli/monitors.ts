/** `ctrlmetrics monitors`: lists ServiceMonitors like `kubectl get servicemonitors` (NAME, AGE). */
import type { Command } from 'commander';
import { defaultNamespace, withClient, type KubeFlags } from '../ops/kube.js';
import { listServiceMonitors } from '../ops/monitors.js';
import { formatObject, formatTable, humanAge, parseOutput, resourceName } from '../ops/output.js';

interface MonitorsFlags extends KubeFlags {
  namespace?: string;
  allNamespaces?: boolean;
  output?: string;
}

export function register(program: Command): void {
  program
    .command('monitors')
    .description('List the ServiceMonitors of a namespace (NAME, AGE); says so when the Prometheus operator\'s CRD is missing')
    .option('-n, --namespace <ns>', 'namespace (default: the kubeconfig context\'s, else default)')
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-o, --output <format>', 'yaml, json or name')
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (flags: MonitorsFlags) => {
      const output = parseOutput(flags.output);
      const ns = flags.allNamespaces ? undefined : (flags.namespace ?? defaultNamespace(flags));
      const items = await withClient(flags, (client) => listServiceMonitors(client, ns));
      if (output === 'yaml' || output === 'json') {
        process.stdout.write(formatObject({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } }, output, ''));
        return;
      }
      if (output === 'name') {
        for (const m of items) process.stdout.write(resourceName('servicemonitor', 'monitoring.coreos.com', m.metadata.name) + '\n');
        return;
      }
      if (items.length === 0) {
        process.stderr.write(ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n');
        return;
      }
      const now = Date.now();
      const age = (m: (typeof items)[number]) => (m.metadata.creationTimestamp ? humanAge(now - Date.parse(m.metadata.creationTimestamp)) : '<unknown>');
      const rows = items
        .slice()
        .sort((a, b) => (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') || a.metadata.name.localeCompare(b.metadata.name))
        .map((m) => (ns ? [m.metadata.name, age(m)] : [m.metadata.namespace ?? '', m.metadata.name, age(m)]));
      process.stdout.write(formatTable(ns ? ['NAME', 'AGE'] : ['NAMESPACE', 'NAME', 'AGE'], rows));
    });
}

/** `ctrlmetrics monitors`: lists ServiceMonitors like `kubectl get servicemonitors` (NAME, AGE; `-o wide` says more). */
import type { Command } from 'commander';
import { defaultNamespace, withClient, type KubeFlags } from '../ops/kube.js';
import { listServiceMonitors, type ServiceMonitor } from '../ops/monitors.js';
import { formatObject, formatTable, humanAge, parseOutput, resourceName } from '../ops/output.js';

interface MonitorsFlags extends KubeFlags {
  namespace?: string;
  allNamespaces?: boolean;
  output?: string;
}

interface Endpoint {
  port?: string;
  targetPort?: string | number;
  scheme?: string;
  path?: string;
  tlsConfig?: { insecureSkipVerify?: boolean; serverName?: string };
}

/**
 * `-o wide`'s extra cells (after AGE, as kubectl appends wide columns): where each endpoint is scraped
 * (`https:https/metrics` = scheme, Service port, path), how TLS is checked, and which Services are selected.
 */
function wideColumns(m: ServiceMonitor): string[] {
  const spec = (m.spec ?? {}) as { endpoints?: Endpoint[]; selector?: { matchLabels?: Record<string, string> } };
  const endpoints = spec.endpoints ?? [];
  const where = endpoints.map((e) => `${e.scheme ?? 'http'}:${e.port ?? e.targetPort ?? '?'}${e.path ?? '/metrics'}`);
  const tls = endpoints.map((e) =>
    e.scheme !== 'https' && !e.tlsConfig
      ? '-'
      : e.tlsConfig?.insecureSkipVerify
        ? 'insecure'
        : `verify${e.tlsConfig?.serverName ? ` ${e.tlsConfig.serverName}` : ''}`,
  );
  // sorted by key, as kubectl formats a label selector (and whatever order the server stored the map in)
  const selector = Object.entries(spec.selector?.matchLabels ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`);
  return [where.join(',') || '<none>', tls.join(',') || '<none>', selector.join(',') || '<none>'];
}

export function register(program: Command): void {
  program
    .command('monitors')
    .description(
      "List the ServiceMonitors of a namespace (NAME, AGE); says so when the Prometheus operator's CRD is missing",
    )
    .option('-n, --namespace <ns>', "namespace (default: the kubeconfig context's, else default)")
    .option('-A, --all-namespaces', 'list across all namespaces')
    .option('-o, --output <format>', 'wide (adds ENDPOINTS, TLS, SELECTOR), yaml, json or name')
    .option('--kubeconfig <file>', 'kubeconfig (default: KUBECONFIG, in-cluster service account, ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context')
    .action(async (flags: MonitorsFlags) => {
      const output = parseOutput(flags.output, ['wide', 'yaml', 'json', 'name']);
      const ns = flags.allNamespaces ? undefined : (flags.namespace ?? defaultNamespace(flags));
      const items = await withClient(flags, (client) => listServiceMonitors(client, ns));
      if (output === 'yaml' || output === 'json') {
        process.stdout.write(
          formatObject({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } }, output, ''),
        );
        return;
      }
      if (output === 'name') {
        for (const m of items)
          process.stdout.write(resourceName('servicemonitor', 'monitoring.coreos.com', m.metadata.name) + '\n');
        return;
      }
      if (items.length === 0) {
        process.stderr.write(ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n');
        return;
      }
      const now = Date.now();
      const age = (m: (typeof items)[number]) =>
        m.metadata.creationTimestamp ? humanAge(now - Date.parse(m.metadata.creationTimestamp)) : '<unknown>';
      const rows = items
        .slice()
        .sort(
          (a, b) =>
            (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
            a.metadata.name.localeCompare(b.metadata.name),
        )
        .map((m) => [
          ...(ns ? [] : [m.metadata.namespace ?? '']),
          m.metadata.name,
          age(m),
          ...(output === 'wide' ? wideColumns(m) : []),
        ]);
      const headers = [
        ...(ns ? [] : ['NAMESPACE']),
        'NAME',
        'AGE',
        ...(output === 'wide' ? ['ENDPOINTS', 'TLS', 'SELECTOR'] : []),
      ];
      process.stdout.write(formatTable(headers, rows));
    });
}

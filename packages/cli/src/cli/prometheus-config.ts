/** `ctrlmetrics prometheus-config`: the scrape job a Prometheus operator would derive from the project's ServiceMonitor. */
import type { Command } from 'commander';
import { renderScrapeConfigs, type PrometheusConfigOptions } from '../ops/prometheus-config.js';

interface PrometheusConfigFlags extends PrometheusConfigOptions {
  from: string;
}

export function register(program: Command): void {
  program
    .command('prometheus-config')
    .description(
      "Print the Prometheus scrape_configs job equivalent to the project's ServiceMonitor (for Prometheus without the operator)",
    )
    .option(
      '--from <dirOrFile>',
      'kustomize overlay to build (kubectl kustomize) or a YAML file with the ServiceMonitor',
      'config/default',
    )
    .option(
      '--target <host:port>',
      "scrape this address directly (static target with the operator's labels) instead of discovering the Service endpoints",
    )
    .option('--token-file <file>', "bearer token file Prometheus reads (default: the ServiceMonitor's bearerTokenFile)")
    .option(
      '--ca-file <file>',
      'CA certificate that verifies the endpoint (default: where the operator mounts the CA Secret)',
    )
    .option('--cert-file <file>', 'client certificate to present (with --key-file)')
    .option('--key-file <file>', 'client key to present (with --cert-file)')
    .option('--pod <name>', 'value of the "pod" label of a static --target')
    .action(async (flags: PrometheusConfigFlags) => {
      const { from, ...opts } = flags;
      const out = await renderScrapeConfigs(from, opts, (msg) => process.stderr.write(`warning: ${msg}\n`));
      process.stdout.write(out);
    });
}

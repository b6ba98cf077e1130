/**
 * `ctrlmetrics sharder`: runs the sharder of rings of shards (`ctrlmetrics/sharding`; timebertt/kubernetes-controller-
 * sharding's ControllerRing API) until SIGTERM/SIGINT: the assignment webhook on every replica, the ring and shard
 * Lease controllers on the leader (`--leader-elect`). kube-apiserver reaches the webhook at `--webhook-url` or
 * through `--webhook-service`, trusting `--webhook-ca-file`. The work is in sharder-run.ts, loaded when it runs.
 */
import type { Command } from 'commander';
import type { SharderCliOptions } from './sharder-run.js';

export function register(program: Command): void {
  program
    .command('sharder')
    .description(
      'Run the sharder of rings of controller shards (ControllerRing, sharding.timebertt.dev/v1alpha1) until SIGTERM/SIGINT',
    )
    .option('--kubeconfig <file>', 'kubeconfig to use (default: KUBECONFIG, in-cluster, ~/.kube/config)')
    .option('--webhook-url <url>', 'https://host:port at which kube-apiserver reaches this webhook server')
    .option('--webhook-service <ns/name[:port]>', 'the Service in front of this webhook server (port default 443)')
    .option('--webhook-bind-address <addr>', 'address of the webhook server', ':9443')
    .option(
      '--webhook-cert-dir <dir>',
      'directory of tls.crt and tls.key (default <tmpdir>/k8s-webhook-server/serving-certs)',
    )
    .option(
      '--webhook-ca-file <file>',
      'the CA kube-apiserver trusts for the webhook (default <cert-dir>/ca.crt, else tls.crt)',
    )
    .option(
      '--metrics-bind-address <addr>',
      'address of the metrics endpoint (HTTPS, authenticated); 0 disables it',
      ':8443',
    )
    .option('--health-probe-bind-address <addr>', 'address of /healthz and /readyz; 0 disables them', ':8081')
    .option('--leader-elect', 'run the ring and shard Lease controllers on one replica only (the webhook runs on all)')
    .option('--leader-election-id <name>', 'the Lease of the sharder replicas', 'sharder-leader-election')
    .option('--leader-election-namespace <ns>', "the Lease's namespace (default: the pod's)")
    .option('--sync-period <duration>', 'how often each ring is rebalanced besides when its shards change', '5m')
    .option('--concurrent-moves <n>', 'hand-overs in flight at once', '100')
    .option('--kube-api-qps <n>', "the sharder's API requests per second", '200')
    .option('--kube-api-burst <n>', "the sharder's API request burst", '300')
    .option('--install-crd', 'create the ControllerRing CRD at start when it is missing')
    .action(async (opts: SharderCliOptions) => {
      const { runSharder } = await import('./sharder-run.js');
      await runSharder(opts);
    });
}

/**
 * What `ctrlmetrics sharder` runs (loaded only by that command: the runtime's manager stays out of the other
 * commands' start-up): the sharder of rings of shards (`ctrlmetrics/sharding`; timebertt/kubernetes-controller-
 * sharding's ControllerRing API) until SIGTERM/SIGINT: the assignment webhook on every replica, the ring and shard
 * Lease controllers on the leader (`--leader-elect`). kube-apiserver reaches the webhook at `--webhook-url` or
 * through `--webhook-service`, trusting `--webhook-ca-file`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Manager } from 'ctrlmetrics/manager';
import { loadRestConfig } from 'ctrlmetrics/config';
import { DEFAULT_WEBHOOK_CERT_DIR } from 'ctrlmetrics/webhook';
import { Sharder, controllerRingCrd, type SharderWebhookClientConfig } from 'ctrlmetrics/sharding';
import { CliError, UsageError } from './errors.js';
import { parseDuration } from '../ops/output.js';

/** Parsed flags of `ctrlmetrics sharder`. */
export interface SharderCliOptions {
  kubeconfig?: string;
  webhookBindAddress: string;
  webhookCertDir?: string;
  webhookUrl?: string;
  webhookService?: string;
  webhookCaFile?: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
  leaderElect?: boolean;
  leaderElectionId: string;
  leaderElectionNamespace?: string;
  syncPeriod: string;
  concurrentMoves: string;
  kubeApiQps: string;
  kubeApiBurst: string;
  installCrd?: boolean;
}

const positive = (v: string, flag: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${flag}: ${JSON.stringify(v)} is not a whole number above 0`);
  return n;
};

/** `--webhook-service namespace/name[:port]`. */
function serviceOf(v: string): NonNullable<SharderWebhookClientConfig['service']> {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)(?::(\d+))?$/.exec(v);
  if (!m)
    throw new UsageError(`--webhook-service ${JSON.stringify(v)}: give it as namespace/name or namespace/name:port`);
  const port = m[5] === undefined ? undefined : Number(m[5]);
  if (port !== undefined && (port < 1 || port > 65535))
    throw new UsageError(`--webhook-service: port ${port} is out of range`);
  return { namespace: m[1], name: m[3], ...(port ? { port } : {}) };
}

/** The flags as the sharder's options (throws a UsageError naming the flag that is wrong). */
export function sharderSettings(o: SharderCliOptions): {
  webhook: SharderWebhookClientConfig;
  syncPeriodMs: number;
  concurrentMoves: number;
  qps: number;
  burst: number;
  certDir: string;
} {
  if (!o.webhookUrl === !o.webhookService)
    throw new UsageError(
      'give one of --webhook-url (https://host:port, how kube-apiserver reaches this process) and --webhook-service (namespace/name[:port] of its Service)',
    );
  if (o.webhookUrl && !/^https:\/\/[^/\s]+$/.test(o.webhookUrl))
    throw new UsageError(`--webhook-url ${JSON.stringify(o.webhookUrl)}: give https://host:port, without a path`);
  const target = o.webhookUrl ? { url: o.webhookUrl } : { service: serviceOf(o.webhookService!) };
  const certDir = o.webhookCertDir ?? DEFAULT_WEBHOOK_CERT_DIR;
  const caFile =
    o.webhookCaFile ?? (existsSync(join(certDir, 'ca.crt')) ? join(certDir, 'ca.crt') : join(certDir, 'tls.crt'));
  let caBundle: string;
  try {
    caBundle = readFileSync(caFile, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read the webhook's CA (${caFile}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; pass --webhook-ca-file, or put ca.crt in --webhook-cert-dir`,
    );
  }
  if (!caBundle.includes('-----BEGIN CERTIFICATE-----'))
    throw new UsageError(`${caFile} holds no PEM certificate: --webhook-ca-file names the CA kube-apiserver trusts`);
  return {
    webhook: { ...target, caBundle },
    syncPeriodMs: parseDuration(o.syncPeriod, '--sync-period'),
    concurrentMoves: positive(o.concurrentMoves, '--concurrent-moves'),
    qps: positive(o.kubeApiQps, '--kube-api-qps'),
    burst: positive(o.kubeApiBurst, '--kube-api-burst'),
    certDir,
  };
}

/** Runs the sharder until a signal arrives (or `signal` aborts, for tests). */
export async function runSharder(o: SharderCliOptions, signal?: AbortSignal): Promise<void> {
  const s = sharderSettings(o);
  let restConfig;
  try {
    restConfig = await loadRestConfig({ kubeconfig: o.kubeconfig });
  } catch (err) {
    throw new CliError(`cannot load the Kubernetes API configuration: ${(err as Error).message}`, 1, { cause: err });
  }
  const mgr = await Manager.create({
    // a sharder hands over thousands of objects when a shard goes: client-go's 20 requests/s would take minutes
    restConfig: { ...restConfig, qps: s.qps, burst: s.burst },
    metrics: { bindAddress: o.metricsBindAddress },
    healthProbeBindAddress: o.healthProbeBindAddress,
    webhook: { bindAddress: o.webhookBindAddress, certDir: s.certDir },
    ...(o.leaderElect
      ? {
          leaderElection: true,
          leaderElectionID: o.leaderElectionId,
          ...(o.leaderElectionNamespace ? { leaderElectionNamespace: o.leaderElectionNamespace } : {}),
          leaderElectionReleaseOnCancel: true,
        }
      : {}),
    handleSignals: !signal,
  });
  if (o.installCrd) {
    const crd = controllerRingCrd() as { metadata: { name: string } };
    try {
      await mgr.pathClient.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    } catch (err) {
      if ((err as { status?: number }).status !== 409) throw err;
    }
  }
  new Sharder({
    webhook: s.webhook,
    syncPeriodMs: s.syncPeriodMs,
    concurrentMoves: s.concurrentMoves,
  }).setupWithManager(mgr);
  await mgr.start(signal);
}

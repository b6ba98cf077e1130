/**
 * `ctrlmetrics demo` (`npm start`): the example operator with its secure metrics endpoint, on the embedded
 * Kubernetes-API-compatible authority (default) or on a real cluster (`--kubeconfig`).
 *
 * Embedded: starts the authority with state in `--state-dir`, applies the project's RBAC, runs the manager AS the
 * `ctrlmetrics-demo-controller-manager` service account (a TokenRequest token, so the authority enforces the
 * metrics auth role exactly as a cluster would), creates a small steady load of ConfigMaps, writes
 * `STATE_DIR/kubeconfig` (admin), `STATE_DIR/reader.token` (a service account bound to the metrics-reader role) and
 * `STATE_DIR/reader.header` (the same as an `Authorization` header line for `curl -H @FILE`), prints the curl line
 * to try, and runs until SIGINT/SIGTERM (or `--duration`).
 *
 * Real cluster (`--kubeconfig FILE`): no authority; the manager runs as the kubeconfig's identity, which needs
 * the RBAC listed in `examples/configmap-operator/main.ts` plus create on namespaces/configmaps/secrets in the
 * `ctrlmetrics-demo` namespace for the load.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { CliError, UsageError } from './errors.js';
import { KubeClient } from 'ctrlmetrics/client';
import { loadRestConfig, type RestConfig } from 'ctrlmetrics/config';
import { configureLogging, createLogger, type LogOptions, parseGoBool } from 'ctrlmetrics/log';
import { isDisabled } from 'ctrlmetrics/internal';
import { parseDuration } from '../ops/output.js';
import { addZapOptions } from './zap-options.js';
import { applyObject, checkApiReachable, requestToken } from './demo/apply.js';
import { MANAGER_SA, SCRAPER_SA, SYSTEM_NAMESPACE, WORKLOAD_NAMESPACE, demoRbac } from './demo/rbac.js';
import { DemoLoad } from './demo/load.js';
import { lockStateDir } from './demo/lock.js';
import { demoConflicts } from './demo/preflight.js';
import { crdsOption } from './crds-option.js';
import { demoScrapeJob, findPrometheus, startDemoPrometheus, type DemoPrometheus } from './demo/prometheus.js';

/** Options of `ctrlmetrics demo` (the flags, parsed). */
export interface DemoOptions {
  stateDir: string;
  kubeconfig?: string;
  metricsBindAddress: string;
  metricsSecure: boolean;
  metricsCertPath?: string;
  metricsCertName: string;
  metricsCertKey: string;
  enableHttp2: boolean;
  healthProbeBindAddress: string;
  leaderElect: boolean;
  leaderElectionNamespace?: string;
  /** Seconds to run (0 = until a signal). */
  duration: number;
  /** Seconds between load updates. */
  loadInterval: number;
  /** Address of the embedded API. */
  apiListen: string;
  /** CRD sets the embedded API installs at start. */
  crds?: string[];
  /** Start Prometheus beside the demo, scraping it (`--prometheus`). */
  prometheus?: boolean;
  /** Where that Prometheus listens. */
  prometheusAddress: string;
  /** `--zap-*` logging flags (zap's production defaults when absent: JSON, or console on a terminal). */
  zap?: LogOptions;
}

/** Go's boolean forms, as the generated manager's flags take them (`--leader-elect=True`). */
function parseBool(v: string | undefined): boolean {
  if (v === undefined || v === '') return true;
  const b = parseGoBool(v);
  if (b === undefined)
    throw new UsageError(
      `expected a boolean (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False), got ${JSON.stringify(v)}`,
    );
  return b;
}

/** A duration in seconds: `90`, `90s`, `1m30s`, `500ms` (as the other commands take them). */
const seconds =
  (flag: string) =>
  (v: string): number =>
    parseDuration(v, flag) / 1000;

export function register(program: Command): void {
  const cmd = program
    .command('demo')
    .description(
      'Run the example operator with its secure /metrics endpoint on an embedded API (or --kubeconfig cluster)',
    )
    .option('--state-dir <dir>', 'state of the embedded API, kubeconfig and reader token', '.ctrlmetrics')
    .option('--kubeconfig <file>', 'run against this cluster instead of the embedded API')
    .option(
      '--metrics-bind-address <addr>',
      'metrics endpoint address (":8443" all interfaces, "0" disables)',
      '127.0.0.1:8443',
    )
    .option(
      '--metrics-secure [bool]',
      'serve metrics over HTTPS with authentication and authorization',
      parseBool,
      true,
    )
    .option('--metrics-cert-path <dir>', 'directory of the metrics serving certificate (default: self-signed)')
    .option('--metrics-cert-name <file>', 'certificate file name in --metrics-cert-path', 'tls.crt')
    .option('--metrics-cert-key <file>', 'key file name in --metrics-cert-path', 'tls.key')
    .option('--enable-http2 [bool]', 'offer HTTP/2 on the metrics endpoint', parseBool, false)
    .option('--health-probe-bind-address <addr>', 'address of /healthz and /readyz', '127.0.0.1:8081')
    .option('--leader-elect [bool]', 'enable Lease-based leader election', parseBool, false)
    .option(
      '--leader-election-namespace <ns>',
      `namespace of the leader-election Lease (default: ${SYSTEM_NAMESPACE}; with --kubeconfig, ${WORKLOAD_NAMESPACE})`,
    )
    .option(
      '--duration <duration>',
      'exit after this long, e.g. 90s or 5m (0: run until SIGINT/SIGTERM)',
      seconds('--duration'),
      0,
    )
    .option(
      '--load-interval <duration>',
      'time between updates of the demo objects, e.g. 3s or 500ms',
      seconds('--load-interval'),
      3,
    )
    .option('--api-listen <addr>', 'address of the embedded API', '127.0.0.1:0')
    .option(
      '--crds <sets>',
      'CRDs the embedded API installs at start, comma-separated: prometheus-operator, cert-manager',
      crdsOption,
    )
    .option(
      '--prometheus [bool]',
      'start the prometheus binary on PATH beside the demo, scraping its endpoint, and print graph links',
      parseBool,
      false,
    )
    .option('--prometheus-address <addr>', 'address of that Prometheus', '127.0.0.1:9090');
  addZapOptions(cmd);
  cmd
    // used by `npm start` before it builds: report what would stop the demo without the build's wait
    .addOption(new Option('--preflight', 'only check for conflicts (state directory, addresses) and exit').hideHelp())
    .action(async (o: DemoOptions & { preflight?: boolean }) => {
      if (o.preflight) {
        throwConflicts(await demoConflicts(o));
        return;
      }
      await runDemo(o);
    });
}

/** The manager's identity on the embedded API: a TokenRequest token, renewed before it expires. */
function rotatingToken(
  admin: KubeClient,
  first: { token: string; expiresAt: number },
): () => Promise<Record<string, string>> {
  let current = first;
  return async () => {
    if (current.expiresAt - Date.now() < 10 * 60_000)
      current = await requestToken(admin, SYSTEM_NAMESPACE, MANAGER_SA, 3600);
    return { Authorization: `Bearer ${current.token}` };
  };
}

/** One conflict: its line; several: a list; none: nothing. */
function throwConflicts(conflicts: string[]): void {
  if (conflicts.length === 1) throw new CliError(conflicts[0]);
  if (conflicts.length > 1) throw new CliError(`the demo cannot start:\n  - ${conflicts.join('\n  - ')}`);
}

/** Runs the demo until `signal` aborts, SIGINT/SIGTERM, or `--duration`. */
export async function runDemo(o: DemoOptions, signal?: AbortSignal): Promise<void> {
  configureLogging(o.zap ?? {});
  const log = createLogger('demo');
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      process.stderr.write(`second ${sig}: exiting at once\n`);
      process.exit(1);
    }
    log.info('signal received: shutting down', { signal: sig });
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  signal?.addEventListener('abort', () => stop.abort(), { once: true });
  let durationTimer: NodeJS.Timeout | undefined;
  if (o.duration > 0) durationTimer = setTimeout(() => stop.abort(), o.duration * 1000);

  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    throwConflicts(await demoConflicts(o));
    const stateDir = o.stateDir;
    let managerConfig: RestConfig;
    let admin: KubeClient;
    let readerTokenPath: string | undefined;
    let apiUrl: string;
    let kubeconfigPath: string;

    let prometheusBinary: string | undefined;
    if (o.prometheus) {
      if (o.kubeconfig)
        throw new UsageError(
          "--prometheus runs with the embedded API (it scrapes with the demo's reader token); against a cluster, render a scrape job with `ctrlmetrics prometheus-config`",
        );
      if (isDisabled(o.metricsBindAddress))
        throw new UsageError('--prometheus needs the metrics endpoint: drop --metrics-bind-address 0');
      prometheusBinary = await findPrometheus();
      if (!prometheusBinary)
        throw new CliError(
          '--prometheus needs a prometheus binary on PATH (Debian/Ubuntu: apt-get install prometheus; or a release from prometheus.io)',
        );
    }
    if (o.kubeconfig && o.crds)
      throw new UsageError(
        '--crds installs CRDs into the embedded API; with --kubeconfig install the Prometheus operator or cert-manager in that cluster',
      );
    if (o.kubeconfig) {
      try {
        managerConfig = await loadRestConfig({ kubeconfig: o.kubeconfig });
      } catch (err) {
        throw new CliError((err as Error).message, 1, { cause: err });
      }
      admin = new KubeClient(managerConfig);
      apiUrl = managerConfig.server;
      kubeconfigPath = o.kubeconfig;
      await checkApiReachable(admin, apiUrl).catch((err: Error) => {
        throw new CliError(err.message, 1, { cause: err });
      });
      await applyObject(admin, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WORKLOAD_NAMESPACE } }).catch(
        (err: Error) => {
          const forbidden = /\b403\b|forbidden/i.test(err.message);
          throw new CliError(
            forbidden
              ? `${err.message} (the kubeconfig identity needs create on namespaces, or create the namespace ${WORKLOAD_NAMESPACE} first)`
              : err.message,
            1,
            { cause: err },
          );
        },
      );
    } else {
      await mkdir(stateDir, { recursive: true, mode: 0o700 });
      const unlock = await lockStateDir(stateDir).catch((err: Error) => {
        throw new CliError(err.message, 1, { cause: err });
      });
      cleanups.push(unlock);
      const { startAuthority } = await import('@ctrlmetrics/envtest');
      let authority: Awaited<ReturnType<typeof startAuthority>>;
      try {
        authority = await startAuthority({
          listen: o.apiListen,
          stateDir: resolve(stateDir),
          kubeconfigOut: join(stateDir, 'kubeconfig'),
          crds: o.crds,
          logger: log.child('authority'),
        });
      } catch (err) {
        throw new CliError(`cannot start the embedded API: ${(err as Error).message}`, 1, { cause: err });
      }
      cleanups.push(() => authority.stop());
      apiUrl = authority.url;
      kubeconfigPath = authority.kubeconfig;
      admin = new KubeClient(authority.restConfig);
      cleanups.push(() => admin.close());
      for (const obj of demoRbac()) await applyObject(admin, obj);
      const first = await requestToken(admin, SYSTEM_NAMESPACE, MANAGER_SA, 3600);
      managerConfig = {
        server: authority.restConfig.server,
        ca: authority.restConfig.ca,
        insecureSkipTLSVerify: authority.restConfig.insecureSkipTLSVerify,
        authHeaders: rotatingToken(admin, first),
        userAgent: 'ctrlmetrics-demo-manager',
      };
      readerTokenPath = join(stateDir, 'reader.token');
      // the same token as a header line for `curl -H @FILE`: it never appears on a command line (ps, shell history)
      const headerPath = join(stateDir, 'reader.header');
      const writeReaderToken = async () => {
        const { token } = await requestToken(admin, SYSTEM_NAMESPACE, SCRAPER_SA, 24 * 3600);
        for (const [path, text] of [
          [readerTokenPath!, `${token}\n`],
          [headerPath, `Authorization: Bearer ${token}\n`],
        ] as const) {
          await writeFile(path, text, { mode: 0o600 });
          await chmod(path, 0o600);
        }
      };
      await writeReaderToken();
      const renew = setInterval(
        () =>
          void writeReaderToken().catch((err: Error) =>
            log.warn('cannot renew the reader token', { error: err.message }),
          ),
        12 * 3600_000,
      );
      renew.unref();
      cleanups.push(() => clearInterval(renew));
    }
    if (stop.signal.aborted) return;

    const { newOperator } = await import('../../examples/configmap-operator/operator.js');
    const mgr = newOperator({
      restConfig: managerConfig,
      handleSignals: false,
      healthProbeBindAddress: o.healthProbeBindAddress,
      leaderElection: o.leaderElect,
      leaderElectionNamespace: o.leaderElectionNamespace ?? (o.kubeconfig ? WORKLOAD_NAMESPACE : SYSTEM_NAMESPACE),
      logger: log.child('manager'),
      metrics: {
        bindAddress: o.metricsBindAddress,
        secureServing: o.metricsSecure,
        certDir: o.metricsCertPath,
        certName: o.metricsCertName,
        keyName: o.metricsCertKey,
        enableHTTP2: o.enableHttp2,
        ...(o.metricsSecure ? {} : { filterProvider: undefined }),
      },
    });
    const running = mgr.start(stop.signal);
    try {
      await Promise.race([mgr.ready(), running]);
    } catch (err) {
      throw new CliError(withHint((err as Error).message, o), 1, { cause: err });
    }
    if (stop.signal.aborted) {
      await running.catch(() => undefined);
      return;
    }

    const load = new DemoLoad(admin, WORKLOAD_NAMESPACE, Math.max(100, o.loadInterval * 1000), log.child('load'));
    await load.start().catch((err: Error) => log.warn('cannot create the demo objects', { error: err.message }));
    cleanups.push(() => load.stop());

    // the self-signed serving CA, so a scraper can verify the endpoint (the state dir's ca.crt is the API's CA)
    let metricsCaPath: string | undefined;
    const metricsCa = o.metricsSecure ? mgr.metricsServer?.caPem : undefined;
    if (metricsCa) {
      await mkdir(o.stateDir, { recursive: true, mode: 0o700 });
      metricsCaPath = join(o.stateDir, 'metrics-ca.crt');
      await writeFile(metricsCaPath, metricsCa);
    }
    let prometheus: DemoPrometheus | undefined;
    if (prometheusBinary && mgr.metricsServer) {
      const job = demoScrapeJob({
        metricsUrl: mgr.metricsServer.url,
        secure: o.metricsSecure,
        tokenFile: readerTokenPath && resolve(readerTokenPath),
        caFile: metricsCaPath && resolve(metricsCaPath),
        intervalSeconds: 5,
      });
      prometheus = await startDemoPrometheus({
        binary: prometheusBinary,
        stateDir: resolve(o.stateDir),
        listen: o.prometheusAddress,
        job,
        intervalSeconds: 5,
        log: log.child('prometheus'),
        signal: stop.signal,
      });
      cleanups.push(() => prometheus!.stop());
    }
    printBanner(o, {
      apiUrl,
      kubeconfigPath,
      readerTokenPath,
      metricsUrl: mgr.metricsServer?.url,
      healthUrl: mgr.healthProbeServer?.url,
      metricsCaPath,
      prometheus,
    });
    // stop the load as soon as we are told to stop, before the manager drains
    stop.signal.addEventListener('abort', () => load.stop(), { once: true });
    try {
      await running;
    } catch (err) {
      throw new CliError((err as Error).message, 1, { cause: err });
    }
    process.stdout.write('ctrlmetrics demo stopped\n');
  } finally {
    clearTimeout(durationTimer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    // in reverse order of set-up: load, token renewal, client, authority, state directory lock
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch (err) {
        log.warn('cleanup failed', { error: (err as Error).message });
      }
    }
  }
}

/** Adds what to do to the start-up failures a demo user can fix with a flag. */
function withHint(message: string, o: DemoOptions): string {
  if (/EADDRINUSE|already in use/.test(message)) {
    if (/metrics server/.test(message))
      return `${message} (stop the process using ${o.metricsBindAddress}, or pick a free address with --metrics-bind-address)`;
    if (/health probe/.test(message))
      return `${message} (stop the process using ${o.healthProbeBindAddress}, or pick a free address with --health-probe-bind-address)`;
  }
  if (/EACCES|permission denied/.test(message))
    return `${message} (binding that port needs privileges: use a port above 1023)`;
  return message;
}

function printBanner(
  o: DemoOptions,
  p: {
    apiUrl: string;
    kubeconfigPath: string;
    readerTokenPath?: string;
    metricsUrl?: string;
    healthUrl?: string;
    metricsCaPath?: string;
    prometheus?: DemoPrometheus;
  },
): void {
  const lines = [
    '',
    `ctrlmetrics demo is running: controllers "configmap" and "secret" reconcile objects labelled ctrlmetrics.dev/managed=true in namespace ${WORKLOAD_NAMESPACE}`,
    `  Kubernetes API: ${p.apiUrl}${o.kubeconfig ? ` (kubeconfig ${p.kubeconfigPath})` : ` (embedded; admin kubeconfig: ${p.kubeconfigPath})`}`,
  ];
  if (p.healthUrl) lines.push(`  health probes:  ${p.healthUrl}/healthz  ${p.healthUrl}/readyz`);
  if (p.metricsUrl) {
    lines.push(`  metrics:        ${p.metricsUrl}/metrics`);
    if (p.metricsCaPath)
      lines.push(`  metrics CA:     ${p.metricsCaPath} (the serving certificate's CA; the API's CA is another)`);
    if (!o.metricsSecure) {
      lines.push('', 'Try (plain HTTP, no authentication: --metrics-secure=false):', `  curl ${p.metricsUrl}/metrics`);
    } else if (p.readerTokenPath) {
      // -H @FILE: curl reads the header line from the file, so the token stays off the command line
      const header = join(dirname(p.readerTokenPath), 'reader.header');
      lines.push(
        '',
        'Try (a token of a service account bound to the metrics-reader role):',
        `  curl -k -H @${header} ${p.metricsUrl}/metrics`,
      );
      if (p.metricsCaPath) {
        lines.push(
          'The same with the certificate verified:',
          `  curl --cacert ${p.metricsCaPath} -H @${header} ${p.metricsUrl}/metrics`,
          `  ctrlmetrics scrape ${p.metricsUrl}/metrics --token-file ${p.readerTokenPath} --cacert ${p.metricsCaPath}`,
        );
      }
    } else {
      lines.push(
        '',
        'Scrape with a token of an identity allowed to "get /metrics", e.g. (the header goes through stdin, not the command line):',
        `  kubectl create token SERVICE_ACCOUNT -n NAMESPACE | sed 's/^/Authorization: Bearer /' | curl -k -H @- ${p.metricsUrl}/metrics`,
      );
    }
  } else {
    lines.push('  metrics:        disabled (--metrics-bind-address 0)');
  }
  if (p.prometheus) {
    lines.push(
      '',
      `Prometheus scrapes it every 5s: ${p.prometheus.url} (configuration, data and log in ${p.prometheus.dir})`,
    );
    for (const l of p.prometheus.links) lines.push(`  ${l.title}:`, `    ${l.url}`);
  }
  if (!o.kubeconfig)
    lines.push(
      '',
      'Look at the objects:',
      `  kubectl --kubeconfig ${p.kubeconfigPath} get configmaps,secrets -n ${WORKLOAD_NAMESPACE}`,
    );
  lines.push('', o.duration > 0 ? `Stopping after ${o.duration}s (or Ctrl-C).` : 'Press Ctrl-C to stop.', '');
  process.stdout.write(lines.join('\n') + '\n');
}

/**
 * `ctrlmetrics demo --prometheus`: a Prometheus (the `prometheus` binary on PATH, e.g. Debian's package) beside the
 * demo, scraping its metrics endpoint with the job `ctrlmetrics prometheus-config` renders from the scaffold's
 * ServiceMonitor — the demo's reader token, and the endpoint's certificate verified against the demo's metrics CA.
 * Its configuration, data and log live under `STATE_DIR/prometheus/`; it stops with the demo.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { buildScrapeConfigs } from '../../ops/prometheus-config.js';
import { configPrometheus } from '../../scaffold/templates/config-prometheus.js';
import { PROJECT, SYSTEM_NAMESPACE } from './rbac.js';
import { CliError } from '../errors.js';
import type { Logger } from 'ctrlmetrics/log';

/** The graphs the banner links to: PromQL over the demo's controllers. */
export const DEMO_GRAPHS: ReadonlyArray<{ title: string; expr: string }> = [
  { title: 'reconciles/s per controller', expr: 'sum by (controller) (rate(controller_runtime_reconcile_total[1m]))' },
  {
    title: 'p90 reconcile latency per controller',
    expr: 'histogram_quantile(0.9, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket[1m])))',
  },
];

/** A running Prometheus of the demo. */
export interface DemoPrometheus {
  /** `http://host:port`. */
  url: string;
  dir: string;
  /** Graph page links, with titles. */
  links: Array<{ title: string; url: string }>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** The `prometheus` executable on PATH, or undefined. */
export async function findPrometheus(path = process.env.PATH ?? ''): Promise<string | undefined> {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const file = join(dir, 'prometheus');
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The demo's scrape job: `prometheus-config` of the scaffold's ServiceMonitor, as kustomize names it for the demo. */
export function demoScrapeJob(o: {
  metricsUrl: string;
  secure: boolean;
  tokenFile?: string;
  caFile?: string;
  intervalSeconds: number;
}): Record<string, unknown> {
  const files = configPrometheus({ projectName: PROJECT, domain: 'ctrlmetrics.dev', ctrlmetricsVersion: '*' });
  const monitor = parseYaml(files['config/prometheus/monitor.yaml']) as {
    metadata: { name: string; namespace: string };
  };
  monitor.metadata.name = `${PROJECT}-${monitor.metadata.name}`;
  monitor.metadata.namespace = SYSTEM_NAMESPACE;
  const url = new URL(o.metricsUrl);
  const [job] = buildScrapeConfigs([monitor], {
    target: url.host,
    tokenFile: o.tokenFile,
    caFile: o.caFile,
    pod: `${PROJECT}-controller-manager`,
  });
  const j = job;
  j.scrape_interval = `${o.intervalSeconds}s`;
  j.scrape_timeout = `${o.intervalSeconds}s`;
  if (!o.secure) {
    // --metrics-secure=false: plain HTTP without authentication
    j.scheme = 'http';
    delete j.authorization;
    delete j.tls_config;
  } else if (o.caFile) {
    // the demo's self-signed certificate names 127.0.0.1 and localhost: verify it instead of skipping
    j.tls_config = { ca_file: o.caFile };
  }
  return j;
}

/** A link to Prometheus' graph page for `expr` over the last 15 minutes. */
export function graphLink(base: string, expr: string): string {
  return `${base}/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=0&g0.range_input=15m`;
}

/** Starts Prometheus on `listen` (host:port) and waits until it is ready (bounded). */
export async function startDemoPrometheus(o: {
  binary: string;
  stateDir: string;
  listen: string;
  job: Record<string, unknown>;
  intervalSeconds: number;
  log: Logger;
  readyTimeoutMs?: number;
  /** The demo stopping: the wait for readiness ends (the caller stops the process). */
  signal?: AbortSignal;
}): Promise<DemoPrometheus> {
  const dir = join(o.stateDir, 'prometheus');
  await mkdir(join(dir, 'data'), { recursive: true, mode: 0o700 });
  const configFile = join(dir, 'prometheus.yml');
  const config = {
    global: { scrape_interval: `${o.intervalSeconds}s`, evaluation_interval: `${o.intervalSeconds}s` },
    scrape_configs: [o.job],
  };
  await writeFile(configFile, `# written by ctrlmetrics demo --prometheus\n${toYaml(config)}`);
  const logFile = join(dir, 'prometheus.log');
  const out = createWriteStream(logFile, { flags: 'a' });
  await new Promise<void>((r) => out.once('open', () => r()));
  const child: ChildProcess = spawn(
    o.binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=${o.listen}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', out, out] },
  );
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
    child.once('error', (err) => resolve(err.message));
  });
  const url = `http://${o.listen}`;
  const stop = async (graceMs = 10_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
    }
    out.end();
  };
  const deadline = Date.now() + (o.readyTimeoutMs ?? 30_000);
  for (;;) {
    const gone = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 250))]);
    if (gone !== undefined) {
      out.end();
      const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-3).join('\n');
      throw new CliError(
        `prometheus exited (${gone}) before it was ready${tail ? `:\n${tail}` : ''}\n(its log: ${logFile}; pick another address with --prometheus-address)`,
      );
    }
    if (o.signal?.aborted) break;
    const ready = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new CliError(
        `prometheus did not become ready at ${url} within ${Math.round((o.readyTimeoutMs ?? 30_000) / 1000)}s (its log: ${logFile})`,
      );
    }
  }
  o.log.info('prometheus is ready', { url, dir });
  return { url, dir, links: DEMO_GRAPHS.map((g) => ({ title: g.title, url: graphLink(url, g.expr) })), stop };
}

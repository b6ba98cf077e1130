/**
 * `ctrlmetrics dev`: a scaffolded project's manager run from a terminal against a cluster (pepr's `dev`, kubebuilder's
 * `make install run` with the webhooks working): builds, applies the CRDs and the metrics reader ClusterRole (kept,
 * as `make install`), points the project's webhook configurations and conversions at a webhook server on this machine
 * with a fresh CA (after checking the API server reaches it), runs `dist/main.js` with that serving certificate,
 * rebuilds and restarts it when `src/` changes (`--watch`), and on Ctrl-C puts the webhook configurations back —
 * left behind with `failurePolicy: Fail`, they would make every write of their kinds fail.
 */
import type { Command } from 'commander';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generateSelfSignedCertificate } from 'ctrlmetrics/certwatcher';
import { kubeconfigFileFromEnv } from 'ctrlmetrics/internal';
import { connect } from '../ops/kube.js';
import { OpsError } from '../ops/errors.js';
import {
  installCrds,
  installMetricsReaderRole,
  pointWebhooksAtLocal,
  probeWebhookReachable,
  restore,
  type DevChanges,
  type DevObject,
} from '../ops/dev-cluster.js';
import { readProjectFile } from '../scaffold/project-file.js';
import { CliError, UsageError } from './errors.js';

interface DevFlags {
  dir: string;
  kubeconfig?: string;
  watch?: boolean;
  webhookHost: string;
  webhookPort: string;
  metricsBindAddress: string;
  healthProbeBindAddress: string;
}

const log = (line: string) => process.stderr.write(`dev: ${line}\n`);

/** The kubeconfig file, as kubectl picks it: the flag, the first existing file of KUBECONFIG, ~/.kube/config. */
function kubeconfigFile(flag: string | undefined): string {
  if (flag) {
    if (!existsSync(flag)) throw new CliError(`kubeconfig ${flag} does not exist`);
    return resolve(flag);
  }
  const found = kubeconfigFileFromEnv();
  if (found) return found;
  throw new CliError('no kubeconfig: pass --kubeconfig FILE or set KUBECONFIG to the cluster to run against');
}

function parseDocs(text: string, source: string): DevObject[] {
  const out: DevObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new CliError(`${source}: ${doc.errors[0].message}`);
    const o = doc.toJS() as DevObject | null;
    if (o && typeof o === 'object') out.push(o);
  }
  return out;
}

/** `kubectl kustomize DIR`, parsed; a directory without a kustomization holds nothing to apply yet. */
function kustomize(dir: string): DevObject[] {
  if (!['kustomization.yaml', 'kustomization.yml', 'Kustomization'].some((k) => existsSync(join(dir, k)))) return [];
  try {
    return parseDocs(
      execFileSync('kubectl', ['kustomize', dir], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 60_000,
      }),
      dir,
    );
  } catch (err) {
    if (err instanceof CliError) throw err;
    const e = err as { stderr?: string; message: string; code?: string };
    if (e.code === 'ENOENT')
      throw new CliError('kubectl is not on PATH: ctrlmetrics dev builds config/crd with kubectl kustomize');
    throw new CliError(`kubectl kustomize ${dir} failed: ${(e.stderr || e.message).trim()}`);
  }
}

/** Runs `npm run build` in the project; its output goes to the terminal. */
function build(dir: string): boolean {
  log('npm run build');
  const r = spawnSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.error) throw new CliError(`cannot run npm: ${r.error.message}`);
  return r.status === 0;
}

/** What the project has to serve: the webhook configurations of config/webhook and the CRDs converted by webhook. */
function webhooksOf(dir: string, crds: DevObject[]): { configs: DevObject[]; conversions: string[] } {
  const file = join(dir, 'config', 'webhook', 'manifests.yaml');
  const configs = existsSync(file)
    ? parseDocs(readFileSync(file, 'utf8'), file).filter((o) =>
        /^(Mutating|Validating)WebhookConfiguration$/.test(String(o.kind)),
      )
    : [];
  const conversions = crds
    .filter((c) => (c.spec as { conversion?: { strategy?: string } } | undefined)?.conversion?.strategy === 'Webhook')
    .map((c) => String(c.metadata?.name));
  return { configs, conversions };
}

function portOf(v: string, flag: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535)
    throw new UsageError(`${flag} takes a port number (1-65535), got ${JSON.stringify(v)}`);
  return Number(v);
}

/** Waits for the child to exit (SIGTERM first, SIGKILL after `graceMs`); resolves with its exit code. */
async function stopManager(child: ChildProcess, graceMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

async function run(flags: DevFlags, managerArgs: string[]): Promise<number> {
  const dir = resolve(flags.dir);
  let project: string;
  try {
    project = readProjectFile(dir).projectName;
  } catch {
    throw new CliError(
      `no PROJECT file in ${dir}: run ctrlmetrics dev in a project made by ctrlmetrics init (or pass --dir)`,
    );
  }
  const host = flags.webhookHost;
  const webhookPort = portOf(flags.webhookPort, '--webhook-port');
  const kubeconfig = kubeconfigFile(flags.kubeconfig);
  const client = await connect({ kubeconfig });
  const session = `${hostname()}-${process.pid}`;
  let changes: DevChanges | undefined;
  let certDir: string | undefined;
  let child: ChildProcess | undefined;
  let watcher: FSWatcher | undefined;
  let exitCode: number;
  try {
    try {
      await client.get('/version', { signal: AbortSignal.timeout(15_000) });
    } catch (err) {
      throw new OpsError(
        `cannot reach the cluster at ${client.config.server} (kubeconfig ${kubeconfig}): ${(err as Error).message}`,
        { cause: err },
      );
    }
    if (!build(dir)) throw new CliError('npm run build failed: its output is above');

    // what running outside a pod needs, as make install: the CRDs, and the role `ctrlmetrics grant` binds to
    const crds = kustomize(join(dir, 'config', 'crd')).filter((o) => o.kind === 'CustomResourceDefinition');
    await installCrds(client, crds, log);
    const roleFile = join(dir, 'config', 'rbac', 'metrics_reader_role.yaml');
    if (existsSync(roleFile)) {
      for (const role of parseDocs(readFileSync(roleFile, 'utf8'), roleFile).filter((o) => o.kind === 'ClusterRole')) {
        await installMetricsReaderRole(
          client,
          { ...role, metadata: { ...role.metadata, name: `${project}-${role.metadata?.name}` } },
          log,
        );
      }
    }

    const args = [
      'dist/main.js',
      '--kubeconfig',
      kubeconfig,
      `--metrics-bind-address=${flags.metricsBindAddress}`,
      `--health-probe-bind-address=${flags.healthProbeBindAddress}`,
    ];
    // ENABLE_WEBHOOKS=false: the manager serves none, so none may be pointed at it
    const { configs, conversions } =
      process.env.ENABLE_WEBHOOKS === 'false' ? { configs: [], conversions: [] } : webhooksOf(dir, crds);
    let webhookUrl = '';
    if (configs.length || conversions.length) {
      const cert = await generateSelfSignedCertificate(isIP(host) ? { extraIPs: [host] } : { extraDNSNames: [host] });
      certDir = mkdtempSync(join(tmpdir(), `${project}-dev-certs-`));
      writeFileSync(join(certDir, 'tls.crt'), cert.certPem, { mode: 0o600 });
      writeFileSync(join(certDir, 'tls.key'), cert.keyPem, { mode: 0o600 });
      webhookUrl = `https://${host.includes(':') ? `[${host}]` : host}:${webhookPort}`;
      const server = { url: webhookUrl, caPem: cert.caPem };
      log(`checking that the API server reaches ${webhookUrl}`);
      await probeWebhookReachable(client, project, server, cert, webhookPort);
      changes = await pointWebhooksAtLocal(client, project, configs, conversions, server, session, log);
      args.push(`--webhook-cert-path=${certDir}`, `--webhook-port=${webhookPort}`);
    }
    args.push(...managerArgs);

    let stopping = false;
    let done: (code: number) => void = () => undefined;
    const finished = new Promise<number>((r) => (done = r));
    const start = () => {
      const c = spawn(process.execPath, args, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
      c.once('exit', (code, signal) => {
        if (stopping || c !== child) return;
        log(`the manager exited (${signal ?? `code ${code}`})${flags.watch ? ': waiting for a change in src/' : ''}`);
        if (!flags.watch) done(code ?? 1);
      });
      child = c;
      log(
        `manager running (pid ${c.pid}) against ${client.config.server}${webhookUrl ? `; webhooks served at ${webhookUrl}` : ''}; Ctrl-C stops it${changes ? ' and puts the webhook configurations back' : ''}`,
      );
    };
    start();

    if (flags.watch) {
      let timer: NodeJS.Timeout | undefined;
      let rebuilding = false;
      const rebuild = async () => {
        if (rebuilding || stopping) return;
        rebuilding = true;
        try {
          log('src/ changed: rebuilding');
          if (!build(dir)) {
            log('npm run build failed: the manager keeps running as it was; fix the error and save again');
            return;
          }
          // forgotten first, so its exit is not taken for the manager ending on its own
          const old = child;
          child = undefined;
          if (old) await stopManager(old);
          if (!stopping) start();
        } finally {
          rebuilding = false;
        }
      };
      watcher = watch(join(dir, 'src'), { recursive: true }, () => {
        clearTimeout(timer);
        timer = setTimeout(() => void rebuild(), 300);
      });
    }

    const onSignal = (sig: NodeJS.Signals) => {
      if (stopping) {
        log(`second ${sig}: exiting without waiting`);
        process.exit(130);
      }
      stopping = true;
      log(`${sig}: stopping the manager`);
      done(0);
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    try {
      exitCode = await finished;
    } finally {
      stopping = true;
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    }
  } finally {
    watcher?.close();
    if (child) await stopManager(child);
    try {
      if (changes) await restore(client, changes, log);
    } finally {
      client.close();
      if (certDir) rmSync(certDir, { recursive: true, force: true });
    }
  }
  return exitCode;
}

export function register(program: Command): void {
  program
    .command('dev')
    .description(
      "Run a scaffolded project's manager against a cluster from this machine: build, install the CRDs, serve the webhooks locally, restore on Ctrl-C",
    )
    .argument('[manager-args...]', 'flags passed on to the manager (after --)')
    .option('--dir <dir>', 'the project (a directory with a PROJECT file)', '.')
    .option('--kubeconfig <file>', 'the cluster (default: KUBECONFIG, then ~/.kube/config)')
    .option('--watch', 'rebuild and restart the manager when src/ changes')
    .option('--webhook-host <host>', 'address of this machine the API server calls the webhooks at', '127.0.0.1')
    .option('--webhook-port <port>', 'port the webhook server listens on', '9443')
    .option('--metrics-bind-address <address>', "the manager's metrics endpoint", '127.0.0.1:8443')
    .option('--health-probe-bind-address <address>', "the manager's health probes", '127.0.0.1:8081')
    .action(async (managerArgs: string[], flags: DevFlags) => {
      const code = await run(flags, managerArgs);
      if (code !== 0) throw new CliError(`the manager exited with code ${code}`, code);
    });
}

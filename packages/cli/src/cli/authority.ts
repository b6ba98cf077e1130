/**
 * `ctrlmetrics authority`: runs the embedded Kubernetes-API-compatible authority in the foreground until
 * SIGTERM/SIGINT, and writes an admin kubeconfig that works with kubectl and @kubernetes/client-node.
 *
 * `--crds prometheus-operator,cert-manager` installs those projects' CRDs first (see `src/authority/crds.ts`).
 * `--apply` takes YAML files, directories of YAML files, and kustomize directories (built with `kubectl kustomize`).
 * Overlays can also be applied once it runs: `kubectl --kubeconfig FILE apply -k DIR`.
 */
import type { Command } from 'commander';
import { CliError } from './errors.js';
import { startAuthority } from '@ctrlmetrics/envtest';
import { createLogger } from 'ctrlmetrics/log';
import { ListenError } from 'ctrlmetrics/internal';
import { CRD_SETS } from '@ctrlmetrics/envtest';
import { crdsOption } from './crds-option.js';

/** Parsed flags of `ctrlmetrics authority`. */
export interface AuthorityCliOptions {
  listen: string;
  stateDir?: string;
  kubeconfigOut?: string;
  apply?: string[];
  tokenAuthFile?: string;
  /** CRD sets to install at start (`prometheus-operator`, `cert-manager`). */
  crds?: string[];
}

/** Runs the authority until a signal arrives (or `signal` aborts, for tests). */
export async function runAuthority(o: AuthorityCliOptions, signal?: AbortSignal): Promise<void> {
  const log = createLogger('authority');
  let authority;
  try {
    authority = await startAuthority({
      listen: o.listen,
      stateDir: o.stateDir,
      kubeconfigOut: o.kubeconfigOut,
      apply: o.apply ?? [],
      tokenAuthFile: o.tokenAuthFile,
      crds: o.crds,
      logger: log,
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // the server core's ListenError keeps the system's code apart from its own
    const code = err instanceof ListenError ? err.systemCode : e.code;
    if (code === 'EADDRINUSE')
      throw new CliError(`cannot listen on ${o.listen}: the address is already in use (pick another --listen port)`);
    if (code === 'EACCES')
      throw new CliError(`cannot listen on ${o.listen}: permission denied (use a port above 1024)`);
    throw new CliError(e.message, 1, { cause: e });
  }
  log.info('authority ready', {
    url: authority.url,
    kubeconfig: authority.kubeconfig,
    stateDir: o.stateDir ?? '(in memory)',
  });
  await new Promise<void>((resolve) => {
    const done = () => {
      process.off('SIGTERM', done);
      process.off('SIGINT', done);
      resolve();
    };
    process.on('SIGTERM', done);
    process.on('SIGINT', done);
    signal?.addEventListener('abort', done, { once: true });
  });
  log.info('authority stopping');
  await authority.stop();
}

export function register(program: Command): void {
  program
    .command('authority')
    .description(
      'Run the embedded Kubernetes-API-compatible authority (TokenReview, SubjectAccessReview, RBAC, objects) until SIGTERM/SIGINT',
    )
    .option('--listen <host:port>', 'address to listen on', '127.0.0.1:6443')
    .option('--state-dir <dir>', 'directory for the CA, keys, admin token and objects (default: in memory)')
    .option(
      '--kubeconfig-out <file>',
      'where to write the admin kubeconfig (default: <state-dir>/kubeconfig, or a temp file)',
    )
    .option(
      '--apply <fileOrDir...>',
      'YAML files, directories, or kustomize directories to create/update at start (repeatable)',
    )
    .option(
      '--crds <sets>',
      `install upstream APIs' CRDs at start, comma-separated: ${Object.keys(CRD_SETS).join(', ')} (for overlays with a ServiceMonitor or cert-manager)`,
      crdsOption,
    )
    .option('--token-auth-file <file>', 'static tokens, kube-apiserver format: token,user,uid,"group1,group2"')
    .action(async (opts: AuthorityCliOptions) => {
      await runAuthority(opts);
    });
}

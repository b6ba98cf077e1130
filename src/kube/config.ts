/**
 * Loading how to reach the Kubernetes API: an explicit kubeconfig file, `KUBECONFIG`, the in-cluster service
 * account, `~/.kube/config` — the order of controller-runtime's `ctrl.GetConfig()`.
 *
 * Static identities (token, token file, client certificate, in-cluster) are read by the light reader in
 * `kubeconfig.ts`. Identities whose credentials come from running code (exec plugins, auth providers) are
 * delegated to `@kubernetes/client-node`, the field-standard implementation, imported only then because it
 * costs ≈0.4 s and ≈70 MB to load. Requests themselves go through {@link KubeClient}, not through client-node,
 * because client-node opens a new TLS connection per call.
 */
import { existsSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { KubeConfigError, type LoadConfigOptions, type RestConfig } from './config-types.js';
import { inClusterConfig, needsCredentialPlugin, readKubeconfig, restConfigOf, selectContext } from './kubeconfig.js';

export type { RestConfig, LoadConfigOptions } from './config-types.js';
export { KubeConfigError } from './config-types.js';

const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** True when running inside a pod (the service-account token is mounted and the API host is known). */
export function inCluster(): boolean {
  return !!process.env.KUBERNETES_SERVICE_HOST && existsSync(join(SERVICE_ACCOUNT_DIR, 'token'));
}

/**
 * No configuration anywhere: what was looked for and why each place gave nothing, then what to pass. The same
 * for every command, a Manager and `loadRestConfig()`.
 */
function nothingConfigured(home: string): string {
  const env = process.env.KUBECONFIG;
  const kubeconfigEnv = env ? `KUBECONFIG names no existing file (${env})` : 'KUBECONFIG is not set';
  const inPod = process.env.KUBERNETES_SERVICE_HOST
    ? `no service-account token at ${SERVICE_ACCOUNT_DIR}/token`
    : 'not in a pod (KUBERNETES_SERVICE_HOST is not set)';
  return (
    `no Kubernetes API configured: no kubeconfig was given, ${kubeconfigEnv}, ${inPod}, and ${home} does not exist. ` +
    'Pass a kubeconfig (--kubeconfig FILE on the command line, the kubeconfig option of Manager and loadRestConfig) or set KUBECONFIG; ' +
    'for a local API without a cluster, run `ctrlmetrics authority --kubeconfig-out FILE` and pass that FILE'
  );
}

/**
 * The kubeconfig file kubectl reads outside a pod: the first existing file of `$KUBECONFIG`, else `~/.kube/config`
 * when it exists; undefined when there is neither. For tools that run outside a pod and hand the file on.
 */
export function kubeconfigFileFromEnv(): string | undefined {
  const fromEnv = process.env.KUBECONFIG?.split(':').find((f) => f && existsSync(f));
  if (fromEnv) return resolve(fromEnv);
  const home = join(homedir(), '.kube', 'config');
  return existsSync(home) ? home : undefined;
}

/**
 * Loads a {@link RestConfig}. Order: `options.kubeconfig`, the first existing file of `$KUBECONFIG`,
 * in-cluster, `~/.kube/config`. Throws {@link KubeConfigError} with a message that says what to do when
 * nothing usable is found.
 */
export async function loadRestConfig(options: LoadConfigOptions = {}): Promise<RestConfig> {
  if (options.kubeconfig && !existsSync(options.kubeconfig)) {
    throw new KubeConfigError(`kubeconfig ${options.kubeconfig} does not exist`);
  }
  const home = join(homedir(), '.kube', 'config');
  let file = options.kubeconfig ?? process.env.KUBECONFIG?.split(':').find((f) => f && existsSync(f));
  if (!file && inCluster() && !options.context) return inClusterConfig(process.env, SERVICE_ACCOUNT_DIR);
  if (!file && existsSync(home)) file = home;
  if (!file) throw new KubeConfigError(nothingConfigured(home));
  const kc = await readKubeconfig(file);
  const { cluster, user } = selectContext(kc, options.context);
  if (needsCredentialPlugin(user)) return loadWithClientNode(file, options.context);
  return restConfigOf(kc, cluster, user);
}

/** Exec plugins and auth providers: client-node runs them (and re-runs them when their credentials expire). */
async function loadWithClientNode(file: string, context: string | undefined): Promise<RestConfig> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromFile(file);
    if (context) kc.setCurrentContext(context);
  } catch (err) {
    // YAML parse errors carry a multi-line code frame: one line is enough to say what and where
    const reason = ((err as Error).message ?? String(err)).split('\n')[0]!.trim();
    throw new KubeConfigError(`cannot load kubeconfig ${file}: ${reason}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster || !cluster.server) throw new KubeConfigError(`kubeconfig ${file}: its current context names no cluster with a server: pick a context with --context, or fix the file`);
  const opts: RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(opts);
  } catch (err) {
    throw new KubeConfigError(`cannot apply kubeconfig credentials: ${(err as Error).message}`);
  }
  const headers = (opts.headers ?? {}) as Record<string, string>;
  const config: RestConfig = {
    server: cluster.server.replace(/\/+$/, ''),
    ca: opts.ca as string | Buffer | undefined,
    cert: opts.cert as string | Buffer | undefined,
    key: opts.key as string | Buffer | undefined,
    insecureSkipTLSVerify: opts.rejectUnauthorized === false || cluster.skipTLSVerify === true,
  };
  const auth = headers.Authorization ?? headers.authorization;
  if (auth?.startsWith('Bearer ')) config.token = auth.slice(7);
  // exec plugins and auth providers rotate: re-apply the kubeconfig to get fresh headers
  config.authHeaders = async () => {
    const o: RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    return (o.headers ?? {}) as Record<string, string>;
  };
  return config;
}

/** Builds a kubeconfig YAML document (as a plain object) for a server, CA and bearer token. */
export function kubeconfigFor(params: {
  server: string;
  caPem: string;
  token: string;
  clusterName?: string;
  userName?: string;
  namespace?: string;
}): Record<string, unknown> {
  const cluster = params.clusterName ?? 'ctrlmetrics';
  const user = params.userName ?? 'admin';
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: cluster, cluster: { server: params.server, 'certificate-authority-data': Buffer.from(params.caPem).toString('base64') } },
    ],
    users: [{ name: user, user: { token: params.token } }],
    contexts: [{ name: cluster, context: { cluster, user, ...(params.namespace ? { namespace: params.namespace } : {}) } }],
    'current-context': cluster,
    preferences: {},
  };
}

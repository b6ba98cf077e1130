/**
 * Loading how to reach the Kubernetes API: an explicit kubeconfig file, `KUBECONFIG`, the in-cluster service
 * account, `~/.kube/config` — the order of controller-runtime's `ctrl.GetConfig()`.
 *
 * Static identities (token, token file, client certificate, in-cluster) are read by the light reader in
 * `kubeconfig.ts`; exec credential plugins are run by `exec-credential.ts`. Auth providers (oidc, the removed gcp
 * and azure ones) are delegated to `@kubernetes/client-node`, an optional peer dependency imported only then (it
 * costs ≈0.4 s and ≈70 MB to load). Requests themselves go through {@link KubeClient}, not through client-node,
 * because client-node opens a new TLS connection per call.
 */
import { existsSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { KubeConfigError, type LoadConfigOptions, type RestConfig } from './config-types.js';
import {
  inClusterConfig,
  needsCredentialPlugin,
  readKubeconfig,
  restConfigOf,
  selectContext,
  type KubeconfigUser,
  type ParsedKubeconfig,
} from './kubeconfig.js';
import type { ExecClusterInfo, ExecCredentials } from './exec-credential.js';

export type { RestConfig, LoadConfigOptions, AuthHeadersRequest } from './config-types.js';
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
  if (user?.exec) return withExecPlugin(kc, cluster, user);
  if (needsCredentialPlugin(user)) return loadWithClientNode(file, options.context);
  return restConfigOf(kc, cluster, user);
}

/**
 * A user with an exec credential plugin: the plugin runs now (its errors are the load's) and again as its
 * credentials expire or are refused. A token or client certificate written beside it wins, as in client-go.
 */
async function withExecPlugin(
  kc: ParsedKubeconfig,
  cluster: Record<string, unknown>,
  user: KubeconfigUser,
): Promise<RestConfig> {
  const { exec, ...rest } = user;
  const config = restConfigOf(kc, cluster, rest);
  if (config.token || config.cert) return config;
  const ca = config.ca;
  const extensions = Array.isArray(cluster.extensions) ? (cluster.extensions as Array<Record<string, unknown>>) : [];
  const info: ExecClusterInfo = {
    server: config.server,
    ...(typeof cluster['tls-server-name'] === 'string' ? { 'tls-server-name': cluster['tls-server-name'] } : {}),
    ...(config.insecureSkipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
    ...(ca ? { 'certificate-authority-data': Buffer.from(ca).toString('base64') } : {}),
    ...(typeof cluster['proxy-url'] === 'string' ? { 'proxy-url': cluster['proxy-url'] } : {}),
    ...(() => {
      const ext = extensions.find((e) => e?.name === 'client.authentication.k8s.io/exec');
      return ext && ext.extension !== undefined ? { config: ext.extension } : {};
    })(),
  };
  // loaded only for such users: importing the library does not load node:child_process
  const { ExecCredentialPlugin } = await import('./exec-credential.js');
  const plugin = new ExecCredentialPlugin(exec, info, dirname(kc.file), `kubeconfig ${kc.file}`);
  let given: ExecCredentials;
  try {
    given = await plugin.credentials();
  } catch (err) {
    if (err instanceof KubeConfigError) throw err;
    throw new KubeConfigError(`kubeconfig ${kc.file}: getting credentials: ${(err as Error).message}`, { cause: err });
  }
  if (given.cert && given.key) {
    config.cert = given.cert;
    config.key = given.key;
  }
  if (given.token) config.token = given.token;
  config.authHeaders = async (request): Promise<Record<string, string>> => {
    given = request?.unauthorized ? await plugin.refused(given) : await plugin.credentials();
    return given.token ? { Authorization: `Bearer ${given.token}` } : {};
  };
  return config;
}

/**
 * Auth providers (`users[].user.auth-provider`: oidc, and the gcp and azure ones client-go removed in 1.26):
 * `@kubernetes/client-node` runs them when the application has installed it (an optional peer dependency).
 */
async function loadWithClientNode(file: string, context: string | undefined): Promise<RestConfig> {
  let k8s: typeof import('@kubernetes/client-node');
  try {
    k8s = await import('@kubernetes/client-node');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new KubeConfigError(
      `kubeconfig ${file}: its user authenticates with an auth-provider, which needs the optional package @kubernetes/client-node: ` +
        'install it (npm install @kubernetes/client-node), or use an exec credential plugin (kubectl and client-go removed the gcp and azure providers in Kubernetes 1.26)',
    );
  }
  const kc = new k8s.KubeConfig();
  try {
    kc.loadFromFile(file);
    if (context) kc.setCurrentContext(context);
  } catch (err) {
    // YAML parse errors carry a multi-line code frame: one line is enough to say what and where
    const reason = ((err as Error).message ?? String(err)).split('\n')[0].trim();
    throw new KubeConfigError(`cannot load kubeconfig ${file}: ${reason}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster || !cluster.server)
    throw new KubeConfigError(
      `kubeconfig ${file}: its current context names no cluster with a server: pick a context with --context, or fix the file`,
    );
  const opts: RequestOptions = {};
  try {
    await kc.applyToHTTPSOptions(opts);
  } catch (err) {
    throw new KubeConfigError(`cannot apply kubeconfig credentials: ${(err as Error).message}`, { cause: err });
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
      {
        name: cluster,
        cluster: { server: params.server, 'certificate-authority-data': Buffer.from(params.caPem).toString('base64') },
      },
    ],
    users: [{ name: user, user: { token: params.token } }],
    contexts: [
      { name: cluster, context: { cluster, user, ...(params.namespace ? { namespace: params.namespace } : {}) } },
    ],
    'current-context': cluster,
    preferences: {},
  };
}

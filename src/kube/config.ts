/**
 * Loading how to reach the Kubernetes API: an explicit kubeconfig file, `KUBECONFIG`, `~/.kube/config`,
 * or the in-cluster service account — the same order as controller-runtime's `ctrl.GetConfig()`.
 *
 * Parsing kubeconfig files (contexts, exec credential plugins, auth providers, in-cluster token files) is
 * delegated to `@kubernetes/client-node`, the field-standard implementation; it is imported lazily because
 * it costs ~0.5 s to load. Requests themselves go through {@link KubeClient}, not through client-node,
 * because client-node opens a new TLS connection per call.
 */
import { existsSync } from 'node:fs';
import type { RequestOptions } from 'node:https';

/** Everything needed to open authenticated HTTPS connections to one API server. */
export interface RestConfig {
  /** API server base URL, e.g. `https://10.96.0.1:443`. */
  server: string;
  /** PEM CA bundle that signs the API server's certificate (absent: the system roots). */
  ca?: string | Buffer;
  /** Client certificate and key (PEM) when the identity is an X.509 user. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Skip verifying the API server's certificate (kubeconfig `insecure-skip-tls-verify`). */
  insecureSkipTLSVerify?: boolean;
  /** Static bearer token. */
  token?: string;
  /**
   * Returns the current request headers (e.g. `Authorization`) for identities whose credentials rotate
   * (in-cluster token files, exec plugins). Called at most once a minute.
   */
  authHeaders?: () => Promise<Record<string, string>>;
  /** Client-side rate limit (requests per second) and burst, as client-go's QPS/Burst (default 20/30). */
  qps?: number;
  burst?: number;
  /** User agent sent with every request. */
  userAgent?: string;
  /** Impersonation, as `kubectl --as` / `--as-group`. */
  impersonateUser?: string;
  impersonateGroups?: string[];
}

/** Where to load the configuration from. */
export interface LoadConfigOptions {
  /** Path to a kubeconfig file; wins over `KUBECONFIG` and the in-cluster config. */
  kubeconfig?: string;
  /** Context name inside the kubeconfig (default: its current context). */
  context?: string;
}

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** True when running inside a pod (the service-account token is mounted and the API host is known). */
export function inCluster(): boolean {
  return !!process.env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN);
}

/** Error raised when no usable configuration can be found or the file is malformed. */
export class KubeConfigError extends Error {
  override name = 'KubeConfigError';
}

/**
 * Loads a {@link RestConfig}. Order: `options.kubeconfig`, `$KUBECONFIG`, in-cluster, `~/.kube/config`.
 * Throws {@link KubeConfigError} with a message that says what to do when nothing usable is found.
 */
export async function loadRestConfig(options: LoadConfigOptions = {}): Promise<RestConfig> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  const file = options.kubeconfig ?? process.env.KUBECONFIG?.split(':').find((f) => f && existsSync(f));
  try {
    if (options.kubeconfig && !existsSync(options.kubeconfig)) {
      throw new KubeConfigError(`kubeconfig ${options.kubeconfig} does not exist`);
    }
    if (file) kc.loadFromFile(file);
    else if (inCluster()) kc.loadFromCluster();
    else kc.loadFromDefault();
    if (options.context) kc.setCurrentContext(options.context);
  } catch (err) {
    if (err instanceof KubeConfigError) throw err;
    // YAML parse errors carry a multi-line code frame: one line is enough to say what and where
    const reason = ((err as Error).message ?? String(err)).split('\n')[0]!.trim();
    throw new KubeConfigError(`cannot load kubeconfig${file ? ` ${file}` : ''}: ${reason}`);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster || !cluster.server) {
    throw new KubeConfigError(
      'no Kubernetes API configured: pass --kubeconfig FILE, set KUBECONFIG, or run inside a cluster ' +
        '(for a local API run `ctrlmetrics authority --kubeconfig-out FILE`)',
    );
  }
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
  // Tokens from files (in-cluster) and exec plugins rotate: re-apply the kubeconfig to get fresh headers.
  const user = kc.getCurrentUser();
  if (user && (user.exec || user.authProvider || (user as { tokenFile?: string }).tokenFile || inCluster())) {
    config.authHeaders = async () => {
      const o: RequestOptions = {};
      await kc.applyToHTTPSOptions(o);
      return (o.headers ?? {}) as Record<string, string>;
    };
  }
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

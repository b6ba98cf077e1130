/** The types of {@link loadRestConfig}'s answer and errors, shared by the kubeconfig readers. */
/** What a {@link RestConfig.authHeaders} provider is told when asked. */
export interface AuthHeadersRequest {
  /** The API server answered 401 to the credentials given last: renew them (an exec plugin runs again). */
  unauthorized?: boolean;
}

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
   * (in-cluster token files, exec plugins). Called at most once a minute, and at once after the API server
   * answered 401 (with `unauthorized: true`).
   */
  authHeaders?: (request?: AuthHeadersRequest) => Promise<Record<string, string>>;
  /**
   * Client-side rate limit (requests per second) and burst, as client-go's QPS/Burst; a negative `qps` turns the
   * limit off (what controller-runtime's `GetConfig` does, leaving it to the API server's Priority and Fairness).
   * Default 20/30, kube-controller-manager's `--kube-api-qps`/`--kube-api-burst`: not client-go's 5/10 (too slow
   * for a controller's start-up lists) and not off, so a runaway reconcile loop stays bounded on the client side.
   */
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

/** Error raised when no usable configuration can be found or the file is malformed. */
export class KubeConfigError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_KUBECONFIG';
  override name = 'KubeConfigError';
}

import { CtrlmetricsError } from '../util/errors.js';

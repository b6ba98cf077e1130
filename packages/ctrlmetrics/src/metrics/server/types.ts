/** Public types of the metrics server (contract B). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { TlsConfig } from '../../httpserver/tls.js';
import type { KubeClient } from '../../kube/client.js';
import type { RestConfig } from '../../kube/config.js';
import type { Logger } from '../../util/log.js';
import type { MetricsSnapshot } from '../index.js';

/**
 * An HTTP handler, for HTTP/1.1 and (when enabled) HTTP/2 requests alike. What it returns is ignored, except that
 * a returned promise is awaited (a rejection answers 500), so `(req, res) => res.end('ok')` is a handler too.
 */
export type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => unknown;

/**
 * Wraps a handler, e.g. with authentication and authorization. A filter that holds resources (its own API
 * client) releases them in `close`, which the server calls when it stops.
 */
export type Filter = ((log: Logger, handler: Handler) => Handler) & {
  /** Releases what the filter holds (the server calls it on stop). */
  close?(): void;
};

/**
 * Builds the filter once at server start, from the manager's API config and client (shared caches for all paths).
 * A filter that calls the API often should build its own client from `config` rather than share `client`, whose
 * rate limit the manager's lease renewals and reconciles depend on.
 */
export type FilterProvider = (config: RestConfig, client: KubeClient) => Filter | Promise<Filter>;

/** TLS options a `tlsOpts` function may adjust. */
export type { TlsConfig };

/** The `metrics` options block of a manager (controller-runtime's `metricsserver.Options`). */
export interface MetricsOptions {
  /** Address to listen on (default `':8443'`). `'0'` (or `''`) disables the server; `':8443'` all interfaces; `'127.0.0.1:0'` an ephemeral port. */
  bindAddress?: string;
  /** Serve HTTPS (default true). */
  secureServing?: boolean;
  /** Directory of the serving certificate and key. Absent: a self-signed certificate is generated in memory. */
  certDir?: string;
  /** Certificate file name in `certDir` (default `tls.crt`). */
  certName?: string;
  /** Key file name in `certDir` (default `tls.key`). */
  keyName?: string;
  /**
   * Functions that adjust the TLS options, applied in order before the certificate is chosen. If they set
   * `cert`/`key`, `pfx` or `SNICallback`, those are used as given and neither `certDir` nor a self-signed
   * certificate is used. `minVersion` below TLSv1.2 is raised to TLSv1.2.
   */
  tlsOpts?: Array<(o: TlsConfig) => void>;
  /**
   * PEM file of the CAs whose client certificates identify a caller (absent: no client certificates). The server
   * then asks every client for a certificate without requiring one; the authentication filter takes a verified
   * certificate's CN as the user and its O values as groups (as kube-apiserver does), answers 401 to a certificate
   * from another CA, and falls back to the bearer token when none is presented. The certificate's user still needs
   * a static authorization rule or RBAC (a SubjectAccessReview) for the path. Read once at start.
   */
  clientCAFile?: string;
  /** Offer HTTP/2 (default false: ALPN offers only `http/1.1`, against CVE-2023-44487). */
  enableHTTP2?: boolean;
  /** Builds the filter every path is wrapped with (e.g. `filters.withAuthenticationAndAuthorization`). */
  filterProvider?: FilterProvider;
  /** More paths served beside `/metrics`, each behind the same filter. A key ending in `/` serves its subtree. */
  extraHandlers?: Record<string, Handler>;
  /** DNS names added to the self-signed certificate (e.g. `my-svc.my-ns.svc`). */
  extraDNSNames?: string[];
  /** IP addresses added to the self-signed certificate. */
  extraIPs?: string[];
  /** How long a graceful stop waits for in-flight requests (default 60 000 ms). */
  shutdownTimeoutMs?: number;
  /**
   * Most connections open at once (default 1024). At the cap a new connection closes the oldest one with no
   * request in flight (one that never sent a request first); it is refused only when every connection is busy.
   */
  maxConnections?: number;
}

/** What the metrics server needs from its manager. */
export interface MetricsServerDeps {
  /** The manager's API configuration, given to `filterProvider`. */
  restConfig?: RestConfig;
  /** The manager's API client, given to `filterProvider` (built from `restConfig` when absent). */
  kubeClient?: KubeClient;
  logger?: Logger;
  /** Where `/metrics` collects from (default: the global registry). */
  registry?: MetricsSource;
}

/** What `/metrics` needs from a registry. */
export interface MetricsSource {
  /** Collects every family once, within `timeoutMs` (a collector past it fails the collect). */
  collect(opts?: { timeoutMs?: number }): Promise<MetricsSnapshot>;
}

/** A running (or startable) metrics server. */
export interface MetricsServer {
  /** Listens; resolves once listening. Rejects with a clear error (bad address, missing certificate file, …). */
  start(signal?: AbortSignal): Promise<void>;
  /** `https://host:port` (or `http://`) of the listener, once started. */
  readonly url: string;
  /** The bound port, once started. */
  readonly port: number;
  /** The CA of the in-memory self-signed certificate (PEM), for clients that want to verify it; else undefined. */
  readonly caPem: string | undefined;
  /** Graceful stop: no new connections, in-flight requests finish within `shutdownTimeoutMs`, then close. */
  stop(): Promise<void>;
  /** Adds a path; throws for `/metrics` or a duplicate. */
  addExtraHandler(path: string, handler: Handler): void;
}

/**
 * The metrics server (controller-runtime's `pkg/metrics/server`).
 *
 * A request's path: socket (bounded count, header size and timeouts) → TLS (>= 1.2; ALPN `http/1.1`, or
 * `h2` too when enabled) → target and body (request.ts: origin form; 413 over 4 KiB; a body closes the
 * connection after the answer; no 100 Continue) → route (unknown path: 404 before any auth work) → filter (e.g. TokenReview +
 * SubjectAccessReview) → handler (`/metrics`: collect, render, gzip; see scrape.ts) → socket.
 */
import http from 'node:http';
import type http2 from 'node:http2';
import https from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { CertWatcher } from '../../certwatcher/certwatcher.js';
import { KubeClient } from '../../kube/client.js';
import { isDisabled, parseBindAddress } from '../../util/bind-address.js';
import { createLogger, type Logger } from '../../util/log.js';
import { registry } from '../index.js';
import { ConnectionTracker, boundUrl, closeGracefully } from './connections.js';
import { ConnectionGuard } from './connection-guard.js';
import { answerPlainHttp } from '../../util/plain-http.js';
import { sendText } from './respond.js';
import { closeAfterAnswer, declaredBody, MAX_BODY_BYTES, pathOf, toOriginForm } from './request.js';
import { metricsHandler } from './scrape.js';
import { resolveServingTls } from './tls.js';
import type { Filter, Handler, MetricsOptions, MetricsServer, MetricsServerDeps, TlsConfig } from './types.js';

/** Default listen address, as the kubebuilder scaffold serves metrics. */
export const DEFAULT_BIND_ADDRESS = ':8443';
const METRICS_PATH = '/metrics';

/** Largest request head (request line + headers); bigger gets 431. */
const MAX_HEADER_BYTES = 16 * 1024;
/** Time to send the request head (against slowloris). */
const HEADERS_TIMEOUT_MS = 10_000;
/** Time to send the whole request. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Idle keep-alive time, longer than common scrape intervals so Prometheus reuses its connection. */
const KEEP_ALIVE_TIMEOUT_MS = 90_000;
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * A connection that has started no request by then is closed whatever the mode (connection-guard.ts). Longer
 * than the header timeout plus Node's 1 s check, so in HTTP/1.1 mode Node answers a slow head with 408 first;
 * the guard is what closes HTTP/2 sessions without a stream and the HTTP/2 server's HTTP/1.1 fallback.
 */
const IDLE_HOLD_TIMEOUT_MS = HEADERS_TIMEOUT_MS + 2_000;
const DEFAULT_MAX_CONNECTIONS = 1024;
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 60_000;

type AnyServer = http.Server | https.Server | http2.Http2SecureServer;

/**
 * Creates the metrics server; call `start()` to listen. With `bindAddress: '0'` it is a server that does nothing.
 * Throws when `extraHandlers` tries to override `/metrics`.
 */
export function createMetricsServer(options: MetricsOptions, deps: MetricsServerDeps = {}): MetricsServer {
  const log = deps.logger ?? createLogger('controller-runtime.metrics');
  const bindAddress = options.bindAddress ?? DEFAULT_BIND_ADDRESS;
  if (isDisabled(bindAddress)) return new DisabledMetricsServer(log);
  return new HttpMetricsServer(options, bindAddress, deps, log);
}

/** `bindAddress: '0'`: nothing is served. */
class DisabledMetricsServer implements MetricsServer {
  readonly url = '';
  readonly port = 0;
  readonly caPem = undefined;
  constructor(private readonly log: Logger) {}
  async start(): Promise<void> {
    this.log.info('metrics server is disabled (bindAddress "0")');
  }
  async stop(): Promise<void> {}
  addExtraHandler(path: string): void {
    this.log.warn('metrics server is disabled: the extra handler is ignored', { path });
  }
}

class HttpMetricsServer implements MetricsServer {
  private readonly handlers = new Map<string, Handler>();
  /** The handlers wrapped with the filter, by path (built at start; later additions are wrapped at once). */
  private readonly routes = new Map<string, Handler>();
  private filter: Filter | undefined;
  private server: AnyServer | undefined;
  private tracker: ConnectionTracker | undefined;
  private guard: ConnectionGuard | undefined;
  private watcher: CertWatcher | undefined;
  private ownClient: KubeClient | undefined;
  private stopping: Promise<void> | undefined;
  private address: AddressInfo | undefined;
  private secure: boolean;
  caPem: string | undefined;

  constructor(
    private readonly opts: MetricsOptions,
    private readonly bindAddress: string,
    private readonly deps: MetricsServerDeps,
    private readonly log: Logger,
  ) {
    this.secure = opts.secureServing ?? true;
    this.handlers.set(METRICS_PATH, metricsHandler(deps.registry ?? registry, log));
    for (const [path, handler] of Object.entries(opts.extraHandlers ?? {})) this.addExtraHandler(path, handler);
  }

  get port(): number {
    return this.address?.port ?? 0;
  }

  get url(): string {
    return this.address ? boundUrl(this.address, this.secure ? 'https' : 'http') : '';
  }

  addExtraHandler(path: string, handler: Handler): void {
    if (path === METRICS_PATH) throw new Error('overriding the built-in /metrics endpoint is not allowed');
    if (!path.startsWith('/')) throw new Error(`extra handler path ${JSON.stringify(path)} must start with "/"`);
    if (this.handlers.has(path)) throw new Error(`an extra handler for ${path} is already registered on the metrics server`);
    this.handlers.set(path, handler);
    if (this.server) this.routes.set(path, this.wrap(path, handler));
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.server) throw new Error('the metrics server is already started');
    this.log.info('Starting metrics server');
    const { host, port } = parseBindAddress(this.bindAddress);
    try {
      this.filter = await this.buildFilter();
      for (const [path, handler] of this.handlers) this.routes.set(path, this.wrap(path, handler));
      const listener: Handler = (req, res) => void this.handle(req, res);
      const server = await this.createServer(listener);
      // without this listener Node answers `Expect: 100-continue` with `100 Continue` before any authentication
      server.on('checkContinue', listener);
      this.guard = new ConnectionGuard(server as NetServer, { maxConnections: this.opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS, headTimeoutMs: IDLE_HOLD_TIMEOUT_MS, idleTimeoutMs: KEEP_ALIVE_TIMEOUT_MS });
      this.tracker = new ConnectionTracker(server as NetServer, this.secure);
      await listen(server, host, port, this.bindAddress);
      server.on('error', (err: Error) => this.log.error('metrics server error', { error: err.message }));
      this.server = server;
      this.address = server.address() as AddressInfo;
    } catch (err) {
      this.watcher?.stop();
      this.filter?.close?.();
      this.ownClient?.close();
      throw err;
    }
    this.log.info('Serving metrics server', { bindAddress: this.bindAddress, secure: this.secure, url: this.url });
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /** Calls the filter provider once; every path shares the filter (and its caches). */
  private async buildFilter(): Promise<Filter | undefined> {
    const provider = this.opts.filterProvider;
    if (!provider) {
      this.log.warn('no filterProvider: /metrics is served to anyone who can connect (use filters.withAuthenticationAndAuthorization)');
      return undefined;
    }
    const restConfig = this.deps.restConfig ?? this.deps.kubeClient?.config;
    if (!restConfig) throw new Error('filterProvider needs the Kubernetes API configuration: pass restConfig (or kubeClient) to createMetricsServer');
    const client = this.deps.kubeClient ?? (this.ownClient = new KubeClient(restConfig));
    if (!this.secure) this.log.warn('serving metrics over plain HTTP with a filter: bearer tokens travel unencrypted');
    try {
      return await provider(restConfig, client);
    } catch (err) {
      throw new Error(`filter provider failed to create the metrics server's filter: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private wrap(path: string, handler: Handler): Handler {
    return this.filter ? this.filter(this.log.child('filter', { path }), handler) : handler;
  }

  private async createServer(listener: Handler): Promise<AnyServer> {
    const limits: http.ServerOptions = {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: 1_000,
    };
    if (!this.secure) return http.createServer(limits, listener);

    const tls = await resolveServingTls(this.opts, this.log);
    this.caPem = tls.caPem;
    const tlsOptions: TlsConfig = { ...tls.options, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS };
    let server: https.Server | http2.Http2SecureServer;
    if (this.opts.enableHTTP2) {
      // loaded only here: on Node 20 `node:http2` adds ≈1.8 MB of RSS to a process that serves HTTP/1.1 only
      const { createSecureServer } = await import('node:http2');
      server = createSecureServer({ ...tlsOptions, allowHTTP1: true, settings: { maxConcurrentStreams: 100, maxHeaderListSize: MAX_HEADER_BYTES } }, listener);
      // idle sessions are cut after the keep-alive time; HTTP/1.1 fallback connections do not get Node's head and
      // request timeouts here: the connection guard closes those that start no request
      server.setTimeout(KEEP_ALIVE_TIMEOUT_MS);
    } else {
      server = https.createServer({ ...tlsOptions, ...limits }, listener);
    }
    server.on('tlsClientError', answerPlainHttp);
    if (tls.watcher) {
      this.watcher = tls.watcher;
      // new connections get the new pair; open ones keep theirs. Throwing here makes the watcher keep the last good pair.
      tls.watcher.onChange((pair) => server.setSecureContext({ ...tlsOptions, cert: pair.certPem, key: pair.keyPem }));
    }
    this.log.info('serving certificate', { source: tls.source, certDir: this.opts.certDir });
    return server;
  }

  private async handle(req: Parameters<Handler>[0], res: Parameters<Handler>[1]): Promise<void> {
    this.tracker?.track(req, res);
    if (this.guard) res.once('close', this.guard.requestStarted(req.socket));
    if (req.url !== undefined && !req.url.startsWith('/')) req.url = toOriginForm(req.url);
    const body = declaredBody(req);
    if (body.present) {
      closeAfterAnswer(req, res);
      if (body.length !== undefined && !(body.length <= MAX_BODY_BYTES)) {
        sendText(res, 413, `Request body too large: the metrics server accepts at most ${MAX_BODY_BYTES} bytes`);
        return;
      }
    }
    const path = pathOf(req.url);
    const handler = this.route(path);
    if (!handler) {
      sendText(res, 404, '404 page not found');
      return;
    }
    try {
      await handler(req, res);
    } catch (err) {
      this.log.error('metrics server handler failed', { path, error: err instanceof Error ? err.message : String(err) });
      sendText(res, 500, 'Internal Server Error');
    }
  }

  /** Exact path first, then the longest registered subtree (a key ending in `/`). */
  private route(path: string): Handler | undefined {
    const exact = this.routes.get(path);
    if (exact) return exact;
    let best: string | undefined;
    for (const key of this.routes.keys()) {
      if (key.endsWith('/') && path.startsWith(key) && (!best || key.length > best.length)) best = key;
    }
    return best === undefined ? undefined : this.routes.get(best);
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const timeoutMs = this.opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    this.log.info('Shutting down metrics server', { timeoutMs });
    this.watcher?.stop();
    if (await closeGracefully(server as NetServer, this.tracker, timeoutMs)) {
      this.log.warn('in-flight metrics requests did not finish in time: their connections were closed', { timeoutMs });
    }
    this.filter?.close?.();
    this.ownClient?.close();
  }
}

/** Listens; rejects with a message that names the address. */
function listen(server: AnyServer, host: string | undefined, port: number, bindAddress: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(new Error(`cannot listen on ${bindAddress}: ${err.code === 'EADDRINUSE' ? 'the address is already in use' : (err.code ?? err.message)}`));
    };
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}


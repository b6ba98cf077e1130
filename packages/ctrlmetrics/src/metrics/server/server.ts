/**
 * The metrics server (controller-runtime's `pkg/metrics/server`).
 *
 * A request's path: socket (bounded count, header size and timeouts) → TLS (>= 1.2; ALPN `http/1.1`, or
 * `h2` too when enabled) → target and body (request.ts: origin form; 413 over 4 KiB; a body closes the
 * connection after the answer; no 100 Continue) → route (unknown path: 404 before any auth work) → filter (e.g. TokenReview +
 * SubjectAccessReview) → handler (`/metrics`: collect, render, gzip; see scrape.ts) → socket.
 */
import type { CertWatcher } from '../../certwatcher/certwatcher.js';
import { HttpServer, resolveServingTls, type ServerLimits, type TlsConfig } from '../../httpserver/index.js';
import { KubeClient } from '../../kube/client.js';
import { isDisabled } from '../../util/bind-address.js';
import { createLogger, type Logger } from '../../util/log.js';
import { registry } from '../index.js';
import { sendText } from './respond.js';
import { closeAfterAnswer, declaredBody, MAX_BODY_BYTES, pathOf, toOriginForm } from './request.js';
import { metricsHandler } from './scrape.js';
import type { Filter, Handler, MetricsOptions, MetricsServer, MetricsServerDeps } from './types.js';

/** Default listen address, as the kubebuilder scaffold serves metrics. */
export const DEFAULT_BIND_ADDRESS = ':8443';
const METRICS_PATH = '/metrics';

/**
 * The metrics server's bounds: a scrape's head is small (16 KiB), sent at once (10 s), the request whole in 30 s;
 * an idle keep-alive connection is kept 90 s, longer than common scrape intervals so Prometheus reuses it.
 */
const LIMITS: Partial<ServerLimits> = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 90_000,
};
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 60_000;

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
  private server: HttpServer | undefined;
  private watcher: CertWatcher | undefined;
  private ownClient: KubeClient | undefined;
  private stopping: Promise<void> | undefined;
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
    return this.server?.port ?? 0;
  }

  get url(): string {
    return this.server?.url ?? '';
  }

  addExtraHandler(path: string, handler: Handler): void {
    if (path === METRICS_PATH) throw new Error('overriding the built-in /metrics endpoint is not allowed');
    if (!path.startsWith('/')) throw new Error(`extra handler path ${JSON.stringify(path)} must start with "/"`);
    if (this.handlers.has(path))
      throw new Error(`an extra handler for ${path} is already registered on the metrics server`);
    this.handlers.set(path, handler);
    if (this.server) this.routes.set(path, this.wrap(path, handler));
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.server) throw new Error('the metrics server is already started');
    this.log.info('Starting metrics server');
    try {
      this.filter = await this.buildFilter();
      for (const [path, handler] of this.handlers) this.routes.set(path, this.wrap(path, handler));
      const server = new HttpServer(
        {
          bindAddress: this.bindAddress,
          limits: {
            ...LIMITS,
            ...(this.opts.maxConnections !== undefined ? { maxConnections: this.opts.maxConnections } : {}),
          },
          tls: await this.servingTls(),
          http2: this.opts.enableHTTP2,
          // otherwise Node answers `Expect: 100-continue` with `100 Continue` before any authentication
          handleExpectContinue: true,
        },
        (req, res) => void this.handle(req, res),
      );
      await server.listen();
      server.onError((err: Error) => this.log.error('metrics server error', { error: err.message }));
      this.server = server;
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
      this.log.warn(
        'no filterProvider: /metrics is served to anyone who can connect (use filters.withAuthenticationAndAuthorization)',
      );
      return undefined;
    }
    const restConfig = this.deps.restConfig ?? this.deps.kubeClient?.config;
    if (!restConfig)
      throw new Error(
        'filterProvider needs the Kubernetes API configuration: pass restConfig (or kubeClient) to createMetricsServer',
      );
    const client = this.deps.kubeClient ?? (this.ownClient = new KubeClient(restConfig));
    if (!this.secure) this.log.warn('serving metrics over plain HTTP with a filter: bearer tokens travel unencrypted');
    try {
      return await provider(restConfig, client);
    } catch (err) {
      throw new Error(
        `filter provider failed to create the metrics server's filter: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
  }

  private wrap(path: string, handler: Handler): Handler {
    return this.filter ? this.filter(this.log.child('filter', { path }), handler) : handler;
  }

  /** The TLS to serve with (undefined: plain HTTP). */
  private async servingTls(): Promise<{ options: TlsConfig; watcher?: CertWatcher } | undefined> {
    if (!this.secure) return undefined;
    const tls = await resolveServingTls(this.opts, this.log);
    this.caPem = tls.caPem;
    this.watcher = tls.watcher;
    this.log.info('serving certificate', { source: tls.source, certDir: this.opts.certDir });
    return { options: tls.options, watcher: tls.watcher };
  }

  private async handle(req: Parameters<Handler>[0], res: Parameters<Handler>[1]): Promise<void> {
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
      this.log.error('metrics server handler failed', {
        path,
        error: err instanceof Error ? err.message : String(err),
      });
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
    if (await server.close(timeoutMs)) {
      this.log.warn('in-flight metrics requests did not finish in time: their connections were closed', { timeoutMs });
    }
    this.filter?.close?.();
    this.ownClient?.close();
  }
}

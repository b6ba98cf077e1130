/**
 * The webhook server (controller-runtime's `pkg/webhook` Server): HTTPS on `:9443` by default with the serving
 * certificate from a directory (`<tmpdir>/k8s-webhook-server/serving-certs`, `tls.crt`/`tls.key`, hot-reloaded),
 * TLS >= 1.2, HTTP/2 only when asked, client certificates verified against `clientCAName` in that directory when
 * set. Admission handlers and conversions are registered by path, each instrumented with the webhook metrics; a
 * request's path: socket (bounded count, head size and timeouts, as the metrics server) → TLS → exact path (else
 * Go's 404) → body (at most 7 MiB read for admission, 64 MiB for conversion) → AdmissionReview (admission.ts) or
 * ConversionReview (conversion.ts) → handler → a JSON answer.
 */
import type { ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CertWatcher } from '../certwatcher/certwatcher.js';
import {
  HttpServer,
  resolveServingTls,
  type ServerLimits,
  type ServerRequest,
  type ServerResponseOf,
  type TlsConfig,
} from '../httpserver/index.js';
import { parseBindAddress } from '../util/bind-address.js';
import { createLogger, type Logger } from '../util/log.js';
import {
  answerAdmission,
  isPromiseLike,
  MAX_ADMISSION_BODY_BYTES,
  type AdmissionAnswer,
  type AdmissionHandler,
} from './admission.js';
import { answerConversion, type ConversionRegistry } from './conversion.js';
import { webhookMetricsFor, webhookPanics, type WebhookPathMetrics } from './metrics.js';

/** Options of the webhook server (controller-runtime's `webhook.Options`). */
export interface WebhookServerOptions {
  /** `host:port` to listen on (default `:9443`; `127.0.0.1:0` picks a free port). */
  bindAddress?: string;
  /** Directory of the serving certificate (default `<os.tmpdir()>/k8s-webhook-server/serving-certs`). */
  certDir?: string;
  /** Certificate file in `certDir` (default `tls.crt`). */
  certName?: string;
  /** Key file in `certDir` (default `tls.key`). */
  keyName?: string;
  /** CA file in `certDir`: when set, every client must present a certificate it signed. */
  clientCAName?: string;
  /** Offer HTTP/2 (default false: the HTTP/2 Rapid Reset and Stream Cancellation CVEs). */
  enableHTTP2?: boolean;
  /** Adjust the TLS options, in order (a function may set its own certificate). */
  tlsOpts?: Array<(options: TlsConfig) => void>;
  /** Open connections at most (default 1024). */
  maxConnections?: number;
  /** How long stopping waits for requests in flight (default 60 000 ms, controller-runtime's 1 minute). */
  shutdownTimeoutMs?: number;
}

/** Default listen address, as controller-runtime's DefaultPort. */
export const DEFAULT_WEBHOOK_BIND_ADDRESS = ':9443';
/** Default certificate directory, as controller-runtime's. */
export const DEFAULT_WEBHOOK_CERT_DIR = join(tmpdir(), 'k8s-webhook-server', 'serving-certs');

/**
 * controller-runtime's `httpserver.New` limits (1 MiB head, ReadHeaderTimeout 32 s, IdleTimeout 90 s); a whole
 * request in 60 s: the caller's deadline is at most 30 s, a body still arriving after a minute is not coming.
 */
const LIMITS: Partial<ServerLimits> = {
  maxHeaderBytes: 1024 * 1024,
  headersTimeoutMs: 32_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 90_000,
};
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 60_000;

type Req = ServerRequest;
type Res = ServerResponseOf;

/**
 * A conversion review carries whole objects, a list's worth at a time; controller-runtime reads it unbounded. Bounded
 * here, well above what a list of etcd-sized objects needs in practice, so a hostile body cannot exhaust memory.
 */
export const MAX_CONVERSION_BODY_BYTES = 64 * 1024 * 1024;

/** What a route answers: an HTTP status and a body. */
interface RouteAnswer {
  status: number;
  body: string;
  /** The request's uid, for the log of a panic. */
  uid?: string;
  panicked: boolean;
  /** What the handler threw, when it panicked. */
  panic?: unknown;
}

interface Route {
  maxBody: number;
  /** The answer, at once when the handler gives it at once. */
  serve(
    body: Buffer | undefined,
    truncated: boolean,
    contentType: string | undefined,
  ): RouteAnswer | Promise<RouteAnswer>;
  metrics: WebhookPathMetrics;
}

function routeAnswer(a: AdmissionAnswer): RouteAnswer {
  return { status: 200, body: a.body, uid: a.uid, panicked: a.panicked, panic: a.panic };
}

/** Serves admission webhooks; {@link WebhookServer.register} paths, then {@link WebhookServer.start}. */
export class WebhookServer {
  private readonly routes = new Map<string, Route>();
  private readonly log: Logger;
  private server: HttpServer | undefined;
  private watcher: CertWatcher | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly opts: WebhookServerOptions = {},
    logger?: Logger,
  ) {
    this.log = logger ?? createLogger('controller-runtime.webhook');
  }

  /** The bound port (0 before start). */
  get port(): number {
    return this.server?.port ?? 0;
  }

  /** `https://host:port` of the bound address ('' before start). */
  get url(): string {
    return this.server?.url ?? '';
  }

  /** The registered paths. */
  get paths(): string[] {
    return [...this.routes.keys()];
  }

  /**
   * Serves `handler` at exactly `path` (before or after start). Throws on a second handler for the same path, as
   * controller-runtime panics.
   */
  register(path: string, handler: AdmissionHandler): void {
    this.add(path, {
      maxBody: MAX_ADMISSION_BODY_BYTES,
      serve: (body, truncated, contentType) => {
        const a = answerAdmission(body, truncated, contentType, handler);
        return isPromiseLike(a) ? a.then(routeAnswer) : routeAnswer(a);
      },
    });
  }

  /**
   * Serves the conversions of `registry` at `path` (controller-runtime's `/convert`): a ConversionReview in, the
   * converted objects out. A body over {@link MAX_CONVERSION_BODY_BYTES} is answered 413 with an empty body.
   */
  registerConversion(path: string, registry: ConversionRegistry): void {
    this.add(path, {
      maxBody: MAX_CONVERSION_BODY_BYTES,
      serve: async (body, truncated) => {
        if (truncated) return { status: 413, body: '', panicked: false };
        const a = await answerConversion(body, registry);
        // controller-runtime counts panics of admission handlers only; a converter's engine bug is logged as one
        if (a.failure !== undefined)
          this.log.error(a.panicked ? 'Observed a panic in a conversion' : 'conversion failed', {
            webhook: path,
            error: a.failure,
          });
        return { status: a.status, body: a.body, panicked: false };
      },
    });
  }

  private add(path: string, route: Omit<Route, 'metrics'>): void {
    if (!/^((\/[a-zA-Z0-9_.-]+)+|\/)$/.test(path))
      throw new Error(
        `webhook path ${JSON.stringify(path)} must be "/" or "/"-separated segments of letters, digits, "-", "_" and "."`,
      );
    if (this.routes.has(path)) throw new Error(`can't register duplicate path: ${path}`);
    this.routes.set(path, { ...route, metrics: webhookMetricsFor(path) });
    this.log.info('Registering webhook', { path });
  }

  /** Listens. Rejects (naming the file) when the certificate cannot be read, or naming the address when taken. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.server) throw new Error('the webhook server is already started');
    const bindAddress = this.opts.bindAddress || DEFAULT_WEBHOOK_BIND_ADDRESS;
    const certDir = this.opts.certDir || DEFAULT_WEBHOOK_CERT_DIR;
    this.log.info('Starting webhook server');
    // the webhook server never serves a self-signed certificate (an API server must trust its CA through the
    // configurations' caBundle), so the metrics server's remedy does not apply: say what does
    const tls = await resolveServingTls(
      {
        certDir,
        certName: this.opts.certName,
        keyName: this.opts.keyName,
        enableHTTP2: this.opts.enableHTTP2,
        tlsOpts: this.opts.tlsOpts,
      },
      this.log,
      'the webhook server needs a certificate its callers trust: pass the directory that holds it as certDir (--webhook-cert-path DIR in a scaffolded manager; `ctrlmetrics dev` makes one and points the webhook configurations at it), or run the manager without webhooks (ENABLE_WEBHOOKS=false)',
    );
    const options: TlsConfig = { ...tls.options };
    if (this.opts.clientCAName) {
      const caFile = join(certDir, this.opts.clientCAName);
      let ca: string;
      try {
        ca = readFileSync(caFile, 'utf8');
      } catch (err) {
        tls.watcher?.stop();
        throw new Error(`failed to read client CA cert: ${caFile}: ${(err as Error).message}`, { cause: err });
      }
      if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
        tls.watcher?.stop();
        throw new Error(`failed to append client CA cert to CA pool: ${caFile} holds no PEM certificate`);
      }
      Object.assign(options, { ca, requestCert: true, rejectUnauthorized: true });
    }
    const server = new HttpServer(
      {
        bindAddress,
        limits: {
          ...LIMITS,
          ...(this.opts.maxConnections !== undefined ? { maxConnections: this.opts.maxConnections } : {}),
        },
        tls: { options, watcher: tls.watcher },
        http2: this.opts.enableHTTP2,
      },
      (req, res) => this.handle(req, res),
    );
    this.watcher = tls.watcher;
    try {
      await server.listen();
    } catch (err) {
      this.watcher?.stop();
      throw err;
    }
    server.onError((err: Error) => this.log.error('webhook server error', { error: err.message }));
    this.server = server;
    this.log.info('Serving webhook server', { host: hostOf(bindAddress), port: this.port, url: this.url });
    signal?.addEventListener('abort', () => void this.stop(), { once: true });
  }

  /**
   * A readiness check: an error until the server listens, then one when a TLS connection to it fails (as
   * controller-runtime's StartedChecker).
   */
  startedCheck(): () => Promise<Error | undefined> {
    return () => {
      if (!this.server) return Promise.resolve(new Error('webhook server has not been started yet'));
      const host = this.url.replace(/^https:\/\/\[?/, '').replace(/\]?:\d+$/, '');
      return new Promise((resolve) => {
        const socket = connect({ host, port: this.port, rejectUnauthorized: false, timeout: 10_000 }, () => {
          socket.destroy();
          resolve(undefined);
        });
        socket.on('timeout', () => socket.destroy(new Error('timeout')));
        socket.on('error', (err: Error) => resolve(new Error(`webhook server is not reachable: ${err.message}`)));
      });
    };
  }

  /**
   * One request: its body read, its route's answer written. Callbacks rather than awaits throughout: a synchronous
   * handler's answer is written in the turn its body ends, and each promise on this path costs throughput.
   */
  private handle(req: Req, res: Res): void {
    const path = (req.url ?? '/').split('?', 1)[0];
    const route = this.routes.get(path);
    if (!route) {
      req.resume();
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
      res.end('404 page not found\n');
      return;
    }
    const m = route.metrics;
    const started = performance.now();
    m.inFlight.inc();
    let ended = false;
    const done = () => {
      if (ended) return;
      ended = true;
      m.inFlight.dec();
      m.latency.observe((performance.now() - started) / 1000);
    };
    const fail = (err: unknown) => {
      // the request went away while its body was read: nothing to answer
      this.log.debug('admission request failed before an answer', {
        webhook: path,
        error: err instanceof Error ? err.message : String(err),
      });
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('Internal Server Error\n');
        m.requests(500);
      }
      done();
    };
    const send = (answer: RouteAnswer) => {
      if (answer.panicked) {
        webhookPanics.inc();
        const err = answer.panic;
        this.log.error('Observed a panic in webhook', {
          webhook: path,
          ...(answer.uid !== undefined ? { uid: answer.uid } : {}),
          panic: err instanceof Error ? err.message : String(err),
          ...(err instanceof Error && err.stack ? { stacktrace: err.stack } : {}),
        });
      }
      // literal header objects: one built with a conditional spread cost ≈ 10 µs more in writeHead per answer
      res.writeHead(
        answer.status,
        answer.body
          ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(answer.body) }
          : { 'Content-Length': 0 },
      );
      res.end(answer.body);
      m.requests(answer.status);
      done();
    };
    // what throws while answering is answered 500 if it can be, else the connection is cut: never a crash
    const safely = (f: () => void) => {
      try {
        f();
      } catch (err) {
        try {
          fail(err);
        } catch {
          res.destroy();
          done();
        }
      }
    };
    readBody(req, route.maxBody, (err, body, truncated) =>
      safely(() => {
        if (err) return fail(err);
        // the rest of a truncated body is not read: the connection cannot be reused
        if (truncated) (res as ServerResponse).shouldKeepAlive = false;
        const answer = route.serve(body, truncated, header(req, 'content-type'));
        if (!isPromiseLike(answer)) return send(answer);
        answer.then(
          (a) => safely(() => send(a)),
          (e: unknown) => safely(() => fail(e)),
        );
      }),
    );
  }

  /** Stops listening, waits for requests in flight (up to the shutdown timeout), then closes what is left. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const timeoutMs = this.opts.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
    this.log.info('Shutting down webhook server', { timeoutMs });
    this.watcher?.stop();
    if (await server.close(timeoutMs)) {
      this.log.warn('in-flight admission requests did not finish in time: their connections were closed', {
        timeoutMs,
      });
    }
  }
}

/** The host part of a bind address as the log names it ('' for all interfaces). */
function hostOf(bindAddress: string): string {
  return parseBindAddress(bindAddress).host ?? '';
}

function header(req: Req, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Reads the body up to `limit` bytes, then calls `done` once: `truncated` when the limit was reached (a body of
 * exactly the limit included, as controller-runtime's reader counts it; the rest is left unread), an error when the
 * request failed or went away first.
 */
function readBody(
  req: Req,
  limit: number,
  done: (err: Error | undefined, body: Buffer | undefined, truncated: boolean) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const stop = () => {
    finished = true;
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.off('aborted', onAborted);
  };
  const finish = (truncated: boolean) => {
    if (finished) return;
    stop();
    if (truncated) req.pause();
    done(undefined, size === 0 ? undefined : Buffer.concat(chunks, Math.min(size, limit)), truncated);
  };
  const onData = (c: Buffer) => {
    size += c.length;
    chunks.push(c);
    if (size >= limit) finish(true);
  };
  const onEnd = () => finish(false);
  const onError = (err: Error) => {
    if (finished) return;
    stop();
    done(err, undefined, false);
  };
  const onAborted = () => onError(new Error('the client went away'));
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  req.on('aborted', onAborted);
}

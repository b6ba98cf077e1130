/**
 * One HTTP server core for the manager's servers — metrics, webhooks, health probes — as controller-runtime's
 * `httpserver.New` gives all of them the same limits: listening with one error wording, the request head's size and
 * timeouts, a whole request's timeout, the keep-alive time, the connection guard (a bounded number of connections,
 * none held without a request), TLS (handshake timeout, certificate reloads, a plain-HTTP request on the TLS port
 * answered as Go does), HTTP/2 when asked, graceful close and the bound URL. What a server serves stays its own.
 */
import http from 'node:http';
import https from 'node:https';
import type http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { CertWatcher } from '../certwatcher/certwatcher.js';
import { parseBindAddress } from '../util/bind-address.js';
import { answerPlainHttp } from '../util/plain-http.js';
import { ConnectionGuard, type ConnectionGuardStats } from './connection-guard.js';
import { ConnectionTracker, boundUrl, closeGracefully } from './connections.js';
import type { TlsConfig } from './tls.js';
import { CtrlmetricsError } from '../util/errors.js';

/** A request of any of the servers (HTTP/1.1, or HTTP/2 when enabled). */
export type ServerRequest = IncomingMessage | Http2ServerRequest;
/** Its response. */
export type ServerResponseOf = ServerResponse | Http2ServerResponse;

/** The bounds every server is held to. */
export interface ServerLimits {
  /** Largest request head (request line and headers); bigger gets 431. */
  maxHeaderBytes: number;
  /** Time to send the request head (against slow-header clients): 408 after it. */
  headersTimeoutMs: number;
  /** Time to send a whole request. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
  /** Open connections at most (the guard closes idle ones first to make room). */
  maxConnections: number;
  /** Time to finish a TLS handshake. */
  handshakeTimeoutMs: number;
}

/** The limits of a server that says nothing else: small heads, short timeouts. */
export const DEFAULT_LIMITS: Readonly<ServerLimits> = {
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 90_000,
  maxConnections: 1024,
  handshakeTimeoutMs: 10_000,
};

/** How a server is made. */
export interface HttpServerOptions {
  /** `host:port` to listen on. */
  bindAddress: string;
  /** Limits (any left out: {@link DEFAULT_LIMITS}). */
  limits?: Partial<ServerLimits>;
  /** Serve TLS with these options (absent: plain HTTP); a watcher's new pairs apply to new connections. */
  tls?: { options: TlsConfig; watcher?: CertWatcher };
  /** Offer HTTP/2 (TLS only), with HTTP/1.1 as the fallback. */
  http2?: boolean;
  /**
   * Answer `Expect: 100-continue` from the handler (no automatic `100 Continue`, so that nothing is invited
   * before the handler's checks). Default false: Node's automatic answer.
   */
  handleExpectContinue?: boolean;
}

/** The server could not listen: the address is taken, not allowed or not there. */
export class ListenError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_LISTEN';
  override name = 'ListenError';
  constructor(
    readonly bindAddress: string,
    /** The system's error code (`EADDRINUSE`, `EACCES`, …). */
    readonly systemCode: string | undefined,
    why: string,
    cause?: unknown,
  ) {
    super(`cannot listen on ${bindAddress}: ${why}`, { cause });
  }
}

type NodeServer = http.Server | https.Server | http2.Http2SecureServer;

/** The core of one server: made with its handler, then {@link listen}ed and {@link close}d. */
export class HttpServer {
  readonly limits: Readonly<ServerLimits>;
  private server: NodeServer | undefined;
  private tracker: ConnectionTracker | undefined;
  private guard: ConnectionGuard | undefined;
  private address: AddressInfo | undefined;
  private closing: Promise<boolean> | undefined;

  constructor(
    private readonly opts: HttpServerOptions,
    private readonly handler: (req: ServerRequest, res: ServerResponseOf) => void,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /** Whether it serves TLS. */
  get secure(): boolean {
    return this.opts.tls !== undefined;
  }

  /** The bound port (0 before listening). */
  get port(): number {
    return this.address?.port ?? 0;
  }

  /** `http(s)://host:port` of the bound address ('' before listening; wildcards as loopback). */
  get url(): string {
    return this.address ? boundUrl(this.address, this.secure ? 'https' : 'http') : '';
  }

  /** The guard's counts (for diagnostics). */
  get guardStats(): ConnectionGuardStats | undefined {
    return this.guard?.stats();
  }

  /** Creates the server and listens. Rejects with a {@link ListenError} naming the address. */
  async listen(): Promise<void> {
    if (this.server) throw new Error('the server is already listening');
    const { host, port } = parseBindAddress(this.opts.bindAddress);
    const l = this.limits;
    const listener = (req: ServerRequest, res: ServerResponseOf) => {
      this.tracker!.track(req, res);
      res.once('close', this.guard!.requestStarted(req.socket));
      this.handler(req, res);
    };
    const server = await this.create(listener);
    if (this.opts.handleExpectContinue) server.on('checkContinue', listener);
    this.guard = new ConnectionGuard(server, {
      maxConnections: l.maxConnections,
      // past Node's own head timeout (checked every second), so that HTTP/1.1 clients get its 408 first; the guard
      // is what closes connections that never send a head, and HTTP/2 sessions without a stream
      headTimeoutMs: l.headersTimeoutMs + 2_000,
      idleTimeoutMs: l.keepAliveTimeoutMs,
    });
    this.tracker = new ConnectionTracker(server, this.secure);
    await new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        const why =
          err.code === 'EADDRINUSE'
            ? 'the address is already in use'
            : err.code === 'EACCES'
              ? 'permission denied'
              : (err.code ?? err.message);
        reject(new ListenError(this.opts.bindAddress, err.code, why, err));
      };
      server.once('error', onError);
      server.listen({ host, port }, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.server = server;
    this.address = server.address() as AddressInfo;
  }

  private async create(listener: (req: ServerRequest, res: ServerResponseOf) => void): Promise<NodeServer> {
    const l = this.limits;
    const http1: http.ServerOptions = {
      maxHeaderSize: l.maxHeaderBytes,
      headersTimeout: l.headersTimeoutMs,
      requestTimeout: l.requestTimeoutMs,
      keepAliveTimeout: l.keepAliveTimeoutMs,
      connectionsCheckingInterval: 1_000,
    };
    const tls = this.opts.tls;
    if (!tls) return http.createServer(http1, listener);
    const tlsOptions: TlsConfig = { ...tls.options, handshakeTimeout: l.handshakeTimeoutMs };
    let server: https.Server | http2.Http2SecureServer;
    if (this.opts.http2) {
      // loaded only here: on Node 20 `node:http2` adds ≈1.8 MB of RSS to a process that serves HTTP/1.1 only
      const { createSecureServer } = await import('node:http2');
      server = createSecureServer(
        {
          ...tlsOptions,
          allowHTTP1: true,
          settings: { maxConcurrentStreams: 100, maxHeaderListSize: l.maxHeaderBytes },
        },
        listener,
      );
      // idle sessions are cut after the keep-alive time; HTTP/1.1 fallback connections do not get Node's head and
      // request timeouts here: the connection guard closes those that start no request
      server.setTimeout(l.keepAliveTimeoutMs);
    } else {
      server = https.createServer({ ...tlsOptions, ...http1 }, listener);
    }
    server.on('tlsClientError', answerPlainHttp);
    // new connections get the new pair; open ones keep theirs. Throwing here makes the watcher keep the last good pair.
    tls.watcher?.onChange((pair) => server.setSecureContext({ ...tlsOptions, cert: pair.certPem, key: pair.keyPem }));
    return server;
  }

  /** Listens for server errors after start (logged by the owner). */
  onError(listener: (err: Error) => void): void {
    this.server?.on('error', listener);
  }

  /**
   * Stops accepting, lets requests in flight finish (their connections close after the answer), and past
   * `timeoutMs` cuts what is still open. Resolves true when connections had to be cut. Idempotent.
   */
  close(timeoutMs: number): Promise<boolean> {
    this.closing ??= this.server ? closeGracefully(this.server, this.tracker, timeoutMs) : Promise.resolve(false);
    return this.closing;
  }
}

/**
 * A small typed client for the Kubernetes REST API over `node:https` with one keep-alive agent.
 *
 * Written by hand on purpose: `@kubernetes/client-node` opens a new TLS connection for every call (~7 ms each,
 * see docs/design.md), which is too slow on the scrape path where every uncached scrape makes a TokenReview
 * and a SubjectAccessReview. This client reuses connections, bounds every call with a timeout, retries with
 * backoff on 429/5xx/connection errors when asked, rate-limits like client-go, and reports each response to
 * `rest_client_requests_total{code,method,host}`.
 */
import https from 'node:https';
import http from 'node:http';
import { URL } from 'node:url';
import { TokenBucket } from './ratelimit.js';
import type { RestConfig } from './config.js';
import { after } from '../util/timers.js';
import { CtrlmetricsError } from '../util/errors.js';

/** A Kubernetes `Status` object, as returned with errors. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  code: number;
  details?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** An error answered by the API (non-2xx), or a transport failure (`status` 0). */
export class KubeApiError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_KUBE_API';
  override name = 'KubeApiError';
  constructor(
    /** HTTP status, or 0 when no response was received. */
    readonly status: number,
    /** The `reason` of the Status object (`NotFound`, `Forbidden`, …) or a transport error code. */
    readonly reason: string,
    message: string,
    /** The decoded response body when there was one. */
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** Called once per API response (or transport error) with client-go's metric label values. */
export type RequestObserver = (code: string, method: string, host: string) => void;

let defaultObserver: RequestObserver | undefined;

/** Sets the observer every new {@link KubeClient} reports to (the metrics package wires `rest_client_requests_total`). */
export function setDefaultRequestObserver(observer: RequestObserver | undefined): void {
  defaultObserver = observer;
}

/** Retry policy for transient failures (429, 5xx, connection errors), as client-go's webhook backoff. */
export interface RetryPolicy {
  /** Attempts in all (default 5). */
  steps: number;
  /** First sleep in ms (default 500). */
  baseMs: number;
  /** Growth per attempt (default 1.5). */
  factor: number;
  /** Random extra fraction of each sleep, 0..1 (default 0.2). */
  jitter: number;
}

/** controller-runtime's filter backoff: 500 ms × 1.5, jitter 0.2, 5 steps. */
export const DEFAULT_RETRY: RetryPolicy = { steps: 5, baseMs: 500, factor: 1.5, jitter: 0.2 };

/** Options of one request. */
export interface RequestOptions {
  /** Query parameters. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Request body; objects are sent as JSON. */
  body?: unknown;
  /** Content type of the body (default `application/json`). */
  contentType?: string;
  /** Extra headers. */
  headers?: Record<string, string>;
  /** Whole-call deadline in ms including retries (default 30 000; the auth filter uses 10 000). */
  timeoutMs?: number;
  /** Retry transient failures (default: no retries). */
  retry?: RetryPolicy | false;
  /** Aborts the call. */
  signal?: AbortSignal;
  /** Longest time to wait for the client-side rate limiter before failing (default 10 000 ms). */
  maxRateLimitWaitMs?: number;
}

/**
 * `opts` with a body (and, when given, its content type). Every option is written out rather than spread
 * (`{ ...opts, body }`): on Node 20's V8 objects made by spreading one and adding properties were still copied by
 * the young-generation collections long after their request, which made each collection longer.
 */
function withBody(opts: RequestOptions | undefined, body: unknown, contentType?: string): RequestOptions {
  // every key listed: an option added to RequestOptions and not here fails to compile
  const out: { [K in keyof Required<RequestOptions>]: RequestOptions[K] } = {
    query: opts?.query,
    body,
    contentType: contentType ?? opts?.contentType,
    headers: opts?.headers,
    timeoutMs: opts?.timeoutMs,
    retry: opts?.retry,
    signal: opts?.signal,
    maxRateLimitWaitMs: opts?.maxRateLimitWaitMs,
  };
  return out;
}

/** A decoded response. */
export interface KubeResponse<T = unknown> {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: T;
}

/** A watch event as streamed by the API. */
export interface WatchEvent<T = Record<string, unknown>> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** A running watch. */
export interface WatchHandle {
  /** Resolves when the stream ends (server closed it, timeout, or {@link WatchHandle.stop}); rejects on transport errors. */
  done: Promise<void>;
  /** Ends the watch; no event is delivered after it. */
  stop(): void;
}

const RETRYABLE_CODES = new Set([429, 500, 502, 503, 504]);

/** A `.` or `..` segment, which a URL resolves away. */
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

/** A path a URL keeps as written: unreserved and sub-delimiter characters, `:`, `@`, `/` and percent escapes. */
const SAFE_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*(?:%[0-9A-Fa-f]{2}[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)*$/;

function isRetryable(err: unknown): boolean {
  // the client-side limiter already waited as long as the caller allows: retrying would only wait longer
  if (err instanceof KubeApiError && err.reason === 'RateLimited') return false;
  if (err instanceof KubeApiError) return err.status === 0 || RETRYABLE_CODES.has(err.status);
  return true;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/** Settings of one client's own connection pool. */
export interface KubeClientOptions {
  /** Most connections open to the API server at once (default 32); further calls wait for a free one. */
  maxSockets?: number;
}

/**
 * Client for one API server and one identity. Each client has its own connection pool and its own client-side
 * rate limiter, so traffic through one (e.g. the metrics filter's reviews) never waits for another's.
 */
export class KubeClient {
  readonly host: string;
  private readonly base: URL;
  private readonly agent: https.Agent | http.Agent;
  private readonly limiter: TokenBucket;
  private cachedAuth?: { headers: Record<string, string>; at: number };
  /** The API server answered 401: the provider renews the credentials at the next call (client-go's exec plugins do). */
  private authRefused = false;
  private staticHeaders?: { userAgent: string; authorization: string; impersonateUser: string };
  /** The server's path prefix (a kubeconfig's server may name one), without the trailing slash. */
  private readonly basePath: string;
  /** Where requests go: `protocol`, `hostname` (an IPv6 address without its brackets) and `port` of the server. */
  private readonly endpoint: { protocol: string; hostname: string; port: string };
  observer: RequestObserver | undefined;

  constructor(
    readonly config: RestConfig,
    options: KubeClientOptions = {},
  ) {
    this.base = new URL(config.server);
    this.host = this.base.host;
    this.basePath = this.base.pathname.replace(/\/$/, '');
    const hostname = this.base.hostname.startsWith('[') ? this.base.hostname.slice(1, -1) : this.base.hostname;
    this.endpoint = { protocol: this.base.protocol, hostname, port: this.base.port };
    this.observer = defaultObserver;
    this.limiter = new TokenBucket(config.qps ?? 20, config.burst ?? 30);
    const maxSockets = options.maxSockets ?? 32;
    this.agent =
      this.base.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets })
        : new https.Agent({
            keepAlive: true,
            maxSockets,
            ca: config.ca,
            cert: config.cert,
            key: config.key,
            rejectUnauthorized: !config.insecureSkipTLSVerify,
          });
  }

  /** A client with the same connection settings acting as another identity (bearer token). */
  withToken(token: string): KubeClient {
    return new KubeClient({ ...this.config, token, authHeaders: undefined, cert: undefined, key: undefined });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  private async authHeaders(): Promise<Record<string, string>> {
    const h: Record<string, string> = {};
    if (this.config.authHeaders) {
      const now = Date.now();
      if (!this.cachedAuth || now - this.cachedAuth.at > 60_000 || this.authRefused) {
        const refused = this.authRefused;
        this.authRefused = false;
        this.cachedAuth = {
          headers: await this.config.authHeaders(refused ? { unauthorized: true } : undefined),
          at: now,
        };
      }
      Object.assign(h, this.cachedAuth.headers);
    } else if (this.config.token) {
      h.Authorization = `Bearer ${this.config.token}`;
    }
    if (this.config.impersonateUser) h['Impersonate-User'] = this.config.impersonateUser;
    return h;
  }

  /**
   * The headers every request sends: Accept, User-Agent and the credentials. Without a credentials provider they
   * never change, so they are made once (a provider's are read through {@link authHeaders}, which caches them).
   */
  private async baseHeaders(accept: string): Promise<Record<string, string>> {
    return (
      this.fixedHeaders(accept) ?? {
        Accept: accept,
        'User-Agent': this.config.userAgent ?? 'ctrlmetrics',
        ...(await this.authHeaders()),
      }
    );
  }

  /**
   * {@link baseHeaders} at once when no credentials provider is configured: a new object each time (the caller adds
   * to it), written out rather than a spread copy of a template — on Node 20's V8 a spread copy given more
   * properties was still being copied by the young-generation collections long after its request.
   */
  private fixedHeaders(accept: string): Record<string, string> | undefined {
    if (this.config.authHeaders) return undefined;
    const c = (this.staticHeaders ??= {
      userAgent: this.config.userAgent ?? 'ctrlmetrics',
      authorization: this.config.token ? `Bearer ${this.config.token}` : '',
      impersonateUser: this.config.impersonateUser ?? '',
    });
    const h: Record<string, string> = { Accept: accept, 'User-Agent': c.userAgent };
    if (c.authorization) h.Authorization = c.authorization;
    if (c.impersonateUser) h['Impersonate-User'] = c.impersonateUser;
    return h;
  }

  private url(path: string, query?: RequestOptions['query']): URL {
    const u = new URL(this.base.pathname.replace(/\/$/, '') + path, this.base);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  /**
   * The request target (path and query) of a call: built as text when the path holds only characters a URL keeps
   * as they are — what the clients of this package send — so a request does not parse a URL; else through
   * {@link url}, which encodes the rest.
   */
  private target(path: string, query?: RequestOptions['query']): string {
    if (!SAFE_PATH.test(path) || DOT_SEGMENT.test(path)) {
      const u = this.url(path, query);
      return u.pathname + u.search;
    }
    let out = this.basePath + path;
    if (query) {
      let search: URLSearchParams | undefined;
      for (const k in query) {
        const v = query[k];
        if (v !== undefined) (search ??= new URLSearchParams()).set(k, String(v));
      }
      if (search) out += `?${search.toString()}`;
    }
    return out;
  }

  /**
   * Sends one request and decodes the answer. Non-2xx answers are returned, not thrown; transport errors and
   * timeouts throw {@link KubeApiError} with status 0. With `retry`, transient failures are retried.
   */
  async raw<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<KubeResponse<T>> {
    const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
    const policy = opts.retry || undefined;
    // one attempt: its answer or its error as they come (the loop below would give the same)
    if (!policy && !opts.signal?.aborted) return this.once<T>(method, path, opts, deadline);
    const steps = policy ? Math.max(1, policy.steps) : 1;
    let sleepMs = policy?.baseMs ?? 0;
    let lastErr: unknown;
    for (let attempt = 0; attempt < steps; attempt++) {
      if (attempt > 0) {
        const ms = sleepMs * (1 + Math.random() * (policy?.jitter ?? 0));
        if (Date.now() + ms >= deadline) break;
        await sleep(ms, opts.signal);
        sleepMs *= policy?.factor ?? 1;
      }
      if (opts.signal?.aborted) break;
      try {
        const res = await this.once<T>(method, path, opts, deadline);
        if (!policy || !RETRYABLE_CODES.has(res.status) || attempt === steps - 1) return res;
        lastErr = new KubeApiError(res.status, statusReason(res.body), statusMessage(res.body, res.status), res.body);
      } catch (err) {
        lastErr = err;
        if (!isRetryable(err)) throw err;
      }
    }
    if (lastErr instanceof KubeApiError && lastErr.status !== 0) {
      return { status: lastErr.status, headers: {}, body: lastErr.body as T };
    }
    // what the last attempt threw (an Error from the transport, or the answer above), else the deadline
    throw (lastErr as Error | undefined) ?? new KubeApiError(0, 'Timeout', `${method} ${path}: deadline exceeded`);
  }

  private once<T>(method: string, path: string, opts: RequestOptions, deadline: number): Promise<KubeResponse<T>> {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return Promise.reject(new KubeApiError(0, 'Timeout', `${method} ${path}: deadline exceeded`));
    // the common case without awaiting anything: a token at hand (or no limit) and credentials that do not change
    const took = this.limiter.tryTake();
    const headers = took ? this.fixedHeaders('application/json') : undefined;
    return headers
      ? this.send<T>(method, path, opts, deadline, headers)
      : this.waitAndSend<T>(method, path, opts, deadline, remaining, took);
  }

  /** {@link once} when it must wait: for the rate limiter's token, or for the credentials provider. */
  private async waitAndSend<T>(
    method: string,
    path: string,
    opts: RequestOptions,
    deadline: number,
    remaining: number,
    took: boolean,
  ): Promise<KubeResponse<T>> {
    if (!took && !(await this.limiter.take(Math.min(remaining, opts.maxRateLimitWaitMs ?? 10_000), opts.signal))) {
      throw new KubeApiError(
        0,
        'RateLimited',
        `${method} ${path}: client-side rate limit (qps ${this.limiter.qps}) would delay the call past its deadline`,
      );
    }
    return this.send<T>(method, path, opts, deadline, await this.baseHeaders('application/json'));
  }

  /** Sends one request with the given base headers and decodes the answer. */
  private send<T>(
    method: string,
    path: string,
    opts: RequestOptions,
    deadline: number,
    headers: Record<string, string>,
  ): Promise<KubeResponse<T>> {
    const target = this.target(path, opts.query);
    if (opts.headers) Object.assign(headers, opts.headers);
    let payload: Buffer | undefined;
    if (opts.body !== undefined) {
      payload = Buffer.from(typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body));
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const groups = this.config.impersonateGroups ?? [];
    const mod = this.base.protocol === 'http:' ? http : https;
    const pathname = () => target.split('?', 1)[0];
    return new Promise<KubeResponse<T>>((resolve, reject) => {
      // one timer for the call's deadline (it also ends a connection that went silent)
      const e = this.endpoint;
      const req = mod.request({
        protocol: e.protocol,
        hostname: e.hostname,
        port: e.port,
        path: target,
        method,
        headers,
        agent: this.agent,
      });
      for (const g of groups) req.appendHeader('Impersonate-Group', g);
      const fail = (reason: string, message: string) => {
        this.observe('<error>', method);
        reject(new KubeApiError(0, reason, `${method} ${pathname()}: ${message}`));
      };
      const cancelTimer = after(
        Math.max(1, deadline - Date.now()),
        () => req.destroy(new Error('timeout')),
        undefined,
        true,
      );
      const onAbort = () => req.destroy(new Error('aborted'));
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: NodeJS.ErrnoException) => {
        cancelTimer();
        opts.signal?.removeEventListener('abort', onAbort);
        fail(err.message === 'timeout' ? 'Timeout' : (err.code ?? 'ConnectionError'), err.message);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => undefined);
        res.on('end', () => {
          cancelTimer();
          opts.signal?.removeEventListener('abort', onAbort);
          const status = res.statusCode ?? 0;
          this.observe(String(status), method);
          if (status === 401 && this.config.authHeaders) this.authRefused = true;
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          if ((res.headers['content-type'] ?? '').includes('json') && text.length > 0) {
            try {
              body = JSON.parse(text);
            } catch {
              reject(
                new KubeApiError(
                  status || 0,
                  'MalformedResponse',
                  `${method} ${pathname()}: the API answered ${status} with malformed JSON`,
                ),
              );
              return;
            }
          }
          resolve({ status, headers: res.headers, body: body as T });
        });
      });
      req.end(payload);
    });
  }

  private observe(code: string, method: string): void {
    try {
      this.observer?.(code, method, this.host);
    } catch {
      // metrics must never break an API call
    }
  }

  /** Sends a request and returns the decoded body of a 2xx answer; throws {@link KubeApiError} otherwise. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const res = await this.raw<T>(method, path, opts);
    if (res.status < 200 || res.status > 299) {
      throw new KubeApiError(res.status, statusReason(res.body), statusMessage(res.body, res.status), res.body);
    }
    return res.body;
  }

  /** GET of a path (an object or a list); a non-2xx answer rejects with a `KubeApiError`. */
  get<T = Record<string, unknown>>(path: string, opts?: RequestOptions): Promise<T> {
    return this.request<T>('GET', path, opts);
  }
  /** POST of an object to a collection path. */
  create<T = Record<string, unknown>>(path: string, body: unknown, opts?: RequestOptions): Promise<T> {
    return this.request<T>('POST', path, withBody(opts, body));
  }
  /** PUT of a whole object (409 when its `resourceVersion` is stale). */
  replace<T = Record<string, unknown>>(path: string, body: unknown, opts?: RequestOptions): Promise<T> {
    return this.request<T>('PUT', path, withBody(opts, body));
  }
  /** JSON merge patch (`application/merge-patch+json`). */
  mergePatch<T = Record<string, unknown>>(path: string, patch: unknown, opts?: RequestOptions): Promise<T> {
    return this.request<T>('PATCH', path, withBody(opts, patch, 'application/merge-patch+json'));
  }
  /** DELETE of an object (or a collection). */
  delete<T = Record<string, unknown>>(path: string, opts?: RequestOptions): Promise<T> {
    return this.request<T>('DELETE', path, opts);
  }

  /**
   * Opens a watch (`?watch=1`) and calls `onEvent` for each event. The stream ends when the server closes it
   * (e.g. after `timeoutSeconds`), when `stop()` is called, or with an error.
   */
  watch<T = Record<string, unknown>>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (ev: WatchEvent<T>) => void,
    opts: { accept?: string } = {},
  ): WatchHandle {
    const controller = new AbortController();
    const done = (async () => {
      const url = this.url(path, { ...query, watch: 1 });
      const headers: Record<string, string> = {
        Accept: opts.accept ?? 'application/json',
        'User-Agent': this.config.userAgent ?? 'ctrlmetrics',
        ...(await this.authHeaders()),
      };
      // stopped while the credentials were read: the abort below would never be heard
      if (controller.signal.aborted) return;
      const mod = url.protocol === 'http:' ? http : https;
      await new Promise<void>((resolve, reject) => {
        const req = mod.request(url, { method: 'GET', headers, agent: this.agent });
        controller.signal.addEventListener(
          'abort',
          () => {
            req.destroy();
            resolve();
          },
          { once: true },
        );
        req.on('error', (err: NodeJS.ErrnoException) => {
          if (controller.signal.aborted) return resolve();
          this.observe('<error>', 'GET');
          reject(new KubeApiError(0, err.code ?? 'ConnectionError', `watch ${url.pathname}: ${err.message}`));
        });
        req.on('response', (res) => {
          const status = res.statusCode ?? 0;
          this.observe(String(status), 'GET');
          if (status === 401 && this.config.authHeaders) this.authRefused = true;
          if (status !== 200) {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              let body: unknown;
              try {
                body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
              } catch {
                body = undefined;
              }
              reject(new KubeApiError(status, statusReason(body), statusMessage(body, status), body));
            });
            return;
          }
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              if (!line) continue;
              try {
                onEvent(JSON.parse(line) as WatchEvent<T>);
              } catch (err) {
                req.destroy();
                reject(err instanceof Error ? err : new Error(String(err)));
                return;
              }
            }
          });
          res.on('end', () => resolve());
          res.on('error', (err) => (controller.signal.aborted ? resolve() : reject(err)));
        });
        req.end();
      });
    })();
    return { done, stop: () => controller.abort() };
  }
}

function statusReason(body: unknown): string {
  if (body && typeof body === 'object' && 'reason' in body && typeof (body as KubeStatus).reason === 'string') {
    return (body as KubeStatus).reason;
  }
  return 'Unknown';
}

function statusMessage(body: unknown, status: number): string {
  if (body && typeof body === 'object' && 'message' in body && typeof (body as KubeStatus).message === 'string') {
    return (body as KubeStatus).message;
  }
  if (typeof body === 'string' && body.length > 0 && body.length < 500) return `${status}: ${body.trim()}`;
  return `the API answered ${status}`;
}

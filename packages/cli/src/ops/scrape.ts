/**
 * `ctrlmetrics scrape`: fetches a secure metrics endpoint the way a scraper does (bearer token, verified TLS)
 * and turns every failure into what to do about it: 401, 403, 503, 500, TLS and connection errors.
 */
import https from 'node:https';
import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { OpsError, OpsUsageError } from './errors.js';
import { CtrlmetricsError } from 'ctrlmetrics/internal';

/** Where a pod's service-account token is mounted; the default token file when it exists. */
export const POD_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** Longest response body read (a scrape is rarely above a few MB). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** How to reach the endpoint. */
export interface ScrapeTarget {
  url: URL;
  /** Reads the bearer token (again before every scrape: mounted tokens rotate); undefined sends none. */
  token?: () => string;
  /** Where the token comes from, for messages (`--token`, `--token-file F`). */
  tokenSource?: string;
  insecure: boolean;
  /** PEM CA bundle (from `--cacert`). */
  ca?: Buffer;
  caFile?: string;
  /** Says what to do about a TLS failure instead of naming scrape's --cacert/--insecure flags (e.g. for doctor). */
  tlsHint?: string;
  /** The name the certificate must carry (SNI and verification) when it differs from the URL's host, e.g. the Service's DNS name behind a port-forward. */
  serverName?: string;
  /** Per-request deadline. */
  timeoutMs: number;
}

/** A successful scrape. */
export interface ScrapeResponse {
  status: number;
  contentType: string;
  body: string;
}

/** Why a scrape failed; `retryable` failures are tried again with backoff. */
export class ScrapeFailure extends CtrlmetricsError {
  static override readonly code: string = 'ERR_SCRAPE_FAILED';
  override name = 'ScrapeFailure';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

const TOKEN_HINT =
  'a token is one line of base64url characters, e.g. the output of ctrlmetrics token -n NAMESPACE SERVICEACCOUNT';

/**
 * The token as read from `source` (`--token` or `token file F`), or a {@link OpsError} saying what the value holds
 * instead and what it should hold: a kubeconfig or other multi-line file, a value with the `Bearer ` scheme, or
 * characters an HTTP header cannot carry.
 */
export function checkToken(value: string, source: string): string {
  const t = value.trim();
  if (!t) return t;
  if (/^apiVersion:|^kind:\s*Config|^clusters:|^\{\s*"(apiVersion|kind|clusters)"/m.test(t)) {
    throw new OpsUsageError(`${source} holds a kubeconfig, not a token: ${TOKEN_HINT}`);
  }
  if (/[\r\n]/.test(t))
    throw new OpsUsageError(`${source} holds ${t.split(/\r?\n/).length} lines, not a token: ${TOKEN_HINT}`);
  if (/^bearer\s/i.test(t))
    throw new OpsUsageError(
      `${source} starts with "${t.split(/\s/)[0]} ": give the token alone, without the scheme (${TOKEN_HINT})`,
    );
  // visible ASCII only: what a header value can carry and what every Kubernetes token is made of
  if (!/^[\x21-\x7e]+$/.test(t))
    throw new OpsUsageError(`${source} holds spaces or characters a bearer token cannot have: ${TOKEN_HINT}`);
  return t;
}

/** Builds the target from the command's flags (token, token file or the pod's, CA or insecure). */
export function resolveTarget(flags: {
  url: string;
  token?: string;
  tokenFile?: string;
  insecure?: boolean;
  cacert?: string;
  timeoutMs: number;
}): ScrapeTarget {
  let url: URL;
  try {
    url = new URL(flags.url);
  } catch {
    throw new OpsUsageError(`invalid URL ${JSON.stringify(flags.url)}: expected e.g. https://127.0.0.1:8443/metrics`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new OpsUsageError(`unsupported scheme ${url.protocol} in ${flags.url}: use https:// (or http://)`);
  if (flags.token !== undefined && flags.tokenFile !== undefined)
    throw new OpsUsageError('pass either --token or --token-file, not both');
  if (flags.insecure && flags.cacert) throw new OpsUsageError('pass either --insecure or --cacert, not both');
  const target: ScrapeTarget = { url, insecure: !!flags.insecure, timeoutMs: flags.timeoutMs };
  if (flags.token !== undefined) {
    const t = checkToken(flags.token, '--token');
    if (!t) throw new OpsUsageError('--token is empty');
    target.token = () => t;
    target.tokenSource = '--token';
  } else {
    const file = flags.tokenFile ?? (existsSync(POD_TOKEN_FILE) ? POD_TOKEN_FILE : undefined);
    if (file) {
      const read = () => {
        try {
          const t = checkToken(readFileSync(file, 'utf8'), `token file ${file}`);
          if (!t) throw new OpsError(`token file ${file} is empty`);
          return t;
        } catch (err) {
          if (err instanceof OpsError) throw err;
          throw new OpsError(`cannot read token file ${file}: ${(err as Error).message}`, { cause: err });
        }
      };
      read();
      target.token = read;
      target.tokenSource = `--token-file ${file}`;
    }
  }
  if (flags.cacert) {
    try {
      target.ca = readFileSync(flags.cacert);
      target.caFile = flags.cacert;
    } catch (err) {
      throw new OpsError(`cannot read --cacert ${flags.cacert}: ${(err as Error).message}`, { cause: err });
    }
  }
  return target;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'TIMEOUT',
]);

/** The sentence for a TLS failure: what is wrong with the certificate and which flag fixes it. */
export function explainTls(code: string, message: string, target: ScrapeTarget): string {
  const host = target.serverName ?? target.url.hostname;
  const skip = 'or --insecure to skip verification (testing only)';
  const hint = target.tlsHint;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return `TLS: the server's certificate does not name ${host} (${message}); ${hint ?? `connect by a name the certificate lists (e.g. <service>.<namespace>.svc), ${skip}`}`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return `TLS: the server's certificate is not valid now (${code}); renew it (the manager reloads it from --metrics-cert-path)${hint ? '' : `, ${skip}`}`;
  if (code === 'EPROTO' || code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
    return `TLS handshake with ${target.url.host} failed (${message}); if the endpoint serves plain HTTP (--metrics-secure=false) use http://`;
  }
  const ca = hint ? target.caFile : `--cacert ${target.caFile}`;
  const why = target.caFile
    ? `is not signed by the CA in ${ca}`
    : 'is not signed by a CA this machine trusts (the manager serves a self-signed certificate unless --metrics-cert-path is set)';
  return `TLS: the server's certificate ${why} (${code}); ${hint ?? `pass --cacert FILE with the CA that signed it, ${skip}`}`;
}

/** The user a 403 body names (`Authorization denied for user X`), if any. */
export function deniedUser(body: string): string | undefined {
  return /denied for user (\S+)/i.exec(body)?.[1];
}

/** The service-account reference in a user name (`system:serviceaccount:NS:NAME` → `NS:NAME`). */
function serviceAccountRef(user: string | undefined): string | undefined {
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user ?? '');
  return m ? `${m[1]}:${m[2]}` : undefined;
}

/** The subject of a JWT, unverified: only to name the identity in a hint. */
function tokenSubject(token: string | undefined): string | undefined {
  const part = token?.split('.')[1];
  if (!part) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { sub?: unknown };
    return typeof claims.sub === 'string' ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

/** The sentence for a non-200 answer of the metrics endpoint. */
export function explainStatus(status: number, body: string, target: ScrapeTarget, token: string | undefined): string {
  const text = body.trim().slice(0, 300);
  if (status === 401) {
    if (!token) {
      return 'no or invalid token: no token was sent; pass --token TOKEN or --token-file FILE (TOKEN=$(ctrlmetrics token -n NAMESPACE SERVICEACCOUNT))';
    }
    return (
      `no or invalid token: the API server did not accept the token from ${target.tokenSource} (expired, revoked, meant for another audience, or from another cluster); ` +
      'get a fresh one with ctrlmetrics token -n NAMESPACE SERVICEACCOUNT'
    );
  }
  if (status === 403) {
    const user = deniedUser(text) ?? tokenSubject(token);
    const sa = serviceAccountRef(user);
    const fix = sa
      ? `run ctrlmetrics grant --serviceaccount ${sa}`
      : `bind it with kubectl create clusterrolebinding NAME --clusterrole=<prefix>-metrics-reader --user=${user ?? 'USER'}`;
    return (
      `identity ${user ?? '(unknown)'} is not bound to the metrics-reader ClusterRole (get on /metrics): ${fix}. ` +
      'Just granted? The manager keeps a denial for the same token for up to 30 s (as controller-runtime); a new token is allowed at once'
    );
  }
  if (status === 500 && /^An error has occurred while serving metrics/.test(text)) {
    // a collector failed: authentication and authorization had passed, so this is not an RBAC problem
    const what = text.replace(/^An error has occurred while serving metrics:\s*/, '').split('\n')[0];
    return (
      `a metrics collector in the manager failed while gathering (authentication and authorization passed): ${what}; ` +
      'fix or unregister the collector it names (the manager logs the same error as "error gathering metrics")'
    );
  }
  if (status === 500) {
    return (
      'the manager could not ask the API server whether to allow the request (TokenReview/SubjectAccessReview failed): ' +
      'check that its service account is bound to the metrics-auth-role (ClusterRoleBinding <prefix>-metrics-auth-rolebinding) ' +
      `and that the API server is reachable from the manager (its log says which call failed)${text ? `; it answered: ${text}` : ''}`
    );
  }
  if (status === 503 && /cannot be reached/.test(text)) {
    const after = /retry in (\d+) s/.exec(text)?.[1];
    return (
      'the manager cannot reach the Kubernetes API server to review the token, and has no cached decision for it (decisions it already made keep answering for a while): ' +
      `check the API server and the manager's connection to it (the manager logs when the outage began). Try again${after ? ` in ${after} s` : ' shortly'}`
    );
  }
  if (status === 503) {
    const after = /retry in (\d+) s/.exec(text)?.[1];
    return (
      'the endpoint is saturated with new tokens to review (many callers it has not seen before at once: a flood of bad tokens, or many scrapers restarting together); ' +
      `tokens it already knows are still served. Try again${after ? ` in ${after} s` : ' shortly'}; if this persists and the callers are legitimate, widen the filter's admission.new lane`
    );
  }
  if (status === 400 && /HTTP request to an HTTPS server/i.test(text)) {
    return `${target.url.host} serves HTTPS (the metrics endpoint's default, --metrics-secure=true): use ${httpsUrl(target.url)}`;
  }
  if (status === 404) {
    if (target.url.pathname !== '/metrics')
      return `the endpoint answered 404 Not Found for ${target.url.pathname}: the metrics path is /metrics (${withPath(target.url, '/metrics')})`;
    return (
      `nothing is served at /metrics on ${target.url.host}: is this the metrics port? The health probe port (--health-probe-bind-address, :8081) ` +
      'serves only /healthz and /readyz; metrics are on --metrics-bind-address (:8443 by default, HTTPS)'
    );
  }
  if (status === 429) return `the endpoint answered 429 Too Many Requests: scrape less often (--interval)`;
  return `the endpoint answered ${status}${text ? `: ${text}` : ''}`;
}

function httpsUrl(url: URL): string {
  const u = new URL(url.href);
  u.protocol = 'https:';
  return u.href;
}

function withPath(url: URL, path: string): string {
  const u = new URL(url.href);
  u.pathname = path;
  return u.href;
}

/** One GET of the endpoint; throws {@link ScrapeFailure} with the explanation on any failure. */
export function scrapeOnce(target: ScrapeTarget, signal?: AbortSignal): Promise<ScrapeResponse> {
  const token = target.token?.();
  const headers: Record<string, string> = {
    Accept: 'text/plain;version=0.0.4;q=1,*/*;q=0.1',
    'User-Agent': 'ctrlmetrics-scrape',
  };
  if (token) headers.Authorization = `Bearer ${token}`;
  const mod = target.url.protocol === 'https:' ? https : http;
  const options: https.RequestOptions & { ALPNProtocols?: string[] } = {
    method: 'GET',
    headers,
    timeout: target.timeoutMs,
    agent: false,
  };
  if (target.url.protocol === 'https:') {
    options.rejectUnauthorized = !target.insecure;
    if (target.ca) options.ca = target.ca;
    if (target.serverName) options.servername = target.serverName;
    options.ALPNProtocols = ['http/1.1'];
  }
  return new Promise<ScrapeResponse>((resolve, reject) => {
    const req = mod.request(target.url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) {
          req.destroy();
          reject(new ScrapeFailure(`the response is larger than ${MAX_BODY_BYTES} bytes`, false));
          return;
        }
        chunks.push(c);
      });
      res.on('error', (err) => reject(new ScrapeFailure(`the response broke off: ${err.message}`, true)));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        const body = Buffer.concat(chunks).toString('utf8');
        if (status === 200) return resolve({ status, contentType: String(res.headers['content-type'] ?? ''), body });
        const retryable = status === 429 || status >= 500;
        reject(new ScrapeFailure(explainStatus(status, body, target, token), retryable, status));
      });
    });
    const onAbort = () => req.destroy(new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('close', () => signal?.removeEventListener('abort', onAbort));
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`no answer within ${target.timeoutMs} ms`), { code: 'TIMEOUT' })),
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      if (signal?.aborted) return reject(new ScrapeFailure('interrupted', false));
      if (TLS_CODES.has(code) || /certificate|SSL|TLS/i.test(err.message))
        return reject(new ScrapeFailure(explainTls(code || 'TLS', err.message, target), false));
      if (
        target.url.protocol === 'http:' &&
        (code === 'ECONNRESET' || code === 'EPIPE' || /socket hang up/i.test(err.message))
      ) {
        // a TLS-only server closes a plain-HTTP request without answering: no point retrying
        return reject(
          new ScrapeFailure(
            `${target.url.host} closed the connection without answering (${code || err.message}): if it serves HTTPS (the metrics endpoint's default), use ${httpsUrl(target.url)}`,
            false,
          ),
        );
      }
      if (CONNECT_CODES.has(code)) {
        return reject(
          new ScrapeFailure(
            `cannot connect to ${target.url.host} (${code}: ${err.message}): is the manager running and listening there (--metrics-bind-address)?`,
            true,
          ),
        );
      }
      reject(new ScrapeFailure(`request to ${target.url.host} failed: ${err.message}`, true));
    });
    req.end();
  });
}

/** Retry policy of {@link scrapeWithRetry}. */
export interface RetryOptions {
  /** Attempts in all (≥ 1). */
  attempts: number;
  /** First backoff; doubles per attempt up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Called before each retry (e.g. to show progress). */
  onRetry?: (failure: ScrapeFailure, attempt: number, waitMs: number) => void;
}

export const DEFAULT_RETRY: RetryOptions = { attempts: 4, backoffMs: 500, maxBackoffMs: 4000 };

/** Sleeps `ms`, or less when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** {@link scrapeOnce} with bounded retries and exponential backoff for transient failures (5xx, 429, connection). */
export async function scrapeWithRetry(
  target: ScrapeTarget,
  retry: RetryOptions = DEFAULT_RETRY,
  signal?: AbortSignal,
): Promise<ScrapeResponse> {
  let wait = retry.backoffMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await scrapeOnce(target, signal);
    } catch (err) {
      if (!(err instanceof ScrapeFailure) || !err.retryable || attempt >= retry.attempts || signal?.aborted) throw err;
      retry.onRetry?.(err, attempt, wait);
      await abortableSleep(wait, signal);
      if (signal?.aborted) throw new ScrapeFailure('interrupted', false);
      wait = Math.min(wait * 2, retry.maxBackoffMs);
    }
  }
}

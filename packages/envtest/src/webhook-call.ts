/**
 * One call of one admission webhook, as kube-apiserver makes it: POST of an AdmissionReview over HTTPS/1.1 (Node's https client offers no ALPN, so HTTP/1.1 as kube forces it) to the
 * webhook's URL or service (resolved through the authority's service map), TLS verified against `caBundle` (system
 * roots without one), `?timeout=Ns` and the webhook's deadline, then kube's checks of the answer. Failures come back
 * as the error text kube-apiserver puts after `failed calling webhook "<name>": `.
 */
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:https';
import { isIP } from 'node:net';
import { posix } from 'node:path';
import { isRecord, record, type JsonObject } from './json.js';
import { CtrlmetricsError } from 'ctrlmetrics/internal';

/** Where a webhook service reference (`<namespace>/<name>:<port>`) is served; undefined when unknown. */
export type ServiceResolver = (
  namespace: string,
  name: string,
  port: number,
) => { host: string; port: number } | undefined;

/** The answer of a webhook that answered well-formed. */
export interface WebhookAnswer {
  allowed: boolean;
  status?: { code?: number; reason?: string; message?: string; details?: JsonObject };
  patch?: string;
  patchType?: string;
  warnings: string[];
}

/** A failed call: counts under `failurePolicy`. */
export class WebhookCallError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_WEBHOOK_CALL';
  override name = 'WebhookCallError';
}

/**
 * Bound on a webhook's answer: an AdmissionReview carries at most the object twice plus a patch; kube's objects are
 * at most 3 MiB, so anything beyond a few of them is not an answer.
 */
const MAX_RESPONSE_BYTES = 12 * 1024 * 1024;
/** kube's webhook http.Client timeout, on top of the webhook's own. */
const CLIENT_TIMEOUT_MS = 30_000;

/**
 * Connections kept between calls, as kube-apiserver's webhook client keeps them (one cached transport per TLS
 * configuration): a webhook-heavy workload would otherwise pay a TLS handshake per admission. Bounded: agents
 * beyond the cap are closed oldest first; idle sockets are closed after {@link IDLE_SOCKET_MS} (below the serving
 * side's keep-alive, so the client closes first) and never keep the process alive.
 */
const MAX_AGENTS = 64;
const IDLE_SOCKET_MS = 30_000;
const agents = new Map<string, Agent>();

function agentFor(t: Target, ca: string | undefined): Agent {
  const caKey = ca ? createHash('sha256').update(ca).digest('hex') : '';
  const key = `${t.connectHost}\0${t.connectPort}\0${t.servername}\0${caKey}`;
  let agent = agents.get(key);
  if (agent) {
    // most recently used last, so the oldest is evicted first
    agents.delete(key);
    agents.set(key, agent);
    return agent;
  }
  agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxFreeSockets: 16, scheduling: 'lifo' });
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestKey);
    oldest.destroy();
  }
  return agent;
}

interface Target {
  /** The URL as Go prints it in errors (the port kept as written, `:443` included). */
  href: string;
  /** `Host` header: the URL's host as written. */
  host: string;
  /** Path and query sent. */
  path: string;
  /** Where to connect (differs from the URL's host for a service reference). */
  connectHost: string;
  connectPort: number;
  servername: string;
}

function target(
  clientConfig: JsonObject,
  resolve: ServiceResolver | undefined,
  timeoutSeconds: number,
  missingService = (name: string) => `services "${name}" not found`,
): Target {
  const query = `?timeout=${timeoutSeconds}s`;
  if (typeof clientConfig.url === 'string') {
    const u = new URL(clientConfig.url);
    // the host as written (WHATWG URLs drop a default port that Go keeps)
    const host = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(clientConfig.url)?.[1] ?? u.host;
    const path = `${joinPath(u.pathname)}${query}`;
    const hostname = u.hostname.replace(/^\[|\]$/g, '');
    return {
      href: `${u.protocol}//${host}${path}`,
      host,
      path,
      connectHost: hostname,
      connectPort: Number(u.port || 443),
      servername: isIP(hostname) ? '' : hostname,
    };
  }
  const svc = record(clientConfig.service) ?? {};
  // a stored configuration's service port was checked (1-65535) and defaulted to 443
  const port = typeof svc.port === 'number' ? svc.port : 443;
  const name = `${String(svc.name)}.${String(svc.namespace)}.svc`;
  const host = `${name}:${port}`;
  const path = `${joinPath(typeof svc.path === 'string' ? svc.path : '')}${query}`;
  const href = `https://${host}${path}`;
  const at = resolve?.(String(svc.namespace), String(svc.name), port);
  if (!at) throw new Error(`Post "${href}": ${missingService(String(svc.name))}`);
  return { href, host, path, connectHost: at.host, connectPort: at.port, servername: name };
}

/** Go's path.Join of the path (duplicate slashes collapsed, no trailing slash), as client-go builds the URL. */
function joinPath(p: string): string {
  if (!p) return '';
  const joined = posix.normalize(p).replace(/\/+$/, '');
  return joined.startsWith('/') ? joined : `/${joined}`;
}

/** How Go's net/http and crypto/tls word a Node transport error. */
function transportText(err: NodeJS.ErrnoException, t: Target): string {
  const addr = `${t.connectHost.includes(':') ? `[${t.connectHost}]` : t.connectHost}:${t.connectPort}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'ECONNRESET':
      return 'EOF';
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
      return 'tls: failed to verify certificate: x509: certificate signed by unknown authority';
    case 'CERT_HAS_EXPIRED':
      return 'tls: failed to verify certificate: x509: certificate has expired or is not yet valid';
    case 'ERR_TLS_CERT_ALTNAME_INVALID': {
      const sans = String((err as { cert?: { subjectaltname?: string } }).cert?.subjectaltname ?? '')
        .split(', ')
        .map((s) => s.replace(/^(DNS|IP Address):/, ''));
      return `tls: failed to verify certificate: x509: certificate is valid for ${sans.join(', ')}, not ${t.servername || t.connectHost}`;
    }
    default:
      return err.message;
  }
}

/** The PEM certificates of a `caBundle` (base64 in JSON; the bytes are PEM). */
function caFromBundle(caBundle: unknown): string | undefined {
  if (typeof caBundle !== 'string' || caBundle === '') return undefined;
  return Buffer.from(caBundle, 'base64').toString('utf8');
}

/**
 * Sends one AdmissionReview and returns the webhook's verified answer; throws {@link WebhookCallError} with kube's
 * wording when the call fails or the answer is invalid.
 */
export async function callWebhook(opts: {
  clientConfig: JsonObject;
  timeoutSeconds: number;
  review: JsonObject;
  mutating: boolean;
  resolveService?: ServiceResolver;
}): Promise<WebhookAnswer> {
  const review = await postReview({
    ...opts,
    userAgent: 'kube-apiserver-admission',
    prefix: 'failed to call webhook: ',
  });
  return verify(review, String(record(opts.review.request)?.uid), opts.mutating);
}

/**
 * POSTs a review (admission or conversion) to a webhook and answers the decoded reply; throws
 * {@link WebhookCallError} with `prefix` and kube's wording of what failed.
 */
export async function postReview(opts: {
  clientConfig: JsonObject;
  timeoutSeconds: number;
  review: JsonObject;
  resolveService?: ServiceResolver;
  userAgent: string;
  prefix: string;
  /** How a service reference that resolves nowhere is worded (admission's resolver says `services "x"`). */
  missingService?: (name: string) => string;
}): Promise<unknown> {
  let t: Target;
  try {
    t = target(opts.clientConfig, opts.resolveService, opts.timeoutSeconds, opts.missingService);
  } catch (err) {
    throw new WebhookCallError(`${opts.prefix}${(err as Error).message}`, { cause: err });
  }
  const ca = caFromBundle(opts.clientConfig.caBundle);
  const body = Buffer.from(JSON.stringify(opts.review));
  const post = `Post "${t.href}"`;
  const agent = agentFor(t, ca);
  const send = () =>
    new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      let done = false;
      const fail = (text: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.destroy();
        reject(new WebhookCallError(`${opts.prefix}${post}: ${text}`));
      };
      const failOrRetry = (e: NodeJS.ErrnoException) => {
        // a kept connection closed under the request before any answer: most often the server closed it idle as
        // the request went out. Go's transport sends such a request again on a new connection; Node cannot tell
        // whether the webhook read it, and a webhook answers a repeated review alike (kube may call it twice)
        if (!done && req.reusedSocket && !answered && (e.code === 'ECONNRESET' || e.code === 'EPIPE')) {
          done = true;
          clearTimeout(timer);
          req.destroy();
          reject(new StaleConnection());
          return;
        }
        fail(transportText(e, t));
      };
      let answered = false;
      const req = request(
        {
          host: t.connectHost,
          port: t.connectPort,
          path: t.path,
          method: 'POST',
          // the service name (or the URL's host) is what the certificate must name, wherever the address points
          servername: t.servername || undefined,
          headers: {
            Host: t.host,
            'Content-Type': 'application/json',
            Accept: 'application/json, */*',
            'User-Agent': opts.userAgent,
            'Content-Length': String(body.length),
          },
          ...(ca ? { ca } : {}),
          // a caBundle holding the serving certificate itself (as envtest writes it) is trusted as Go trusts it
          ...(ca ? { allowPartialTrustChain: true } : {}),
          agent,
        },
        (res) => {
          answered = true;
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_RESPONSE_BYTES)
              return fail(`http: response body too large (over ${MAX_RESPONSE_BYTES} bytes)`);
            chunks.push(c);
          });
          res.on('end', () => {
            if (done) return;
            done = true;
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
          });
          res.on('error', (e) => fail(transportText(e, t)));
        },
      );
      const timer = setTimeout(
        () => fail('context deadline exceeded'),
        Math.min(opts.timeoutSeconds * 1000, CLIENT_TIMEOUT_MS),
      );
      req.on('error', failOrRetry);
      req.end(body);
    });
  let raw: { status: number; body: Buffer };
  try {
    raw = await send();
  } catch (err) {
    if (!(err instanceof StaleConnection)) throw err;
    raw = await send();
  }
  if (raw.status < 200 || raw.status > 299) {
    const text =
      raw.status === 404
        ? 'the server could not find the requested resource'
        : `an error on the server (${JSON.stringify(raw.body.toString('utf8').slice(0, 1024))}) has prevented the request from succeeding`;
    throw new WebhookCallError(`${opts.prefix}${text}`);
  }
  try {
    return JSON.parse(raw.body.toString('utf8')) as unknown;
  } catch (err) {
    throw new WebhookCallError(`${opts.prefix}couldn't get version/kind; json parse error: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/** A kept connection found closed before any answer: the one case a call is sent again. */
class StaleConnection extends Error {}

/** kube's checks of a v1 answer (`VerifyAdmissionResponse`), in its order and words. */
function verify(review: unknown, uid: string, mutating: boolean): WebhookAnswer {
  const invalid = (why: string) => new WebhookCallError(`received invalid webhook response: ${why}`);
  if (!isRecord(review)) throw invalid('webhook response was absent');
  if (!review.response || typeof review.response !== 'object') throw invalid('webhook response was absent');
  // a list has none of a response's fields: it fails the uid check below
  const r = record(review.response) ?? {};
  if (String(r.uid ?? '') !== uid)
    throw invalid(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(r.uid ?? ''))}`);
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview') {
    const [g, v] = String(review.apiVersion ?? '').includes('/')
      ? String(review.apiVersion).split('/', 2)
      : ['', String(review.apiVersion ?? '')];
    throw invalid(
      `expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${g ? `${g}/` : ''}${v}, Kind=${String(review.kind ?? '')}`,
    );
  }
  const hasPatch = typeof r.patch === 'string' && r.patch !== '';
  const hasType = r.patchType !== undefined && r.patchType !== null;
  if (mutating) {
    if (hasPatch && !hasType) throw invalid('webhook returned response.patch but not response.patchType');
    if (hasType && !hasPatch) throw invalid('webhook returned response.patchType but not response.patch');
  } else {
    if (hasPatch) throw invalid('validating webhook may not return response.patch');
    if (hasType) throw invalid('validating webhook may not return response.patchType');
  }
  const warnings = Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === 'string') : [];
  return {
    allowed: r.allowed === true,
    ...(r.status && typeof r.status === 'object' ? { status: r.status } : {}),
    ...(hasPatch ? { patch: r.patch as string, patchType: String(r.patchType) } : {}),
    warnings,
  };
}

/**
 * `filters.withAuthenticationAndAuthorization`: every request must carry a bearer token that the Kubernetes
 * API authenticates (TokenReview) and authorizes for the request's path and verb (SubjectAccessReview).
 *
 *   no/invalid Authorization header          → 401 Unauthorized
 *   token not authenticated                  → 401 Unauthorized (controller-runtime answers 500 here)
 *   review not admitted in time (flood)      → 503 Too many ... with Retry-After (see below)
 *   API server unreachable (down, 5xx, slow) → a cached allow up to `staleDecisionMaxMs` past its TTL, else 503
 *                                              with Retry-After (the outage is logged once, not per request)
 *   TokenReview could not be made            → 500 Authentication failed
 *   SubjectAccessReview could not be made    → 500 Authorization for user X failed
 *   not allowed                              → 403 Authorization denied for user X (verb "get" on path "/metrics")
 *
 * 401 and 403 are the API's answers about the caller; 500 means the API could not be asked (down, slow, or the
 * manager may not create reviews) and is the server's fault; 503 means the filter itself is saturated by other
 * callers and the client should come back after Retry-After — nothing is wrong with it or with the API.
 *
 * Decisions are cached in bounded LRUs keyed by an HMAC of the token (never the token) with a per-process
 * random key; concurrent identical look-ups share one API call. Reviews that miss the caches are admitted in
 * lanes (admission.ts): a token that authenticated before is re-validated in the `known` lane, a never-seen token
 * signed by the cluster's service-account keys (issuer-keys.ts) goes to the `signed` lane, and only the rest to
 * the `new` lane, so a flood of garbage tokens cannot crowd out real scrapers. The filter never allows on error.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { KubeApiError, KubeClient } from '../../kube/client.js';
import type { RestConfig } from '../../kube/config.js';
import type { Logger } from '../../util/log.js';
import { sendText } from '../server/respond.js';
import { expectsContinue, pathOf } from '../server/request.js';
import type { Filter, FilterProvider, Handler } from '../server/types.js';
import { authorizationValues, parseBearerToken } from './bearer.js';
import { DecisionCache } from './cache.js';
import { LRUCache } from 'lru-cache';
import { Admission, AdmissionRejectedError, type LaneLimits, type LaneName } from './admission.js';
import { systemTimerClock, type TimerClock } from '../../util/timers.js';
import { IssuerKeys } from './issuer-keys.js';
import { filterMetrics, type FilterMetrics } from './metrics.js';
import { certificateIdentity, type CertificateIdentity } from './client-cert.js';
import { staticallyAllowed, validateStaticRules, type StaticAuthorizationRule } from './static-authorization.js';
import {
  ReviewForbiddenError,
  isApiOutage,
  subjectAccessReview,
  tokenReview,
  type AuthnResult,
  type AuthzDecision,
  type ReviewLimits,
  type UserInfo,
} from './reviews.js';

/** Tuning of the authentication/authorization filter. */
export interface AuthFilterOptions {
  /** How long an authenticated token is cached (default 60 000 ms). */
  authnTTLms?: number;
  /**
   * How long a token the API did not authenticate is cached (default 60 000 ms, controller-runtime's 1 min), with or
   * without `status.error` (see the Authenticator's cache for why that differs from controller-runtime).
   */
  unauthnTTLms?: number;
  /** How long an allow decision is cached (default 300 000 ms). */
  allowTTLms?: number;
  /** How long a deny decision is cached (default 30 000 ms). */
  denyTTLms?: number;
  /**
   * How long past its TTL a cached allow (an authenticated token, an allowed path) still answers while the API
   * server cannot be reached (down, 5xx, past the deadline), so that scrapes survive an API outage (default
   * 600 000 ms; 0: never). A deny is never served stale, and a stale allow is used only when the review that should
   * replace it failed: while the API answers, every decision is as fresh as the TTLs say.
   */
  staleDecisionMaxMs?: number;
  /**
   * Rules that allow a user (by name or group) a verb on a path without a SubjectAccessReview (kube-rbac-proxy's
   * static authorization; default none). Authentication still happens; what no rule matches is reviewed as usual.
   * Trade-off: such access follows this configuration, not the cluster's RBAC (revoking a binding does not revoke
   * it). See {@link loadStaticAuthorizationFile} for the file format.
   */
  staticAuthorization?: StaticAuthorizationRule[];
  /** Entries per cache (default 4096 each for authentication and authorization). */
  cacheSize?: number;
  /** Deadline of one review including retries (default 10 000 ms). */
  timeoutMs?: number;
  /**
   * Longest wait for the API client's rate limiter before a review gives up with 500 (default 1 000 ms). Keeps a
   * flood of new tokens from queueing scrapes for the whole deadline once the client's QPS is used up.
   */
  rateLimitWaitMs?: number;
  /**
   * Client-side rate limit of the filter's own API client (default 100 requests per second, burst 200). The filter
   * never uses the manager's client: a flood of new tokens must not delay a lease renewal or a reconcile.
   */
  reviewQps?: number;
  reviewBurst?: number;
  /** Connections the filter's own API client keeps to the API server at most (default 16). */
  reviewConnections?: number;
  /**
   * Review a never-seen token whose signature verifies with the cluster's service-account keys (read from
   * `/openid/v1/jwks`) in the `signed` lane, apart from other never-seen tokens (default true).
   */
  preferClusterSignedTokens?: boolean;
  /** Limits of the review lanes (defaults: `DEFAULT_LANES` of the filters). */
  admission?: Partial<Record<LaneName, Partial<LaneLimits>>>;
  /** Clock of the review lanes (tests). */
  admissionClock?: TimerClock;
  /** Clock the cached decisions expire by (tests; default the process's monotonic clock). */
  cacheClock?: {
    /** A monotonic reading in ms. */
    now(): number;
  };
}

/** The default: lru-cache's own clock (it reuses a reading for 1 ms, which keeps warm requests cheap). */
const SYSTEM_CACHE_CLOCK = { now: () => performance.now() };

const DEFAULTS: Required<AuthFilterOptions> = {
  authnTTLms: 60_000,
  unauthnTTLms: 60_000,
  allowTTLms: 300_000,
  denyTTLms: 30_000,
  staleDecisionMaxMs: 600_000,
  staticAuthorization: [],
  cacheSize: 4096,
  timeoutMs: 10_000,
  rateLimitWaitMs: 1_000,
  reviewQps: 100,
  reviewBurst: 200,
  reviewConnections: 16,
  preferClusterSignedTokens: true,
  admission: {},
  admissionClock: systemTimerClock,
  cacheClock: SYSTEM_CACHE_CLOCK,
};

/**
 * While the API server cannot be reached, reviews are tried again at most this often; in between, look-ups fail at
 * once (stale allows answer, the rest get 503), instead of each waiting out the review's retries.
 */
const OUTAGE_PROBE_MS = 2_000;
/** Retry-After of a 503 during an outage. */
export const OUTAGE_RETRY_AFTER_S = 5;
/** Deadline of a review that a stale allow stands behind: one quick attempt, no retries. */
const STALE_REFRESH_TIMEOUT_MS = 2_000;

/** What the filter learns about the API server's reachability (logged once per outage). */
export type ApiStateListener = (
  state: { reachable: false; error: string } | { reachable: true; outageMs: number; staleServed: number },
) => void;

/** How long a token that authenticated is remembered as known (its re-validations use the `known` lane). */
const KNOWN_TOKEN_TTL_MS = 60 * 60_000;

const RBAC_HINT =
  "the manager's service account needs the metrics-auth-role: create on tokenreviews (authentication.k8s.io) and subjectaccessreviews (authorization.k8s.io)";

/** Longest authorization-cache key input; longer requests are decided without caching. */
const MAX_AUTHZ_KEY_INPUT = 10_000;
/** Remembered authorization-cache keys per user object (distinct verb and path pairs). */
const MAX_AUTHZ_KEYS_PER_USER = 16;

/** The authentication and authorization decisions, with their caches. Exposed for tests and reuse. */
export class Authenticator {
  readonly opts: Required<AuthFilterOptions>;
  private readonly hmacKey = randomBytes(32);
  /** @internal The authentication decisions (read by tests). */
  readonly authnCache: DecisionCache<AuthnResult>;
  /** @internal The authorization decisions (read by tests). */
  readonly authzCache: DecisionCache<AuthzDecision>;
  /** @internal The review admission lanes (read by tests). */
  readonly admission: Admission;
  /** @internal The cluster's token-signing keys, when `preferClusterSignedTokens`. */
  readonly issuerKeys: IssuerKeys | undefined;
  /** HMAC keys of tokens that authenticated (bounded, forgotten after an hour): their reviews are `known`. */
  private readonly knownTokens: LRUCache<string, true>;
  private readonly authzKeys = new WeakMap<UserInfo, Map<string, string>>();
  /** Clock reading when the API server stopped answering (undefined while it answers). */
  private outageSince: number | undefined;
  /** No review is tried before this reading during an outage. */
  private nextProbe = 0;
  private lastOutageError = '';
  /** Stale allows that answered, in all and since the current outage began. */
  staleServed = 0;
  private staleServedInOutage = 0;
  /** Told when the API server stops or starts answering reviews. */
  onApiState: ApiStateListener | undefined;
  /** @internal The filter's metrics (global registry). */
  readonly metrics: FilterMetrics;
  /** Static authorization rules, checked before a SubjectAccessReview. */
  readonly staticRules: readonly StaticAuthorizationRule[];

  constructor(
    private readonly client: KubeClient,
    opts: AuthFilterOptions = {},
  ) {
    this.opts = { ...DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) };
    // TTLs as controller-runtime's (1 min either way), with one deliberate difference: there, a rejection that
    // carries status.error becomes an error and is not cached — and a real kube-apiserver puts one in every
    // rejection ("invalid bearer token", "[invalid bearer token, service account token has expired]"), so a
    // repeated bad token would cost a TokenReview per request. Any answer of the API is cached here; only failed
    // calls (no answer) are not.
    const cacheClock = this.opts.cacheClock === SYSTEM_CACHE_CLOCK ? undefined : this.opts.cacheClock;
    const staleMs = Math.max(0, this.opts.staleDecisionMaxMs);
    const stale = <V extends NonNullable<unknown>>(allows: (v: V) => boolean) =>
      staleMs > 0
        ? { staleFor: (v: V) => (allows(v) ? staleMs : 0), usable: isApiOutage, onStale: () => this.noteStale() }
        : undefined;
    this.staticRules = validateStaticRules(this.opts.staticAuthorization);
    this.metrics = filterMetrics();
    this.authnCache = new DecisionCache<AuthnResult>(
      this.opts.cacheSize,
      (r) => (r.authenticated ? this.opts.authnTTLms : this.opts.unauthnTTLms),
      cacheClock,
      stale((r: AuthnResult) => r.authenticated),
      this.metrics.cache.authentication,
    );
    this.authzCache = new DecisionCache<AuthzDecision>(
      this.opts.cacheSize,
      (d) => (d.allowed ? this.opts.allowTTLms : this.opts.denyTTLms),
      cacheClock,
      stale((d: AuthzDecision) => d.allowed),
      this.metrics.cache.authorization,
    );
    this.admission = new Admission(this.opts.admission, this.opts.admissionClock);
    this.knownTokens = new LRUCache<string, true>({ max: this.opts.cacheSize, ttl: KNOWN_TOKEN_TTL_MS });
    this.issuerKeys = this.opts.preferClusterSignedTokens ? new IssuerKeys(client) : undefined;
    void this.issuerKeys?.load();
  }

  /**
   * Who the token belongs to (cached; one API call for concurrent identical tokens). A cached answer is returned
   * as is, a look-up as a promise that rejects if the API cannot tell.
   */
  authenticate(token: string): AuthnResult | Promise<AuthnResult> {
    const key = createHmac('sha256', this.hmacKey).update(token).digest('base64url');
    return this.authnCache.get(key, (staleStandsBy) =>
      this.review(staleStandsBy, async (limits) => {
        const lane: LaneName = this.knownTokens.has(key)
          ? 'known'
          : (await this.issuerKeys?.signedByCluster(token))
            ? 'signed'
            : 'new';
        const result = await this.admission.run(lane, () =>
          timed(this.metrics.startReview('TokenReview'), tokenReview(this.client, token, limits)),
        );
        if (result.authenticated) this.knownTokens.set(key, true);
        return result;
      }),
    );
  }

  /**
   * Whether the user may use `verb` on `path` (cached). A cached answer is returned as is, a look-up as a
   * promise that rejects if the API cannot tell.
   */
  authorize(user: UserInfo, path: string, verb: string): AuthzDecision | Promise<AuthzDecision> {
    if (this.staticRules.length > 0 && staticallyAllowed(this.staticRules, user, path, verb)) return STATIC_ALLOW;
    // the user object of a cached authentication is reused scrape after scrape: remember its cache keys
    // (a few per user; the entry goes away with the user object) instead of hashing them on every request
    const memoKey = `${verb} ${path}`;
    let keys = this.authzKeys.get(user);
    let key = keys?.get(memoKey);
    if (key === undefined) {
      const input = JSON.stringify([user.username, user.uid ?? '', user.groups, user.extra ?? {}, path, verb]);
      if (input.length >= MAX_AUTHZ_KEY_INPUT)
        return this.admission.run('known', () => subjectAccessReview(this.client, user, path, verb, this.opts));
      key = createHash('sha256').update(input).digest('base64url');
      if (!keys) this.authzKeys.set(user, (keys = new Map<string, string>()));
      if (keys.size < MAX_AUTHZ_KEYS_PER_USER) keys.set(memoKey, key);
    }
    // only authenticated users get here: their reviews use the `known` lane
    return this.authzCache.get(key, (staleStandsBy) =>
      this.review(staleStandsBy, (limits) =>
        this.admission.run('known', () =>
          timed(
            this.metrics.startReview('SubjectAccessReview'),
            subjectAccessReview(this.client, user, path, verb, limits),
          ),
        ),
      ),
    );
  }

  /** True while the API server is not answering reviews. */
  get apiUnreachable(): boolean {
    return this.outageSince !== undefined;
  }

  /**
   * Runs one review, keeping track of the API server's reachability: during an outage reviews are tried at most
   * every OUTAGE_PROBE_MS (in between they fail at once), and a review a stale allow stands behind gets one quick
   * attempt instead of the full retries.
   */
  private async review<V>(staleStandsBy: boolean, call: (limits: ReviewLimits) => Promise<V>): Promise<V> {
    const now = this.opts.cacheClock.now();
    if (this.outageSince !== undefined && now < this.nextProbe) {
      throw new KubeApiError(
        0,
        'Unreachable',
        `the API server could not be reached a moment ago: ${this.lastOutageError}`,
      );
    }
    const limits: ReviewLimits = staleStandsBy
      ? {
          timeoutMs: Math.min(this.opts.timeoutMs, STALE_REFRESH_TIMEOUT_MS),
          rateLimitWaitMs: this.opts.rateLimitWaitMs,
          retry: false,
        }
      : this.opts;
    try {
      const value = await call(limits);
      if (this.outageSince !== undefined) {
        const outageMs = this.opts.cacheClock.now() - this.outageSince;
        this.outageSince = undefined;
        this.onApiState?.({ reachable: true, outageMs, staleServed: this.staleServedInOutage });
      }
      return value;
    } catch (err) {
      if (isApiOutage(err)) {
        this.lastOutageError = errorText(err);
        this.nextProbe = this.opts.cacheClock.now() + OUTAGE_PROBE_MS;
        if (this.outageSince === undefined) {
          this.outageSince = this.opts.cacheClock.now();
          this.staleServedInOutage = 0;
          this.onApiState?.({ reachable: false, error: this.lastOutageError });
        }
      }
      throw err;
    }
  }

  private noteStale(): void {
    this.staleServed++;
    this.staleServedInOutage++;
  }
}

/** The decision of a static authorization rule. */
const STATIC_ALLOW: AuthzDecision = Object.freeze({ allowed: true, reason: 'allowed by a static authorization rule' });

/** Ends a review's timing with its outcome. */
function timed<T>(end: (ok: boolean) => void, p: Promise<T>): Promise<T> {
  return p.then(
    (v) => {
      end(true);
      return v;
    },
    (err: unknown) => {
      end(false);
      throw err;
    },
  );
}

/** Adds `system:authenticated` like the API server's group adder does. */
function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.username === 'system:anonymous') return user;
  if (user.groups.includes('system:authenticated') || user.groups.includes('system:unauthenticated')) return user;
  return { ...user, groups: [...user.groups, 'system:authenticated'] };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * At most one error line per interval, with the number left out since the last one: during an outage or a flood
 * of new tokens every scrape fails the same way, and the log must not grow with the request rate.
 */
class ErrorLogThrottle {
  private last = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly intervalMs = 10_000,
    private readonly level: 'error' | 'warn' = 'error',
  ) {}

  log(log: Logger, msg: string, fields: Record<string, unknown>): void {
    const now = performance.now();
    if (now - this.last < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.last = now;
    log[this.level](msg, this.suppressed ? { ...fields, similarErrorsNotLogged: this.suppressed } : fields);
    this.suppressed = 0;
  }
}

/**
 * RFC 6750's challenge on a 401, which controller-runtime leaves out: says the endpoint wants a bearer token, and
 * (with a token) that the one sent was not accepted. No realm or error description: nothing about the cluster leaks.
 */
const NO_TOKEN_CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
const INVALID_TOKEN_CHALLENGE = { 'WWW-Authenticate': 'Bearer error="invalid_token"' };

/** Wraps `handler` with bearer-token authentication and authorization through `auth`. */
export function authFilter(auth: Authenticator): Filter {
  return (log: Logger, handler: Handler): Handler => {
    // With warm caches nothing below awaits before `handler` runs: a cached request costs no promise and no
    // microtask hop, and reaches the handler exactly when it would without the filter.
    const errors = new ErrorLogThrottle();
    const saturated = new ErrorLogThrottle(10_000, 'warn');
    // one group-completed user per cached authentication, so authorize() sees the same object every time
    const completed = new WeakMap<UserInfo, UserInfo>();
    const counted = auth.metrics.requests;
    // an outage is logged when it starts and when it ends, never per request
    const staleNote =
      auth.opts.staleDecisionMaxMs > 0
        ? `cached allows answer for up to ${Math.round(auth.opts.staleDecisionMaxMs / 1000)} s past their TTL, `
        : '';
    auth.onApiState = (state) => {
      if (!state.reachable)
        log.error(`Cannot reach the API server to review tokens: ${staleNote}other requests get 503 with Retry-After`, {
          error: state.error,
        });
      else
        log.info('The API server answers reviews again', {
          outageSeconds: Math.round(state.outageMs / 1000),
          staleDecisionsServed: state.staleServed,
        });
    };
    if (auth.staticRules.length > 0)
      log.info('Static authorization: these users are allowed without a SubjectAccessReview', {
        rules: auth.staticRules.map((r) => ({ ...r.user, path: r.path, verb: r.verb })),
      });
    const unreachable = (res: Parameters<Handler>[1]) => {
      counted['503'].inc();
      sendText(
        res,
        503,
        `The Kubernetes API server cannot be reached to review the request: retry in ${OUTAGE_RETRY_AFTER_S} s`,
        { 'Retry-After': String(OUTAGE_RETRY_AFTER_S) },
      );
    };
    // a connection's client certificate is read once (a scraper keeps its connection open across scrapes)
    const certificates = new WeakMap<object, CertificateIdentity>();
    const certificateOf = (socket: object): CertificateIdentity => {
      let id = certificates.get(socket);
      if (id === undefined) certificates.set(socket, (id = certificateIdentity(socket)));
      return id;
    };
    return async (req, res) => {
      let user: UserInfo | undefined;
      const cert = req.socket ? certificateOf(req.socket) : undefined;
      if (cert?.kind === 'rejected') {
        log.debug('Authentication failed: client certificate refused', { reason: cert.reason });
        counted['401'].inc();
        sendText(res, 401, 'Unauthorized');
        return;
      }
      if (cert?.kind === 'user') {
        // verified against the client CA: the certificate is the authentication (no TokenReview)
        user = completed.get(cert.user);
        if (!user) completed.set(cert.user, (user = withAuthenticatedGroup(cert.user)));
      } else {
        const token = parseBearerToken(authorizationValues(req.rawHeaders));
        if (token === undefined) {
          log.debug('Authentication failed: no bearer token');
          counted['401'].inc();
          sendText(res, 401, 'Unauthorized', NO_TOKEN_CHALLENGE);
          return;
        }
        let authn: AuthnResult;
        try {
          const pending = auth.authenticate(token);
          authn = pending instanceof Promise ? await pending : pending;
        } catch (err) {
          if (err instanceof AdmissionRejectedError) {
            saturated.log(log, 'Too many token reviews: answering 503', { lane: err.lane, error: err.message });
            counted['503'].inc();
            sendText(res, 503, `Too many new tokens to review: retry in ${err.retryAfterSeconds} s`, {
              'Retry-After': String(err.retryAfterSeconds),
            });
            return;
          }
          if (isApiOutage(err)) return unreachable(res);
          errors.log(
            log,
            'Authentication failed',
            err instanceof ReviewForbiddenError
              ? { error: errorText(err), hint: RBAC_HINT }
              : { error: errorText(err) },
          );
          counted['500'].inc();
          sendText(res, 500, 'Authentication failed');
          return;
        }
        if (!authn.authenticated) {
          log.debug('Authentication failed: token not authenticated', { reason: authn.error ?? '' });
          counted['401'].inc();
          sendText(res, 401, 'Unauthorized', INVALID_TOKEN_CHALLENGE);
          return;
        }
        user = completed.get(authn.user);
        if (!user) completed.set(authn.user, (user = withAuthenticatedGroup(authn.user)));
      }
      const path = pathOf(req.url);
      const verb = (req.method ?? 'GET').toLowerCase();
      let decision: AuthzDecision;
      try {
        const pending = auth.authorize(user, path, verb);
        decision = pending instanceof Promise ? await pending : pending;
      } catch (err) {
        if (err instanceof AdmissionRejectedError) {
          saturated.log(log, 'Too many access reviews: answering 503', { lane: err.lane, error: err.message });
          counted['503'].inc();
          sendText(res, 503, `Too many authorization reviews: retry in ${err.retryAfterSeconds} s`, {
            'Retry-After': String(err.retryAfterSeconds),
          });
          return;
        }
        if (isApiOutage(err)) return unreachable(res);
        const msg = `Authorization for user ${user.username} failed`;
        errors.log(
          log,
          msg,
          err instanceof ReviewForbiddenError ? { error: errorText(err), hint: RBAC_HINT } : { error: errorText(err) },
        );
        counted['500'].inc();
        sendText(res, 500, msg);
        return;
      }
      if (!decision.allowed) {
        const msg = `Authorization denied for user ${user.username} (verb "${verb}" on path "${path}")`;
        log.debug('Authorization denied', { user: user.username, reason: decision.reason, path, verb });
        counted['403'].inc();
        sendText(res, 403, msg);
        return;
      }
      // only now may the caller send the body it announced
      if (expectsContinue(req) && !res.headersSent) res.writeContinue();
      counted['200'].inc();
      // downstream handlers never see the credential
      delete req.headers.authorization;
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
        if (req.rawHeaders[i].toLowerCase() === 'authorization') req.rawHeaders[i + 1] = '';
      }
      await handler(req, res);
    };
  };
}

/**
 * The filter's own API client: the manager's identity and server, but its own connection pool and rate limiter
 * (as controller-runtime gives its TokenReview and SubjectAccessReview clients their own limiters), so reviews
 * and the manager's calls never wait for each other.
 */
export function reviewClient(config: RestConfig, opts: AuthFilterOptions = {}): KubeClient {
  const o = { ...DEFAULTS, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) };
  const userAgent = `${config.userAgent ?? 'ctrlmetrics'} metrics-filter`;
  return new KubeClient(
    { ...config, qps: o.reviewQps, burst: o.reviewBurst, userAgent },
    { maxSockets: o.reviewConnections },
  );
}

/**
 * A filter provider with custom TTLs, cache size, timeout or API limits. The filter talks to the API through
 * its own client built from the manager's configuration (not the manager's client); the server closes it on stop.
 */
export function authenticationAndAuthorization(opts: AuthFilterOptions = {}): FilterProvider {
  return (config: RestConfig) => {
    const client = reviewClient(config, opts);
    const filter = authFilter(new Authenticator(client, opts));
    return Object.assign(filter, { close: () => client.close() });
  };
}

/** The filter provider with controller-runtime's settings (tokens cached 1 min either way, allow 5 min, deny 30 s). */
export const withAuthenticationAndAuthorization: FilterProvider = authenticationAndAuthorization();

/**
 * The two API calls of delegated authentication and authorization: TokenReview and SubjectAccessReview.
 * Both go through the filter's own {@link KubeClient} (its keep-alive agent and client-side rate limit, never the
 * manager's) with a deadline and controller-runtime's retry policy on 429/5xx/connection errors.
 *
 * Why not `@kubernetes/client-node`: it opens a new TLS connection for every call (measured ~7 ms each), which
 * is too slow for an uncached review on the scrape path; the project's small `node:https` client reuses one.
 */
import { DEFAULT_RETRY, KubeApiError, type KubeClient, type RetryPolicy } from '../../kube/client.js';
import { CtrlmetricsError } from '../../util/errors.js';

/** An authenticated identity, as a TokenReview reports it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What a TokenReview decided: the user, or why not. */
export type AuthnResult = { authenticated: true; user: UserInfo } | { authenticated: false; error?: string };

/** What a SubjectAccessReview (or a static rule) decided, and why. */
export interface AuthzDecision {
  allowed: boolean;
  reason: string;
}

/** The API refused the review itself (403): the manager's identity lacks the metrics-auth-role. */
export class ReviewForbiddenError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_REVIEW_FORBIDDEN';
  override name = 'ReviewForbiddenError';
}

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const SUBJECT_ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isStringArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((s) => typeof s === 'string');
}

/** How long one review may take, and how long it may queue for the client-side rate limiter within that. */
export interface ReviewLimits {
  timeoutMs: number;
  rateLimitWaitMs: number;
  /** Retries on 429/5xx/connection errors (default controller-runtime's backoff; false: one attempt). */
  retry?: RetryPolicy | false;
}

/**
 * The API server could not be asked: no answer (down, reset, past the deadline) or a 5xx. Not a refusal (403), a
 * rate limit on either side, or a malformed answer.
 */
export function isApiOutage(err: unknown): boolean {
  return err instanceof KubeApiError && (err.status === 0 ? err.reason !== 'RateLimited' : err.status >= 500);
}

async function post(
  client: KubeClient,
  path: string,
  kind: string,
  body: unknown,
  limits: ReviewLimits,
): Promise<Record<string, unknown>> {
  const res = await client.raw('POST', path, {
    body,
    timeoutMs: limits.timeoutMs,
    maxRateLimitWaitMs: limits.rateLimitWaitMs,
    retry: limits.retry ?? DEFAULT_RETRY,
  });
  if (res.status === 403) {
    throw new ReviewForbiddenError(`the API server refused to create the ${kind} (403 Forbidden)`);
  }
  if (res.status !== 200 && res.status !== 201) {
    throw new KubeApiError(res.status, 'ReviewFailed', `${kind} failed: the API server answered ${res.status}`);
  }
  if (!isObject(res.body) || !isObject(res.body.status)) {
    throw new KubeApiError(res.status, 'MalformedResponse', `${kind} failed: the API server's answer has no status`);
  }
  return res.body.status;
}

/** Asks the API who a bearer token belongs to (no audiences: the API server's own apply). */
export async function tokenReview(client: KubeClient, token: string, limits: ReviewLimits): Promise<AuthnResult> {
  const status = await post(
    client,
    TOKEN_REVIEWS,
    'TokenReview',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    limits,
  );
  if (status.authenticated !== true) {
    return { authenticated: false, error: typeof status.error === 'string' ? status.error : undefined };
  }
  const u = status.user;
  if (!isObject(u) || typeof u.username !== 'string' || u.username.length === 0) {
    throw new KubeApiError(201, 'MalformedResponse', 'TokenReview failed: authenticated without a user name');
  }
  const extra: Record<string, string[]> = {};
  if (isObject(u.extra)) {
    for (const [k, v] of Object.entries(u.extra)) if (isStringArray(v)) extra[k] = v;
  }
  return {
    authenticated: true,
    user: {
      username: u.username,
      uid: typeof u.uid === 'string' ? u.uid : undefined,
      groups: isStringArray(u.groups) ? u.groups : [],
      extra,
    },
  };
}

/** Asks the API whether `user` may use `verb` on the non-resource `path`. */
export async function subjectAccessReview(
  client: KubeClient,
  user: UserInfo,
  path: string,
  verb: string,
  limits: ReviewLimits,
): Promise<AuthzDecision> {
  const spec: Record<string, unknown> = {
    user: user.username,
    groups: user.groups,
    nonResourceAttributes: { path, verb },
  };
  if (user.uid) spec.uid = user.uid;
  if (user.extra && Object.keys(user.extra).length > 0) spec.extra = user.extra;
  const status = await post(
    client,
    SUBJECT_ACCESS_REVIEWS,
    'SubjectAccessReview',
    { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
    limits,
  );
  const reason = typeof status.reason === 'string' ? status.reason : '';
  if (status.denied === true) return { allowed: false, reason };
  return { allowed: status.allowed === true, reason };
}

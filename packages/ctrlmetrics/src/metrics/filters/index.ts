/** Filters for the metrics server (controller-runtime's `pkg/metrics/filters`). */
import { authenticationAndAuthorization, withAuthenticationAndAuthorization } from './authn-authz.js';

export {
  Authenticator,
  authFilter,
  authenticationAndAuthorization,
  withAuthenticationAndAuthorization,
} from './authn-authz.js';
export type { AuthFilterOptions, ApiStateListener } from './authn-authz.js';
export { parseBearerToken, authorizationValues, MAX_TOKEN_LENGTH } from './bearer.js';
export { loadStaticAuthorizationFile, validateStaticRules, StaticAuthorizationError } from './static-authorization.js';
export type { StaticAuthorizationRule } from './static-authorization.js';
export type { UserInfo, AuthnResult, AuthzDecision } from './reviews.js';
export { Admission, AdmissionRejectedError, DEFAULT_LANES } from './admission.js';
export type { LaneLimits, LaneName, LaneStats } from './admission.js';

/** The filter providers: `filters.withAuthenticationAndAuthorization` (controller-runtime's settings) and a configurable variant. */
export const filters = {
  /** TokenReview + SubjectAccessReview with controller-runtime's cache TTLs. */
  withAuthenticationAndAuthorization,
  /** The same, tuned: `filters.authenticationAndAuthorization({ allowTTLms, reviewQps, … })`. */
  authenticationAndAuthorization,
} as const;

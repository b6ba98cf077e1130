/** Filters for the metrics server (controller-runtime's `pkg/metrics/filters`). */
import { authenticationAndAuthorization, withAuthenticationAndAuthorization } from './authn-authz.js';

export { Authenticator, authFilter, authenticationAndAuthorization, withAuthenticationAndAuthorization } from './authn-authz.js';
export type { AuthFilterOptions } from './authn-authz.js';
export { parseBearerToken, authorizationValues, MAX_TOKEN_LENGTH } from './bearer.js';
export { loadStaticAuthorizationFile, validateStaticRules, StaticAuthorizationError } from './static-authorization.js';
export type { StaticAuthorizationRule } from './static-authorization.js';
export type { UserInfo, AuthnResult, AuthzDecision } from './reviews.js';
export { Admission, AdmissionRejectedError, DEFAULT_LANES } from './admission.js';
export type { LaneLimits, LaneName, LaneStats } from './admission.js';

/** The filters of contract B: `filters.withAuthenticationAndAuthorization` (defaults) and a configurable variant. */
export const filters = {
  withAuthenticationAndAuthorization,
  authenticationAndAuthorization,
} as const;

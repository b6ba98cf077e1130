/**
 * Filters for the metrics server (controller-runtime's `pkg/metrics/filters`): TokenReview and
 * SubjectAccessReview in front of `/metrics`, or a static authorization file.
 * @module ctrlmetrics/metrics/filters
 */
export { filters } from '../../metrics/filters/index.js';
export { Authenticator, authFilter } from '../../metrics/filters/authn-authz.js';
export type { AuthFilterOptions, ApiStateListener } from '../../metrics/filters/authn-authz.js';
export { parseBearerToken } from '../../metrics/filters/bearer.js';
export { loadStaticAuthorizationFile, StaticAuthorizationError } from '../../metrics/filters/static-authorization.js';
export type { StaticAuthorizationRule } from '../../metrics/filters/static-authorization.js';
export type { UserInfo, AuthnResult, AuthzDecision } from '../../metrics/filters/reviews.js';
export type { LaneLimits, LaneName } from '../../metrics/filters/admission.js';

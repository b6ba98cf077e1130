/**
 * The token issuer and default audiences of the embedded authority: constants the main entry point exports
 * without loading the authority itself.
 */

/** The issuer the authority puts into tokens (kube-apiserver's default `--service-account-issuer`). */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** The audiences tokens are valid for when a TokenRequest/TokenReview names none (kube's `--api-audiences`). */
export const API_AUDIENCES = [DEFAULT_ISSUER];

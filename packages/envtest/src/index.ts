/**
 * The embedded Kubernetes-API-compatible authority: HTTPS with its own CA, bearer-token authentication, RBAC,
 * TokenRequest/TokenReview/SubjectAccessReview, generic object storage with watches, discovery for kubectl, and
 * state kept in a directory across restarts (in memory without one).
 * @module
 */
// only re-exports: the start is authority.ts, the test environment test-environment.ts
export { startAuthority, type Authority, type AuthorityOptions } from './authority.js';
export type { ServerLimits } from 'ctrlmetrics/internal';
export { API_AUDIENCES } from './audiences.js';
export { CRD_SETS, type CrdSet } from './crds.js';
export { installWebhooks, type InstallWebhooksOptions, type InstalledWebhooks } from './install-webhooks.js';
export {
  startTestEnvironment,
  useExistingClusterFromEnv,
  type TestEnvironment,
  type TestEnvironmentOptions,
} from './test-environment.js';

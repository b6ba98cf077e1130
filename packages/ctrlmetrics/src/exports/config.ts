/**
 * Where the API server is and who the manager is to it (controller-runtime's `pkg/client/config`): a kubeconfig
 * (exec credential plugins included) or the in-cluster service account.
 * @module ctrlmetrics/config
 */
export { loadRestConfig, inCluster, kubeconfigFor, KubeConfigError } from '../kube/config.js';
export type { RestConfig, LoadConfigOptions, AuthHeadersRequest } from '../kube/config.js';

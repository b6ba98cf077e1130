/** Inputs of every template, and the fixed names the generated files share. */
export interface ProjectParams {
  /** DNS-1123 label; also the kustomize namePrefix (`<name>-`) and namespace (`<name>-system`). */
  projectName: string;
  /** Domain for the leader-election ID (`<hash>.<domain>`). */
  domain: string;
  /**
   * npm version spec of the `ctrlmetrics` dependency (a semver range, or `file:…` of its packed tarball for local
   * testing); the dev dependencies `@ctrlmetrics/envtest` and `@ctrlmetrics/cli` follow it (see `companionSpec`).
   */
  ctrlmetricsVersion: string;
}

/**
 * The spec of `@ctrlmetrics/envtest` or `@ctrlmetrics/cli` that goes with the runtime's: the same registry version
 * or range; for a packed runtime (`file:<dir>/ctrlmetrics-<version>.tgz`), the tarball npm pack names for that
 * package beside it (`file:<dir>/ctrlmetrics-envtest-<version>.tgz`). The three are released together, and the
 * other two pin the runtime's exact version.
 */
export function companionSpec(runtimeSpec: string, name: '@ctrlmetrics/envtest' | '@ctrlmetrics/cli'): string {
  const packed = /^(file:(?:.*\/)?)ctrlmetrics-([^/]+)\.tgz$/.exec(runtimeSpec);
  if (!packed) return runtimeSpec;
  return `${packed[1]}${name.slice(1).replace('/', '-')}-${packed[2]}.tgz`;
}

export const METRICS_PORT = 8443;
export const HEALTH_PORT = 8081;
export const WEBHOOK_PORT = 9443;
/** Secret written by cert-manager for the `metrics-certs` Certificate (never name-prefixed by kustomize). */
export const METRICS_SECRET = 'metrics-server-cert';
export const METRICS_CERT_DIR = '/tmp/k8s-metrics-server/metrics-certs';

/** Labels kubebuilder puts on every object it scaffolds. */
export function commonLabels(p: ProjectParams, indent: string): string {
  return [`app.kubernetes.io/name: ${p.projectName}`, 'app.kubernetes.io/managed-by: kustomize']
    .map((l) => indent + l)
    .join('\n');
}

/**
 * Connecting the operations commands to the API (`--kubeconfig`, `KUBECONFIG`, in-cluster service account) and
 * turning API failures into one sentence that says what to do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { KubeApiError, KubeClient } from 'ctrlmetrics/client';
import { KubeConfigError, loadRestConfig } from 'ctrlmetrics/config';
import { OpsError, OpsUsageError } from './errors.js';

/** Flags every cluster command accepts. */
export interface KubeFlags {
  kubeconfig?: string;
  context?: string;
}

/** A client for the configured API; configuration problems become a {@link OpsError}. */
export async function connect(flags: KubeFlags): Promise<KubeClient> {
  try {
    const config = await loadRestConfig({ kubeconfig: flags.kubeconfig, context: flags.context });
    return new KubeClient({ ...config, userAgent: 'ctrlmetrics-cli' });
  } catch (err) {
    if (err instanceof KubeConfigError) throw new OpsError(err.message, { cause: err });
    throw err;
  }
}

/** Runs `fn` with a client and always closes its connections. */
export async function withClient<T>(flags: KubeFlags, fn: (client: KubeClient) => Promise<T>): Promise<T> {
  const client = await connect(flags);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/** True when the error is the API's answer with this HTTP status. */
export function isStatus(err: unknown, status: number): err is KubeApiError {
  return err instanceof KubeApiError && err.status === status;
}

/**
 * A {@link OpsError} for a failed API call: `what` names the operation ("create clusterrolebinding x"); the
 * message adds the API's own words and, for the usual causes, the fix.
 */
export function apiError(err: unknown, what: string, client?: KubeClient): OpsError {
  if (err instanceof OpsError) return err;
  if (!(err instanceof KubeApiError))
    return new OpsError(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  const server = client ? ` at ${client.config.server}` : '';
  switch (err.status) {
    case 0:
      return new OpsError(
        `${what}: cannot reach the API server${server} (${err.message}); check --kubeconfig / KUBECONFIG and that the server runs`,
      );
    case 401:
      return new OpsError(
        `${what}: the API server${server} rejected the credentials (401 Unauthorized); the kubeconfig's token or certificate is invalid or expired`,
      );
    case 403:
      return new OpsError(`${what}: forbidden: ${err.message}`);
    default:
      return new OpsError(`${what}: ${err.message}`);
  }
}

/** Parses `NS:NAME` (a service account reference, as `kubectl --serviceaccount`). */
export function parseServiceAccountRef(value: string, flag: string): { namespace: string; name: string } {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(value);
  if (!m)
    throw new OpsUsageError(
      `${flag} must be NAMESPACE:NAME (e.g. monitoring:prometheus), got ${JSON.stringify(value)}`,
    );
  return { namespace: m[1], name: m[3] };
}

/** The user name the API gives a service account. */
export function serviceAccountUser(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** The groups the API gives every service account of a namespace. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
}

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace a command uses when `-n` is not given, as kubectl picks it: the kubeconfig context's namespace,
 * else the pod's own namespace in a cluster, else `default`.
 */
export function defaultNamespace(flags: KubeFlags): string {
  const file =
    flags.kubeconfig ??
    process.env.KUBECONFIG?.split(':').find((f) => f && existsSync(f)) ??
    join(homedir(), '.kube', 'config');
  try {
    if (existsSync(file)) {
      const kc = parseYaml(readFileSync(file, 'utf8')) as {
        'current-context'?: string;
        contexts?: Array<{ name: string; context?: { namespace?: string } }>;
      };
      const name = flags.context ?? kc['current-context'];
      const ns = kc.contexts?.find((c) => c.name === name)?.context?.namespace;
      if (ns) return ns;
      return 'default';
    }
    if (existsSync(IN_CLUSTER_NAMESPACE)) return readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim() || 'default';
  } catch {
    // an unreadable kubeconfig is reported by connect(); the namespace falls back to default
  }
  return 'default';
}

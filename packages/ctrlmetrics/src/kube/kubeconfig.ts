/**
 * The light kubeconfig path: the fields a kubeconfig or an in-cluster pod uses to reach the API with a static
 * identity (server, CA, client certificate, token, token file, impersonation), read with `js-yaml`: the parser
 * client-node's own `KubeConfig.loadFromFile` uses, so both read a file the same way.
 *
 * Why not always `@kubernetes/client-node`'s `KubeConfig`: importing it loads the whole generated API client
 * (≈0.4 s and ≈70 MB of resident memory, measured in docs/performance-notes.md), which a manager would carry for its
 * whole life just to read a few fields. Identities that need code to produce credentials (exec plugins, auth
 * providers) are still handed to client-node by {@link loadRestConfig}; {@link needsCredentialPlugin} tells.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { KubeConfigError, type RestConfig } from './config-types.js';

/** The user entry of a kubeconfig, as written (kebab-case keys). */
export type KubeconfigUser = Record<string, unknown>;

/** One kubeconfig file, read and checked. */
export interface ParsedKubeconfig {
  file: string;
  clusters: Map<string, Record<string, unknown>>;
  users: Map<string, KubeconfigUser>;
  contexts: Map<string, Record<string, unknown>>;
  currentContext: string | undefined;
}

function named(
  doc: Record<string, unknown>,
  key: string,
  inner: string,
  file: string,
): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const list = doc[key];
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) throw new KubeConfigError(`cannot load kubeconfig ${file}: ${key} must be a list`);
  list.forEach((e: unknown, i) => {
    const entry = e as Record<string, unknown> | null;
    if (!entry || typeof entry !== 'object' || typeof entry.name !== 'string' || !entry.name) {
      throw new KubeConfigError(`cannot load kubeconfig ${file}: ${key}[${i}].name is missing`);
    }
    const body = entry[inner] ?? {};
    if (typeof body !== 'object' || Array.isArray(body))
      throw new KubeConfigError(`cannot load kubeconfig ${file}: ${key}[${i}].${inner} must be a mapping`);
    out.set(entry.name, body as Record<string, unknown>);
  });
  return out;
}

/**
 * Reads one kubeconfig file; throws {@link KubeConfigError} saying what is wrong and where. `js-yaml` is imported
 * here, on first use, since a manager running in its cluster (the in-cluster config) never reads a kubeconfig.
 * Not the `yaml` package the authority and scaffolder use: with it a 10k-series server idles ≈ 0.8 MB higher
 * (docs/performance-notes.md), and client-node reads kubeconfigs with `js-yaml` (merge keys included).
 */
export async function readKubeconfig(file: string): Promise<ParsedKubeconfig> {
  let doc: unknown;
  try {
    const { load } = await import('js-yaml');
    doc = load(readFileSync(file, 'utf8'));
  } catch (err) {
    // YAML errors carry a multi-line code frame: one line is enough to say what and where
    // the first line only, and not the parser's error as the cause: its code frame quotes the file, tokens included
    throw new KubeConfigError(
      `cannot load kubeconfig ${file}: ${((err as Error).message ?? String(err)).split('\n')[0].trim()}`,
    );
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new KubeConfigError(`cannot load kubeconfig ${file}: not a kubeconfig (expected a mapping)`);
  const d = doc as Record<string, unknown>;
  const current = d['current-context'];
  return {
    file,
    clusters: named(d, 'clusters', 'cluster', file),
    users: named(d, 'users', 'user', file),
    contexts: named(d, 'contexts', 'context', file),
    currentContext: typeof current === 'string' && current ? current : undefined,
  };
}

/** True when the user's credentials come from running code (exec plugin, auth provider): client-node's job. */
export function needsCredentialPlugin(user: KubeconfigUser | undefined): boolean {
  return !!user && (!!user.exec || !!user['auth-provider']);
}

/** The selected context's cluster and user entries. */
export function selectContext(
  kc: ParsedKubeconfig,
  context: string | undefined,
): { cluster: Record<string, unknown>; user: KubeconfigUser | undefined } {
  const name = context ?? kc.currentContext;
  if (!name) {
    throw new KubeConfigError(
      `kubeconfig ${kc.file} has no current-context: pass --context NAME or run \`kubectl config use-context NAME\``,
    );
  }
  const ctx = kc.contexts.get(name);
  if (!ctx)
    throw new KubeConfigError(
      `context "${name}" is not in kubeconfig ${kc.file} (it has: ${[...kc.contexts.keys()].join(', ') || 'none'})`,
    );
  const clusterName = typeof ctx.cluster === 'string' ? ctx.cluster : '';
  const cluster = kc.clusters.get(clusterName);
  if (!cluster)
    throw new KubeConfigError(
      `context "${name}" in kubeconfig ${kc.file} names cluster "${clusterName}", which is not in the file`,
    );
  const userName = typeof ctx.user === 'string' ? ctx.user : undefined;
  const user = userName === undefined ? undefined : kc.users.get(userName);
  if (userName !== undefined && userName !== '' && !user) {
    throw new KubeConfigError(
      `context "${name}" in kubeconfig ${kc.file} names user "${userName}", which is not in the file`,
    );
  }
  return { cluster, user };
}

/** `-data` (base64) or a file path relative to the kubeconfig's folder, as kubectl resolves them. */
function material(entry: Record<string, unknown>, key: string, base: string, what: string): Buffer | undefined {
  const data = entry[`${key}-data`];
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64');
  const path = entry[key];
  if (typeof path !== 'string' || !path) return undefined;
  const abs = isAbsolute(path) ? path : join(base, path);
  try {
    return readFileSync(abs);
  } catch (err) {
    throw new KubeConfigError(
      `cannot read the ${what} ${abs}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
}

function readToken(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new KubeConfigError(
      `cannot read the token file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
}

/** The {@link RestConfig} of a cluster and a user with a static identity (no exec plugin or auth provider). */
export function restConfigOf(
  kc: ParsedKubeconfig,
  cluster: Record<string, unknown>,
  user: KubeconfigUser | undefined,
): RestConfig {
  const base = dirname(kc.file);
  const server = typeof cluster.server === 'string' ? cluster.server.replace(/\/+$/, '') : '';
  if (!server) throw new KubeConfigError(`the cluster of the selected context in kubeconfig ${kc.file} has no server`);
  const config: RestConfig = { server, insecureSkipTLSVerify: cluster['insecure-skip-tls-verify'] === true };
  const ca = material(cluster, 'certificate-authority', base, 'certificate authority');
  if (ca) config.ca = ca;
  if (!user) return config;
  if (user.username !== undefined || user.password !== undefined) {
    throw new KubeConfigError(
      `kubeconfig ${kc.file}: basic authentication (username/password) was removed from Kubernetes in 1.19; use a token or a client certificate`,
    );
  }
  const cert = material(user, 'client-certificate', base, 'client certificate');
  const key = material(user, 'client-key', base, 'client key');
  if (!cert !== !key)
    throw new KubeConfigError(
      `kubeconfig ${kc.file}: the user has a client ${cert ? 'certificate without a key' : 'key without a certificate'}`,
    );
  if (cert && key) {
    config.cert = cert;
    config.key = key;
  }
  if (typeof user.token === 'string' && user.token) {
    config.token = user.token;
  } else if (typeof user['token-file'] === 'string' && user['token-file']) {
    // kubectl re-reads token files, which rotate (projected service-account tokens)
    const path = isAbsolute(user['token-file']) ? user['token-file'] : join(base, user['token-file']);
    config.token = readToken(path);
    config.authHeaders = async () => ({ Authorization: `Bearer ${readToken(path)}` });
  }
  if (typeof user.as === 'string' && user.as) config.impersonateUser = user.as;
  const groups = user['as-groups'];
  if (Array.isArray(groups) && groups.length) config.impersonateGroups = groups.map(String);
  return config;
}

/** The in-cluster configuration from the pod's service account (the token file rotates). */
export function inClusterConfig(env: NodeJS.ProcessEnv, serviceAccountDir: string): RestConfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT || '443';
  if (!host) throw new KubeConfigError('not running in a cluster: KUBERNETES_SERVICE_HOST is not set');
  const tokenFile = join(serviceAccountDir, 'token');
  const caFile = join(serviceAccountDir, 'ca.crt');
  const config: RestConfig = {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    token: readToken(tokenFile),
    authHeaders: async () => ({ Authorization: `Bearer ${readToken(tokenFile)}` }),
  };
  if (existsSync(caFile)) config.ca = readFileSync(caFile);
  return config;
}

/** Create-or-update of plain Kubernetes objects through {@link KubeClient}, for the demo's setup. */
import { KubeApiError, type KubeClient } from 'ctrlmetrics/client';
import { collectionPath } from 'ctrlmetrics/internal';

/** A plain object with apiVersion, kind and metadata. */
export interface PlainObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

const CLUSTER_SCOPED = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding']);

/** The object's path (`collection/name`). */
export function objectPath(obj: PlainObject): string {
  const collection = collectionPath({
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace,
    clusterScoped: CLUSTER_SCOPED.has(obj.kind),
  });
  return `${collection}/${encodeURIComponent(obj.metadata.name)}`;
}

/** Creates the object, or replaces it when it exists (keeping its resourceVersion). */
export async function applyObject(client: KubeClient, obj: PlainObject): Promise<void> {
  const path = objectPath(obj);
  const collection = path.slice(0, path.lastIndexOf('/'));
  try {
    await client.create(collection, obj, { timeoutMs: 15_000 });
    return;
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw describe(err, obj, 'create');
  }
  if (obj.kind === 'Namespace' || obj.kind === 'ServiceAccount') return; // nothing of ours to update
  try {
    const current = await client.get<PlainObject>(path, { timeoutMs: 15_000 });
    await client.replace(
      path,
      {
        ...obj,
        metadata: {
          ...obj.metadata,
          resourceVersion: (current.metadata as { resourceVersion?: string }).resourceVersion,
        },
      },
      { timeoutMs: 15_000 },
    );
  } catch (err) {
    throw describe(err, obj, 'update');
  }
}

function describe(err: unknown, obj: PlainObject, verb: string): Error {
  const what = `${obj.kind} ${obj.metadata.namespace ? obj.metadata.namespace + '/' : ''}${obj.metadata.name}`;
  return new Error(`cannot ${verb} ${what}: ${err instanceof Error ? err.message : String(err)}`);
}

/** A TokenRequest for a service account; returns the token and when it expires. */
export async function requestToken(
  client: KubeClient,
  namespace: string,
  name: string,
  expirationSeconds: number,
): Promise<{ token: string; expiresAt: number }> {
  const res = await client.create<{ status?: { token?: string; expirationTimestamp?: string } }>(
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`,
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } },
    { timeoutMs: 15_000 },
  );
  const token = res.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  const exp = res.status?.expirationTimestamp
    ? Date.parse(res.status.expirationTimestamp)
    : Date.now() + expirationSeconds * 1000;
  return { token, expiresAt: exp };
}

/**
 * Fails fast with a message that says what to do when the API cannot be reached or rejects the credentials
 * (instead of a failed create after the client's retries).
 */
export async function checkApiReachable(client: KubeClient, server: string): Promise<void> {
  let status: number;
  try {
    ({ status } = await client.raw('GET', '/version', {
      timeoutMs: 10_000,
      retry: { steps: 2, baseMs: 300, factor: 2, jitter: 0.2 },
    }));
  } catch (err) {
    throw new Error(
      `cannot reach the Kubernetes API at ${server}: ${err instanceof Error ? err.message : String(err)} (check --kubeconfig and that the cluster is running)`,
      { cause: err },
    );
  }
  if (status === 401)
    throw new Error(
      `the Kubernetes API at ${server} rejected the kubeconfig's credentials (401 Unauthorized): refresh the token or client certificate`,
    );
  if (status >= 500) throw new Error(`the Kubernetes API at ${server} is not healthy: GET /version answered ${status}`);
}

/**
 * A throw-away cluster for integration tests: the embedded authority on an ephemeral 127.0.0.1 port, an admin
 * client, and helpers that create service accounts, tokens and the metrics RBAC a real cluster would have.
 *
 *   const cluster = await startTestCluster();
 *   after(() => cluster.stop());
 *   const cfg = await cluster.managerConfig();      // the manager: may create TokenReviews and SubjectAccessReviews
 *   const token = await cluster.readerToken();      // a scraper: may GET /metrics
 */
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { KubeApiError, KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import type { Logger } from '../../packages/ctrlmetrics/src/util/log.js';

/** An API server to test against, the authority or a real one, with an admin client and identity helpers. */
export interface ApiCluster {
  /** The API server's URL. */
  url: string;
  /** PEM CA that signs its serving certificate. */
  caPem: string;
  /** Path of a cluster-admin kubeconfig (for kubectl and the CLI). */
  kubeconfig: string;
  /** Client acting as `admin` (group `system:masters`). */
  admin: KubeClient;
  /** Creates the namespace (if needed) and the ServiceAccount (if needed); returns a TokenRequest token for it. */
  serviceAccountToken(
    ns: string,
    name: string,
    opts?: { expirationSeconds?: number; audiences?: string[] },
  ): Promise<string>;
  /**
   * The manager identity: ServiceAccount `ns/name` (default `ctrlmetrics-system/controller-manager`) bound to the
   * ClusterRole `metrics-auth-role` (create tokenreviews + subjectaccessreviews); returns a RestConfig acting as it.
   */
  managerConfig(ns?: string, name?: string): Promise<RestConfig>;
  /** ClusterRole `metrics-reader` (nonResourceURLs /metrics, get) bound to ServiceAccount `ns/name` (default `monitoring/prometheus`); returns its token. */
  readerToken(ns?: string, name?: string): Promise<string>;
  stop(): Promise<void>;
}

/** A running embedded authority with the {@link ApiCluster} helpers. */
export interface TestCluster extends ApiCluster {
  authority: Authority;
}

/**
 * Waits (up to 10 s) until the CRD `name` is Established: a real API server serves a new kind only then (the
 * authority at once).
 */
export async function waitForCrd(c: KubeClient, name: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const crd = await c.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
    );
    if (crd.status?.conditions?.some((x) => x.type === 'Established' && x.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`CRD ${name} was not Established within 10 s`);
}

/** Creates the CRD unless it exists, and waits until it is Established. */
export async function installCrd(c: KubeClient, crd: { metadata?: { name?: string } }): Promise<void> {
  await createIfMissing(c, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  await waitForCrd(c, crd.metadata!.name!);
}

async function createIfMissing(c: KubeClient, path: string, body: unknown): Promise<void> {
  try {
    await c.create(path, body);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
}

/** Starts the authority (in memory, or on `stateDir`) and returns the helpers. Always `stop()` it in `after`. */
export async function startTestCluster(
  opts: {
    stateDir?: string;
    clock?: () => number;
    crds?: string[];
    webhookServices?: Record<string, string>;
    logger?: Logger;
  } = {},
): Promise<TestCluster> {
  const authority = await startAuthority({
    listen: '127.0.0.1:0',
    stateDir: opts.stateDir,
    clock: opts.clock,
    crds: opts.crds,
    webhookServices: opts.webhookServices,
    logger: opts.logger,
  });
  const admin = new KubeClient({ ...authority.restConfig, qps: 1000, burst: 1000 });
  const helpers = clusterHelpers(admin, authority.url, authority.caPem, authority.kubeconfig, async () => {
    admin.close();
    await authority.stop();
  });
  return { ...helpers, authority };
}

/**
 * The {@link ApiCluster} helpers over any API server reached as `admin` (a cluster-admin client); `stop` is what
 * `stop()` does after closing nothing else.
 */
export function clusterHelpers(
  admin: KubeClient,
  url: string,
  caPem: string,
  kubeconfig: string,
  stop: () => Promise<void>,
  opts: { roleSuffix?: string } = {},
): ApiCluster {
  // on a shared cluster the helpers' ClusterRoles carry the run's id, so the run's clean-up finds them
  const authRole = `metrics-auth-role${opts.roleSuffix ?? ''}`;
  const readerRole = `metrics-reader${opts.roleSuffix ?? ''}`;
  const ensureSA = async (ns: string, name: string) => {
    await createIfMissing(admin, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await createIfMissing(admin, `/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: ns },
    });
  };

  const serviceAccountToken: TestCluster['serviceAccountToken'] = async (ns, name, o = {}) => {
    await ensureSA(ns, name);
    const spec: Record<string, unknown> = { expirationSeconds: o.expirationSeconds ?? 3600 };
    if (o.audiences) spec.audiences = o.audiences;
    const tr = await admin.create<{ status: { token: string } }>(
      `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec,
      },
    );
    return tr.status.token;
  };

  const bind = async (clusterRole: string, ns: string, name: string) => {
    await createIfMissing(admin, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${clusterRole}:${ns}:${name}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    });
  };

  const managerConfig: TestCluster['managerConfig'] = async (
    ns = 'ctrlmetrics-system',
    name = 'controller-manager',
  ) => {
    await createIfMissing(admin, '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: authRole },
      rules: [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    });
    const token = await serviceAccountToken(ns, name, { expirationSeconds: 86_400 });
    await bind(authRole, ns, name);
    return { server: url, ca: caPem, token };
  };

  const readerToken: TestCluster['readerToken'] = async (ns = 'monitoring', name = 'prometheus') => {
    await createIfMissing(admin, '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: readerRole },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    const token = await serviceAccountToken(ns, name, { expirationSeconds: 86_400 });
    await bind(readerRole, ns, name);
    return token;
  };

  return { url, caPem, kubeconfig, admin, serviceAccountToken, managerConfig, readerToken, stop };
}

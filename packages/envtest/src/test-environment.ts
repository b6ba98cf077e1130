/**
 * envtest's `Environment` for TypeScript operators: an API server to test against with the project's CRDs and
 * manifests installed and its webhooks pointed at a local server — the embedded authority by default, or an existing
 * cluster when `USE_EXISTING_CLUSTER=true` (envtest's variable, the same meaning), reached through `KUBECONFIG` as
 * kubectl reads it. On an existing cluster, what the environment installed is removed at `stop()`, and nothing it
 * did not make is overwritten or deleted.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { KubeApiError, KubeClient, ObjectClient } from 'ctrlmetrics/client';
import { kubeconfigFileFromEnv } from 'ctrlmetrics/internal';
import { loadRestConfig, type RestConfig } from 'ctrlmetrics/config';
import { loadManifests } from './apply.js';
import { installWebhooks, type InstallWebhooksOptions, type InstalledWebhooks } from './install-webhooks.js';
import type { KubeObject } from './types.js';
import { startAuthority, type Authority, type AuthorityOptions } from './authority.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Options of {@link startTestEnvironment}. */
export interface TestEnvironmentOptions {
  /** Files or directories of CRDs installed first (envtest's `CRDDirectoryPaths`), e.g. `config/crd/bases`. */
  crdDirectoryPaths?: string[];
  /** Other manifests (files or directories: samples, RBAC) created after the CRDs, in a namespace's `default` when they name none. */
  apply?: string[];
  /**
   * envtest's `WebhookInstallOptions`: the webhook configurations of `manifests` and the CRDs of `conversions`
   * pointed at a local webhook server with a CA of its own ({@link installWebhooks}); serve them with the
   * manager's `webhook: { bindAddress: env.webhooks.bindAddress, certDir: env.webhooks.certDir }`.
   */
  webhookInstallOptions?: Pick<InstallWebhooksOptions, 'manifests' | 'conversions' | 'host' | 'port' | 'certDir'>;
  /**
   * Test against an existing cluster instead of the embedded authority. Default: the environment variable
   * `USE_EXISTING_CLUSTER` is `true` (envtest's switch).
   */
  useExistingCluster?: boolean;
  /** The existing cluster's kubeconfig (default: the first file of `KUBECONFIG`, then `~/.kube/config`). */
  kubeconfig?: string;
  /** Its context (default: the kubeconfig's current context). */
  context?: string;
  /** Options of the embedded authority, when it is the one tested against. */
  authority?: Omit<AuthorityOptions, 'apply'>;
  /** How long to wait for the API server to answer, and for a CRD to be Established (default 30 s). */
  timeoutMs?: number;
}

/** A started {@link startTestEnvironment}. */
export interface TestEnvironment {
  /** Whether it runs against an existing cluster (else the embedded authority). */
  existingCluster: boolean;
  /** How to reach the API server: pass it to the manager and clients. */
  restConfig: RestConfig;
  /** A kubeconfig file for kubectl and the CLI. */
  kubeconfig: string;
  /** The embedded authority, when it is the one tested against. */
  authority?: Authority;
  /** The installed webhooks, when `webhookInstallOptions` was given. */
  webhooks?: InstalledWebhooks;
  /**
   * Removes what the environment installed (webhook configurations, created objects, CRDs it created, waiting until
   * they are gone) and stops the authority. Call it in `after`, also when a test failed.
   */
  stop(): Promise<void>;
}

/** True when `USE_EXISTING_CLUSTER` asks for an existing cluster (envtest reads it with Go's `strconv.ParseBool`). */
export function useExistingClusterFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.USE_EXISTING_CLUSTER;
  if (v === undefined || v === '') return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new Error(`USE_EXISTING_CLUSTER=${v}: use true or false`);
}

/**
 * Starts envtest's environment: the embedded authority with the CRDs, manifests and webhooks installed, or, with
 * `useExistingCluster` (default `USE_EXISTING_CLUSTER=true`), the cluster of `KUBECONFIG`. Rejects with a message
 * that says what to do when the cluster cannot be reached or its identity lacks the rights; what was installed
 * before a failure is removed again.
 *
 *   const env = await startTestEnvironment({ crdDirectoryPaths: ['config/crd/bases'] });
 *   const mgr = new Manager({ restConfig: env.restConfig, handleSignals: false });
 *   // … after: await env.stop();
 */
export async function startTestEnvironment(opts: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
  const existing = opts.useExistingCluster ?? useExistingClusterFromEnv();
  if (!existing) return startOnAuthority(opts);
  return startOnExistingCluster(opts);
}

async function startOnAuthority(opts: TestEnvironmentOptions): Promise<TestEnvironment> {
  const authority = await startAuthority({
    ...opts.authority,
    apply: [...(opts.crdDirectoryPaths ?? []), ...(opts.apply ?? [])],
  });
  let webhooks: InstalledWebhooks | undefined;
  try {
    if (opts.webhookInstallOptions) webhooks = await installWebhooks(authority, opts.webhookInstallOptions);
  } catch (err) {
    await authority.stop();
    throw err;
  }
  return {
    existingCluster: false,
    restConfig: authority.restConfig,
    kubeconfig: authority.kubeconfig,
    authority,
    webhooks,
    async stop() {
      try {
        await webhooks?.uninstall();
      } finally {
        await authority.stop();
      }
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function startOnExistingCluster(opts: TestEnvironmentOptions): Promise<TestEnvironment> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const file = opts.kubeconfig ? resolve(opts.kubeconfig) : kubeconfigFileFromEnv();
  const where = 'USE_EXISTING_CLUSTER=true';
  if (!file)
    throw new Error(
      `${where}: no kubeconfig: set KUBECONFIG to the cluster's kubeconfig (or unset USE_EXISTING_CLUSTER to test on the embedded authority)`,
    );
  let restConfig: RestConfig;
  try {
    restConfig = await loadRestConfig({ kubeconfig: file, context: opts.context });
  } catch (err) {
    throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
  }
  const client = new KubeClient({ ...restConfig, qps: 50, burst: 100 });
  const crdsMade: string[] = [];
  const objectsMade: KubeObject[] = [];
  let webhooks: InstalledWebhooks | undefined;
  const objects = new ObjectClient(client);

  const cleanUp = async () => {
    const gone = (err: unknown) => {
      if (!(err instanceof KubeApiError) || err.status !== 404) throw err;
    };
    const failures: string[] = [];
    const attempt = async (what: string, f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (err) {
        failures.push(`${what}: ${(err as Error).message}`);
      }
    };
    if (webhooks) await attempt('the webhook configurations', () => webhooks!.uninstall());
    for (const o of [...objectsMade].reverse())
      await attempt(`${o.kind} ${o.metadata?.name}`, () => objects.delete(o).catch(gone));
    for (const name of [...crdsMade].reverse())
      await attempt(`CRD ${name}`, () => client.delete(`${CRD_PATH}/${name}`).catch(gone));
    // a CRD goes only once its objects are deleted: wait, so the next run does not meet it terminating
    const deadline = Date.now() + 2 * timeoutMs;
    for (const name of crdsMade) {
      while (
        Date.now() < deadline &&
        (await client.get(`${CRD_PATH}/${name}`).then(
          () => true,
          () => false,
        ))
      )
        await sleep(200);
    }
    client.close();
    if (failures.length)
      throw new Error(`${where}: could not remove what the test environment installed: ${failures.join('; ')}`);
  };

  try {
    await reachable(client, restConfig.server, file, timeoutMs);
    const crds = loadManifests(opts.crdDirectoryPaths ?? []).filter((o) => o.kind === 'CustomResourceDefinition');
    const others = loadManifests(opts.apply ?? []);
    await mayInstall(client, file, crds.length > 0, opts.webhookInstallOptions !== undefined);
    for (const crd of crds) if (await installCrd(client, crd)) crdsMade.push(String(crd.metadata?.name));
    for (const crd of crds) await established(client, String(crd.metadata?.name), timeoutMs);
    for (const o of others) {
      const obj = namespaced(o);
      try {
        await objects.create(obj);
        objectsMade.push(obj);
      } catch (err) {
        if (err instanceof KubeApiError && err.status === 409) continue; // there already: not ours to delete
        throw err;
      }
    }
    if (opts.webhookInstallOptions) {
      // names of their own, never replacing a configuration someone else installed
      webhooks = await installWebhooks(
        { restConfig },
        {
          ...opts.webhookInstallOptions,
          namePrefix: `envtest-${randomBytes(3).toString('hex')}-`,
          replaceExisting: false,
        },
      );
    }
  } catch (err) {
    await cleanUp().catch(() => undefined);
    throw err;
  }
  return { existingCluster: true, restConfig, kubeconfig: file, webhooks, stop: cleanUp };
}

/** Throws a clear error when the API server does not answer `/version`. */
async function reachable(client: KubeClient, server: string, file: string, timeoutMs: number): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await client.get('/version', { signal });
  } catch (err) {
    const why = err instanceof KubeApiError ? `${err.status} ${err.message}` : (err as Error).message;
    throw new Error(
      `USE_EXISTING_CLUSTER=true: cannot reach the cluster at ${server} (kubeconfig ${file}): ${why}; check that it runs and that KUBECONFIG names it`,
      { cause: err },
    );
  }
}

/** Throws a clear error when the kubeconfig's identity may not install what the environment installs. */
async function mayInstall(client: KubeClient, file: string, crds: boolean, webhooks: boolean): Promise<void> {
  const needs: Array<[string, string, string]> = [];
  if (crds)
    needs.push(
      ['apiextensions.k8s.io', 'customresourcedefinitions', 'create'],
      ['apiextensions.k8s.io', 'customresourcedefinitions', 'delete'],
    );
  if (webhooks) {
    for (const r of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'])
      needs.push(['admissionregistration.k8s.io', r, 'create'], ['admissionregistration.k8s.io', r, 'delete']);
  }
  const denied: string[] = [];
  for (const [group, resource, verb] of needs) {
    const review = await client.create<{ status?: { allowed?: boolean } }>(
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { group, resource, verb } },
      },
    );
    if (!review.status?.allowed) denied.push(`${verb} ${resource}.${group}`);
  }
  if (denied.length) {
    throw new Error(
      `USE_EXISTING_CLUSTER=true: the identity of kubeconfig ${file} may not ${denied.join(', ')}, which the tests install and remove: use a kubeconfig with those rights (cluster-admin on a test cluster)`,
    );
  }
}

/** Creates the CRD, or updates one that exists (then kept after the tests); true when this call created it. */
async function installCrd(client: KubeClient, crd: KubeObject): Promise<boolean> {
  const name = String(crd.metadata?.name);
  try {
    await client.create(CRD_PATH, crd);
    return true;
  } catch (err) {
    if (!(err instanceof KubeApiError) || err.status !== 409) throw err;
  }
  const current = await client.get<KubeObject>(`${CRD_PATH}/${name}`);
  await client.replace(`${CRD_PATH}/${name}`, {
    ...crd,
    metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion },
  });
  return false;
}

/** Waits until the CRD is Established: an API server serves its kind only then. */
async function established(client: KubeClient, name: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const crd = await client.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
      `${CRD_PATH}/${name}`,
    );
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline)
      throw new Error(`USE_EXISTING_CLUSTER=true: CRD ${name} was not Established within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** A manifest's object, in `default` when it names no namespace (a cluster-scoped kind ignores it). */
function namespaced(o: KubeObject): KubeObject {
  return o.metadata?.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: 'default' } };
}

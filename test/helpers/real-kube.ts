/**
 * A real cluster for the tests that must hold on kube-apiserver and not only on the embedded authority. Two ways
 * to give one (`npm run test:real-api` documents both):
 *
 * - `CTRLMETRICS_TEST_KUBECONFIG=<cluster-admin kubeconfig>`: a cluster the user already has (kind, a dev cluster,
 *   any conformant API server), as envtest's `USE_EXISTING_CLUSTER=true`. Every file works in namespaces and
 *   cluster-scoped names of its own, suffixed with the run's id ({@link runName}), and {@link RealKube.stop}
 *   deletes what carries that id, so two runs on one cluster do not collide and a run leaves nothing behind.
 * - `CTRLMETRICS_SHARED_KUBE=<dir>`: a folder with `start.sh DIR` / `stop.sh DIR` that start and stop a control
 *   plane of the tests' own on free loopback ports (`DIR/env` names `KUBE_SERVER`, `DIR/pki` holds `ca.crt`,
 *   `admin.crt`, `admin.key` and the service-account signing key `sa.key`). `scripts/run-tests.mjs` starts one for
 *   the whole suite and passes its directory in `CTRLMETRICS_REAL_KUBE_DIR`.
 *
 * What needs the control plane's insides comes from an optional variable or that one case skips with the reason:
 * the service-account signing key (`CTRLMETRICS_TEST_SA_SIGNING_KEY`, PEM; {@link SA_KEY_SKIP}), and a control plane
 * of a file's own, which can be restarted ({@link FRESH_KUBE_SKIP}: only with `CTRLMETRICS_SHARED_KUBE`).
 *
 *   describe('…', { skip: REAL_KUBE_SKIP }, () => {
 *     let kube: RealKube;
 *     before(async () => (kube = await startRealKube()));
 *     after(() => kube?.stop());
 *   });
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { generateSelfSignedCertificate } from '../../packages/ctrlmetrics/src/certwatcher/selfsigned.js';
import { KubeApiError, KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { probeWebhookReachable } from '../../packages/cli/src/ops/dev-cluster.js';
import { loadRestConfig, type RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { clusterHelpers, waitForCrd, type ApiCluster } from './cluster.js';

const run = promisify(execFile);

/** A cluster-admin kubeconfig of an existing cluster to run the real-API suite against. */
export const TEST_KUBECONFIG = process.env.CTRLMETRICS_TEST_KUBECONFIG
  ? resolve(process.env.CTRLMETRICS_TEST_KUBECONFIG)
  : undefined;

/** Where the scripts that start a control plane of the tests' own are (`start.sh DIR`, `stop.sh DIR`), if given. */
export const SHARED_KUBE = process.env.CTRLMETRICS_SHARED_KUBE
  ? resolve(process.env.CTRLMETRICS_SHARED_KUBE)
  : undefined;

/** PEM file of the cluster's service-account signing key, for the cases that forge tokens as the cluster signs them. */
const SA_SIGNING_KEY = process.env.CTRLMETRICS_TEST_SA_SIGNING_KEY
  ? resolve(process.env.CTRLMETRICS_TEST_SA_SIGNING_KEY)
  : undefined;

/** The one line that says how to run the real-API suite. */
export const HOW_TO_RUN =
  'set CTRLMETRICS_TEST_KUBECONFIG=<cluster-admin kubeconfig> to run it against a cluster you have, or CTRLMETRICS_SHARED_KUBE=<dir with start.sh/stop.sh> to start a control plane of its own';

function skipReason(): string | false {
  if (TEST_KUBECONFIG)
    return existsSync(TEST_KUBECONFIG)
      ? false
      : `CTRLMETRICS_TEST_KUBECONFIG names ${TEST_KUBECONFIG}, which does not exist`;
  if (process.env.CTRLMETRICS_REAL_KUBE_DIR) return false;
  if (SHARED_KUBE)
    return existsSync(join(SHARED_KUBE, 'start.sh'))
      ? false
      : `CTRLMETRICS_SHARED_KUBE names ${SHARED_KUBE}, which holds no start.sh`;
  return `no real cluster: ${HOW_TO_RUN}`;
}

/** Why the real-API tests cannot run here, or false when they can. */
export const REAL_KUBE_SKIP: string | false = skipReason();

/** Why a case that needs a control plane of its own (to restart it, or to start from an empty one) cannot run, or false. */
export const FRESH_KUBE_SKIP: string | false =
  REAL_KUBE_SKIP ||
  (SHARED_KUBE && existsSync(join(SHARED_KUBE, 'start.sh'))
    ? false
    : 'needs a control plane of its own, empty and restartable (set CTRLMETRICS_SHARED_KUBE=<dir with start.sh/stop.sh>): an existing cluster is shared');

/** Why a case that signs tokens with the cluster's service-account key cannot run, or false. */
export const SA_KEY_SKIP: string | false =
  REAL_KUBE_SKIP ||
  (TEST_KUBECONFIG && !SA_SIGNING_KEY
    ? "needs the cluster's service-account signing key: set CTRLMETRICS_TEST_SA_SIGNING_KEY=<PEM file> (kube-apiserver's --service-account-signing-key-file)"
    : false);

/**
 * This run's id, in every namespace and cluster-scoped name a real-API test makes: `scripts/run-tests.mjs` sets one
 * for the whole suite (`CTRLMETRICS_TEST_RUN_ID`); a file run alone makes its own.
 */
export const RUN_ID = process.env.CTRLMETRICS_TEST_RUN_ID || `r${randomBytes(3).toString('hex')}`;

/** `base` with this run's id: a name no other run on the same cluster uses, which {@link RealKube.stop} deletes. */
export function runName(base: string): string {
  return `${base}-${RUN_ID}`;
}

/**
 * An API group with this run's id in its first label (`versions.example.com` → `versions-<id>.example.com`): its
 * CRDs' names carry the id, so {@link RealKube.stop} deletes them and their objects.
 */
export function runGroup(group: string): string {
  const dot = group.indexOf('.');
  return dot < 0 ? runName(group) : `${runName(group.slice(0, dot))}${group.slice(dot)}`;
}

/** A real API server, reached as cluster-admin. */
export interface RealKube extends ApiCluster {
  /** The cluster-admin RestConfig. */
  adminConfig: RestConfig;
  /** Path of the service-account signing key (PEM), to forge tokens as the cluster signs them; see {@link SA_KEY_SKIP}. */
  saKeyFile: string | undefined;
  /**
   * Stops the control plane and starts it again on the same data (etcd, PKI, keys), on new ports: returns the
   * restarted one (this one's `admin` is closed). Only for a control plane started with `fresh`.
   */
  restart(): Promise<RealKube>;
  /**
   * Deletes the object at `path` (cluster-scoped, without the run's id in its name: an upstream CRD) when the
   * cluster stops; for what this run created and no earlier run left.
   */
  removeAfter(path: string): void;
  /**
   * Deletes what this run made (namespaces, CRDs, webhook configurations, cluster roles and bindings whose name
   * carries {@link RUN_ID}), waits until the namespaces and CRDs are gone, and closes the client. Never throws: a
   * test's `after` must go on.
   */
  stop(): Promise<void>;
}

/** Starts a control plane in `dir` through `start.sh` (about 7–10 s); throws with its log tail when it fails. */
export async function startControlPlane(dir: string): Promise<void> {
  if (!SHARED_KUBE) throw new Error('CTRLMETRICS_SHARED_KUBE is not set: no scripts to start a control plane with');
  try {
    await run('bash', [join(SHARED_KUBE, 'start.sh'), dir], { timeout: 180_000, maxBuffer: 4 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`start.sh ${dir} failed: ${e.message}\n${e.stderr ?? ''}`, { cause: err });
  }
}

/** Stops the control plane of `dir` (never throws: a test's `after` must go on). */
export async function stopControlPlane(dir: string): Promise<void> {
  if (!SHARED_KUBE) return;
  await run('bash', [join(SHARED_KUBE, 'stop.sh'), dir], { timeout: 60_000 }).catch(() => undefined);
}

/**
 * The suite's cluster: the kubeconfig's, or the suite's control plane (`CTRLMETRICS_REAL_KUBE_DIR`), or a control
 * plane of this file's own when `fresh` is set or no suite-wide one runs (only with `CTRLMETRICS_SHARED_KUBE`: check
 * {@link FRESH_KUBE_SKIP} first). `stop()` stops and removes only a control plane this call started.
 */
export async function startRealKube(opts: { fresh?: boolean } = {}): Promise<RealKube> {
  if (REAL_KUBE_SKIP) throw new Error(REAL_KUBE_SKIP);
  if (opts.fresh && FRESH_KUBE_SKIP) throw new Error(FRESH_KUBE_SKIP);
  if (TEST_KUBECONFIG && !opts.fresh) return attachKubeconfig(TEST_KUBECONFIG);
  const shared = opts.fresh ? undefined : process.env.CTRLMETRICS_REAL_KUBE_DIR;
  const dir = shared ?? (await mkdtemp(join(tmpdir(), 'ctrlmetrics-kube-')));
  if (!shared) {
    try {
      await startControlPlane(dir);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  return attachControlPlane(dir, !shared);
}

/** An existing cluster through its kubeconfig; reachable and as cluster-admin, or a clear error. */
async function attachKubeconfig(file: string): Promise<RealKube> {
  const loaded = await loadRestConfig({ kubeconfig: file });
  // PEM as strings: some tests hand the RestConfig to a child process as JSON, where a Buffer does not survive
  const pem = (v: string | Buffer | undefined) => (v === undefined ? undefined : String(v));
  const adminConfig: RestConfig = {
    ...loaded,
    ca: pem(loaded.ca),
    cert: pem(loaded.cert),
    key: pem(loaded.key),
    qps: 1000,
    burst: 1000,
  };
  const admin = new KubeClient(adminConfig);
  try {
    const review = await admin.create<{ status: { allowed: boolean } }>(
      '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: '*', group: '*', resource: '*' } },
      },
    );
    if (!review.status.allowed)
      throw new Error(
        `CTRLMETRICS_TEST_KUBECONFIG ${file}: its identity is not cluster-admin (may not * */*); the real-API suite creates namespaces, CRDs, webhook configurations and cluster roles`,
      );
  } catch (err) {
    admin.close();
    if (err instanceof KubeApiError)
      throw new Error(`CTRLMETRICS_TEST_KUBECONFIG ${file}: ${loaded.server} answered ${err.status}: ${err.message}`, {
        cause: err,
      });
    throw err;
  }
  const caPem = pem(loaded.ca) ?? '';
  const removals: string[] = [];
  const helpers = clusterHelpers(
    admin,
    loaded.server,
    caPem,
    file,
    async () => {
      await sweepRun(admin, removals);
      admin.close();
    },
    { roleSuffix: `-${RUN_ID}` },
  );
  return {
    ...helpers,
    adminConfig,
    saKeyFile: SA_SIGNING_KEY,
    removeAfter: (path) => void removals.push(path),
    async restart() {
      throw new Error(FRESH_KUBE_SKIP || 'restart() needs a control plane of its own: startRealKube({ fresh: true })');
    },
  };
}

/** A {@link RealKube} for the running control plane of `dir`; `owned`: stop() stops and removes it. */
async function attachControlPlane(dir: string, owned: boolean): Promise<RealKube> {
  const env = Object.fromEntries(
    (await readFile(join(dir, 'env'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const i = l.indexOf('=');
        return [l.slice(0, i), l.slice(i + 1).replace(/^'|'$/g, '')];
      }),
  );
  const server = env.KUBE_SERVER;
  const pki = join(dir, 'pki');
  const [caPem, cert, key] = await Promise.all(
    ['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')),
  );
  const adminConfig: RestConfig = { server, ca: caPem, cert, key, qps: 1000, burst: 1000 };
  const admin = new KubeClient(adminConfig);
  const removals: string[] = [];
  const helpers = clusterHelpers(
    admin,
    server,
    caPem,
    join(dir, 'admin.kubeconfig'),
    async () => {
      if (owned) {
        admin.close();
        await stopControlPlane(dir);
        await rm(dir, { recursive: true, force: true });
        return;
      }
      await sweepRun(admin, removals);
      admin.close();
    },
    owned ? {} : { roleSuffix: `-${RUN_ID}` },
  );
  return {
    ...helpers,
    adminConfig,
    saKeyFile: join(pki, 'sa.key'),
    removeAfter: (path) => void removals.push(path),
    async restart() {
      if (!owned) throw new Error('restart() needs a control plane of its own: startRealKube({ fresh: true })');
      admin.close();
      await stopControlPlane(dir);
      await startControlPlane(dir);
      return attachControlPlane(dir, owned);
    },
  };
}

/**
 * Why the cases whose webhooks the API server calls on this machine's `127.0.0.1` cannot run here, or false: a
 * control plane of the suite's own is local; an existing cluster is asked with a probe webhook (a dry-run create it
 * must send to a server here), as `ctrlmetrics dev` asks. For a file's top level:
 * `const WEBHOOK_SKIP = await webhooksUnreachable();`.
 */
export async function webhooksUnreachable(): Promise<string | false> {
  if (REAL_KUBE_SKIP) return REAL_KUBE_SKIP;
  if (!TEST_KUBECONFIG) return false;
  const loaded = await loadRestConfig({ kubeconfig: TEST_KUBECONFIG });
  const client = new KubeClient(loaded);
  const cert = await generateSelfSignedCertificate();
  const port = await new Promise<number>((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, () => {
      const { port: p } = s.address() as { port: number };
      s.close(() => resolvePort(p));
    });
  });
  try {
    await probeWebhookReachable(
      client,
      runName('probe'),
      { url: `https://127.0.0.1:${port}`, caPem: cert.caPem },
      cert,
      port,
    );
    return false;
  } catch (err) {
    return `the API server does not reach a webhook server on this machine's 127.0.0.1 (a cluster in containers or elsewhere): ${(err as Error).message.slice(0, 240)}`;
  } finally {
    client.close();
  }
}

/** The cluster-scoped collections a real-API test may add to; what carries the run's id is deleted after it. */
export const RUN_SCOPED_COLLECTIONS = [
  '/api/v1/namespaces',
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
  '/apis/rbac.authorization.k8s.io/v1/clusterroles',
  '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
];

/** Names in `collection` that carry this run's id. */
async function runObjects(admin: KubeClient, collection: string): Promise<string[]> {
  const list = await admin
    .get<{ items: Array<{ metadata: { name: string } }> }>(collection)
    .catch(() => ({ items: [] }));
  return list.items.map((o) => o.metadata.name).filter((n) => n.includes(RUN_ID));
}

/**
 * Deletes every object of {@link RUN_SCOPED_COLLECTIONS} whose name carries this run's id (a namespace takes what is
 * in it along; a CRD its objects), and waits up to 2 minutes until the namespaces and CRDs are gone, so the next
 * run (or the check that a run leaves nothing behind) does not meet them terminating.
 */
async function sweepRun(admin: KubeClient, removals: string[]): Promise<void> {
  for (const path of removals.reverse()) await admin.delete(path).catch(() => undefined);
  for (const collection of RUN_SCOPED_COLLECTIONS) {
    for (const name of await runObjects(admin, collection))
      await admin.delete(`${collection}/${name}`).catch(() => undefined);
  }
  const deadline = Date.now() + 120_000;
  const gone = async (path: string) =>
    admin.get(path).then(
      () => false,
      (err: unknown) => err instanceof KubeApiError && err.status === 404,
    );
  for (const collection of RUN_SCOPED_COLLECTIONS.slice(0, 2)) {
    while ((await runObjects(admin, collection)).length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
  }
  for (const path of removals)
    while (!(await gone(path)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
}

/**
 * Installs an upstream CRD (one whose name cannot carry the run's id) unless the cluster has it, waits until it is
 * Established, and, when this run created it, deletes it when the cluster stops. A cluster that had it keeps it.
 */
export async function installRunCrd(kube: RealKube, crd: { metadata?: { name?: string } }): Promise<void> {
  const collection = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  try {
    await kube.admin.create(collection, crd);
    kube.removeAfter(`${collection}/${crd.metadata!.name!}`);
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
  await waitForCrd(kube.admin, crd.metadata!.name!);
}

/**
 * A real control plane (kube-apiserver + kube-controller-manager v1.25.9, etcd) for the tests that must hold on a
 * cluster and not only on the embedded authority. It comes from `../shared/kube` beside the repository (or
 * `CTRLMETRICS_SHARED_KUBE`), started with its `start.sh DIR` on free loopback ports.
 *
 * `scripts/run-tests.mjs` starts one control plane for the whole real-API suite and passes its directory in
 * `CTRLMETRICS_REAL_KUBE_DIR`; {@link startRealKube} attaches to it (its `stop()` then leaves it running). A test
 * file run on its own starts its own control plane and stops it in `stop()`. Tests sharing one control plane use
 * namespaces and cluster-scoped names of their own.
 *
 *   describe('…', { skip: REAL_KUBE_SKIP }, () => {
 *     let kube: RealKube;
 *     before(async () => (kube = await startRealKube()));
 *     after(() => kube?.stop());
 *   });
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { KubeClient } from '../../src/kube/client.js';
import type { RestConfig } from '../../src/kube/config.js';
import { clusterHelpers, type ApiCluster } from './cluster.js';

const run = promisify(execFile);

/** Where the shared control plane's scripts are. */
export const SHARED_KUBE = resolve(process.env.CTRLMETRICS_SHARED_KUBE ?? join(import.meta.dirname, '..', '..', '..', 'shared', 'kube'));

function skipReason(): string | false {
  if (process.env.CTRLMETRICS_REAL_KUBE_DIR) return false;
  if (!existsSync(join(SHARED_KUBE, 'start.sh'))) return `no real control plane: ${SHARED_KUBE}/start.sh is absent (a clone without ../shared)`;
  return false;
}

/** Why the real-API tests cannot run here, or false when they can. */
export const REAL_KUBE_SKIP: string | false = skipReason();

/** A running real control plane, reached as cluster-admin. */
export interface RealKube extends ApiCluster {
  /** The control plane's directory (`admin.kubeconfig`, `pki/`, `logs/`). */
  dir: string;
  /** The cluster-admin RestConfig (client certificate). */
  adminConfig: RestConfig;
  /** Path of the service-account signing key (PEM, RS256), to forge expired tokens as the cluster would sign them. */
  saKeyFile: string;
  /**
   * Stops the control plane and starts it again on the same data (etcd, PKI, keys), on new ports: returns the
   * restarted one (this one's `admin` is closed). Only for a control plane started with `fresh`.
   */
  restart(): Promise<RealKube>;
}

/** Starts a control plane in `dir` through `start.sh` (about 7–10 s); throws with its log tail when it fails. */
export async function startControlPlane(dir: string): Promise<void> {
  try {
    await run('bash', [join(SHARED_KUBE, 'start.sh'), dir], { timeout: 180_000, maxBuffer: 4 << 20 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`start.sh ${dir} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
}

/** Stops the control plane of `dir` (never throws: a test's `after` must go on). */
export async function stopControlPlane(dir: string): Promise<void> {
  await run('bash', [join(SHARED_KUBE, 'stop.sh'), dir], { timeout: 60_000 }).catch(() => undefined);
}

/**
 * The suite's control plane (`CTRLMETRICS_REAL_KUBE_DIR`), or a fresh one of this file's own when `fresh` is set
 * or no suite-wide one runs. `stop()` stops and removes only a control plane this call started.
 */
export async function startRealKube(opts: { fresh?: boolean } = {}): Promise<RealKube> {
  if (REAL_KUBE_SKIP) throw new Error(REAL_KUBE_SKIP);
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
  return attach(dir, !shared);
}

/** A {@link RealKube} for the running control plane of `dir`; `owned`: stop() stops and removes it. */
async function attach(dir: string, owned: boolean): Promise<RealKube> {
  const env = Object.fromEntries(
    (await readFile(join(dir, 'env'), 'utf8')).split('\n').filter(Boolean).map((l) => {
      const i = l.indexOf('=');
      return [l.slice(0, i), l.slice(i + 1).replace(/^'|'$/g, '')];
    }),
  );
  const server = env.KUBE_SERVER!;
  const pki = join(dir, 'pki');
  const [caPem, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
  const adminConfig: RestConfig = { server, ca: caPem, cert, key, qps: 1000, burst: 1000 };
  const admin = new KubeClient(adminConfig);
  const helpers = clusterHelpers(admin, server, caPem!, join(dir, 'admin.kubeconfig'), async () => {
    admin.close();
    if (owned) {
      await stopControlPlane(dir);
      await rm(dir, { recursive: true, force: true });
    }
  });
  return {
    ...helpers,
    dir,
    adminConfig,
    saKeyFile: join(pki, 'sa.key'),
    async restart() {
      if (!owned) throw new Error('restart() needs a control plane of its own: startRealKube({ fresh: true })');
      admin.close();
      await stopControlPlane(dir);
      await startControlPlane(dir);
      return attach(dir, owned);
    },
  };
}

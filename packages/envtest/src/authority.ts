/**
 * Starting the authority: its CA and serving certificate, state directory, bootstrap objects and policy, the
 * manifests and CRD sets applied at start, and the HTTPS server in front of the request handler.
 */ import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir, hostname, networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { createLogger, type Logger } from 'ctrlmetrics/log';
import { HttpServer, type ServerLimits, type ServerRequest, type ServerResponseOf } from 'ctrlmetrics/internal';
import { kubeconfigFor, type RestConfig } from 'ctrlmetrics/config';
import { generateCA, issueServingCert, type CertKeyPair } from './pki.js';
import { Store } from './store.js';
import { ResourceRegistry, typeKey } from './resources.js';
import { ObjectService } from './objects.js';
import { Authenticator, loadTokenAuthFile } from './authn.js';
import { Authorizer } from './authz.js';
import { Reviews } from './reviews.js';
import { WatchHub } from './watch.js';
import { createHandler } from './server.js';
import { TokenSigner, generateSigningKey } from './sa-tokens.js';
import { API_AUDIENCES } from './audiences.js';
import { StateDir, randomToken, writeFileAtomic } from './state.js';
import { Persistence } from './persistence.js';
import { bootstrapPolicy, bootstrapPriorityClasses } from './bootstrap.js';
import { applyObjects, loadManifests } from './apply.js';
import { CRD_SETS } from './crds.js';
import { openapiHandler } from './openapi.js';
import type { UserInfo } from './rbac.js';
import { WebhookAdmission } from './webhook-admission.js';
import { CustomResourceConverter } from './cr-conversion.js';
import type { ServiceResolver } from './webhook-call.js';

/** Options of {@link startAuthority}. */
export interface AuthorityOptions {
  /** `host:port` to listen on (default `127.0.0.1:0`, an ephemeral port). */
  listen?: string;
  /**
   * Bounds of its HTTPS server (the manager's server core; see `ServerLimits`): default request heads of 16 KiB
   * sent within 30 s, bodies within 60 s, idle connections kept 65 s, 4096 connections, handshakes within 10 s.
   */
  serverLimits?: Partial<ServerLimits>;
  /** Directory for the CA, keys, admin token and objects; absent: everything in memory. */
  stateDir?: string;
  /** Where to write the admin kubeconfig (default `<stateDir>/kubeconfig`, or a temp file). */
  kubeconfigOut?: string;
  /** YAML files or directories (kustomize directories are built with `kubectl kustomize`) applied at start. */
  apply?: string[];
  /**
   * CRD sets installed at start, before `apply` (names of {@link CRD_SETS}: `prometheus-operator`, `cert-manager`),
   * so overlays with a ServiceMonitor or cert-manager's objects apply.
   */
  crds?: string[];
  /** kube-apiserver `--token-auth-file` (`token,user,uid,"group1,group2"`). */
  tokenAuthFile?: string;
  logger?: Logger;
  /** Watch event history kept for resuming watches (default 2000 events). */
  historyLimit?: number;
  /** Bookmark interval of watches with `allowWatchBookmarks` (default 10 s). */
  bookmarkIntervalMs?: number;
  /** How long a deleted namespace stays `Terminating` before its objects and itself are removed (default 1000 ms). */
  namespacePurgeDelayMs?: number;
  /** Requests (other than watches) served at once before answering 429 (default 400, as kube-apiserver). */
  maxRequestsInFlight?: number;
  /** Log bytes after which the state directory gets a new snapshot, at least (default 8 MiB). */
  compactAfterBytes?: number;
  /** Clock (ms since the epoch) for issuing and checking tokens; tests move it to expire tokens. Default `Date.now`. */
  clock?: () => number;
  /**
   * Where admission webhooks referenced by `clientConfig.service` are served: `<namespace>/<name>:<port>` →
   * `host:port` (e.g. `{'system/webhook-service:443': '127.0.0.1:9443'}`). The call still verifies the certificate
   * for `<name>.<namespace>.svc`, as kube-apiserver does. A service not listed fails the call (under the webhook's
   * `failurePolicy`).
   */
  webhookServices?: Record<string, string>;
}

/** A running authority. */
export interface Authority {
  /** `https://host:port`. */
  url: string;
  /** Path of the admin kubeconfig written. */
  kubeconfig: string;
  caPem: string;
  /** Bearer token of user `admin` (group `system:masters`). */
  adminToken: string;
  /** Admin connection settings for a `KubeClient` or `Manager`. */
  restConfig: RestConfig;
  /**
   * Stops serving, ends watches, and makes the state durable; rejects when some change could not be written
   * (the process should then exit non-zero).
   */
  stop(): Promise<void>;
}

const MAX_HEADER_BYTES = 16 * 1024;
/** Open connections at most: every informer holds one watch, so more than a manager's servers allow. */
const MAX_CONNECTIONS = 4096;

const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(listen);
  if (!m) throw new Error(`invalid listen address ${JSON.stringify(listen)}: expected host:port, e.g. 127.0.0.1:6443`);
  const host = m[1] ?? m[2] ?? '';
  return { host: host || '0.0.0.0', port: Number(m[3]) };
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** The resolver of {@link AuthorityOptions.webhookServices}; a malformed entry fails the start. */
function serviceResolver(map: Record<string, string>): ServiceResolver {
  const table = new Map<string, { host: string; port: number }>();
  for (const [ref, address] of Object.entries(map)) {
    if (!/^[^/\s]+\/[^/:\s]+:\d+$/.test(ref))
      throw new Error(`invalid webhook service ${JSON.stringify(ref)}: expected <namespace>/<name>:<port>`);
    const { host, port } = parseListen(address);
    if (!port)
      throw new Error(`invalid address ${JSON.stringify(address)} of webhook service ${ref}: expected host:port`);
    table.set(ref, { host: host === '0.0.0.0' ? '127.0.0.1' : host, port });
  }
  return (namespace, name, port) => table.get(`${namespace}/${name}:${port}`);
}

/** Starts the authority. */
export async function startAuthority(opts: AuthorityOptions = {}): Promise<Authority> {
  const { host, port } = parseListen(opts.listen ?? '127.0.0.1:0');
  const state = opts.stateDir ? new StateDir(opts.stateDir) : undefined;
  const unlock = state?.lock() ?? (() => undefined);
  try {
    return await start(opts, host, port, state, unlock);
  } catch (err) {
    unlock();
    throw err;
  }
}

async function start(
  opts: AuthorityOptions,
  host: string,
  port: number,
  state: StateDir | undefined,
  unlock: () => void,
): Promise<Authority> {
  const log = opts.logger ?? createLogger('authority');

  let ca: CertKeyPair;
  let signingKey: string;
  let adminToken: string;
  if (state) {
    const crt = state.read('ca.crt');
    const key = state.read('ca.key');
    if (crt && key) ca = { certPem: crt, keyPem: key };
    else {
      ca = await generateCA();
      state.write('ca.key', ca.keyPem);
      state.write('ca.crt', ca.certPem);
    }
    signingKey = await state.readOrCreate('sa.key', generateSigningKey);
    adminToken = (await state.readOrCreate('admin.token', randomToken)).trim();
  } else {
    ca = await generateCA();
    signingKey = generateSigningKey();
    adminToken = randomToken();
  }

  const store = new Store(opts.historyLimit ?? 2000);
  const persistence = state
    ? Persistence.open(state, store, { logger: log, compactAfterBytes: opts.compactAfterBytes })
    : undefined;
  const registry = new ResourceRegistry();
  registry.setCRDs(store.list('customresourcedefinitions.apiextensions.k8s.io'));
  const signer = new TokenSigner(signingKey);
  const objects = new ObjectService(store, registry, {
    caPem: ca.certPem,
    namespacePurgeDelayMs: opts.namespacePurgeDelayMs,
    issueLegacyToken: (p) => signer.issueLegacy(p),
    now: opts.clock,
  });
  const staticTokens = opts.tokenAuthFile ? loadTokenAuthFile(opts.tokenAuthFile) : new Map<string, UserInfo>();
  const authn = new Authenticator({
    store,
    signer,
    adminToken,
    staticTokens,
    apiAudiences: API_AUDIENCES,
    now: opts.clock,
  });
  const authz = new Authorizer(store);
  const reviews = new Reviews({ store, authn, authz, signer, apiAudiences: API_AUDIENCES, now: opts.clock });
  const hub = new WatchHub(store);
  const resolveService = serviceResolver(opts.webhookServices ?? {});
  const conversions = new CustomResourceConverter({
    crdOf: (name) => store.get('customresourcedefinitions.apiextensions.k8s.io', undefined, name),
    resolveService,
  });
  const webhooks = new WebhookAdmission(store, registry, { resolveService, logger: log, converter: conversions });

  // A fresh cluster's namespaces, bootstrap RBAC policy and system PriorityClasses; missing bootstrap objects are
  // re-created on every start.
  for (const ns of INITIAL_NAMESPACES) {
    if (!store.get('namespaces', undefined, ns))
      objects.create(registry.get('', 'v1', 'namespaces')!, undefined, { metadata: { name: ns } });
  }
  for (const o of [...bootstrapPolicy(), ...bootstrapPriorityClasses()]) {
    const t = registry.forKind(String(o.apiVersion), String(o.kind));
    const meta = o.metadata as { name: string };
    if (t && !store.get(typeKey(t), undefined, meta.name)) objects.create(t, undefined, o);
  }
  if (opts.crds?.length) {
    const sets = opts.crds.map((name) => {
      const set = CRD_SETS[name];
      if (!set) throw new Error(`unknown CRD set ${JSON.stringify(name)}; known: ${Object.keys(CRD_SETS).join(', ')}`);
      return set;
    });
    applyObjects(
      sets.flatMap((s) => s.crds),
      registry,
      objects,
    );
    log.info('installed CRDs', { sets: opts.crds, sources: sets.map((s) => s.source) });
  }
  if (opts.apply?.length) {
    const n = applyObjects(loadManifests(opts.apply), registry, objects);
    log.info('applied manifests', { objects: n, paths: opts.apply });
  }

  await persistence?.durable();

  const sanHosts = [
    'localhost',
    '127.0.0.1',
    '::1',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
    hostname(),
  ];
  if (host === '0.0.0.0' || host === '::') {
    for (const addrs of Object.values(networkInterfaces()))
      for (const a of addrs ?? []) sanHosts.push(a.address.split('%')[0]);
  } else sanHosts.push(host);
  const serving = await issueServingCert(ca, sanHosts);

  let address = '';
  const handler = createHandler({
    registry,
    objects,
    reviews,
    authn,
    authz,
    hub,
    signer,
    serverAddress: () => address,
    nonResource: openapiHandler(registry),
    bookmarkIntervalMs: opts.bookmarkIntervalMs,
    maxRequestsInFlight: opts.maxRequestsInFlight,
    durable: persistence ? () => persistence.durable() : undefined,
    webhooks,
    conversions,
    logger: log,
  });
  // the manager's server core (src/httpserver), with kube-apiserver's bounds: request heads up to 16 KiB (larger:
  // 431) sent within 30 s, a whole request body within 60 s (watches stream their answers for minutes, which no
  // bound here cuts), idle keep-alive connections kept 65 s, connections that send no request closed, a bounded
  // number of connections, the TLS handshake within 10 s, a plain-HTTP request answered with Go's 400
  const server = new HttpServer(
    {
      bindAddress: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
      tls: { options: { cert: serving.certPem, key: serving.keyPem, ALPNProtocols: ['http/1.1'] } },
      limits: {
        maxHeaderBytes: MAX_HEADER_BYTES,
        headersTimeoutMs: 30_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 65_000,
        maxConnections: MAX_CONNECTIONS,
        ...opts.serverLimits,
      },
    },
    handler as (req: ServerRequest, res: ServerResponseOf) => void,
  );
  try {
    await server.listen();
  } catch (err) {
    await persistence?.close().catch(() => undefined); // nothing may keep writing a state directory it no longer holds
    throw err;
  }
  const actualPort = server.port;
  address = `${urlHost(host)}:${actualPort}`;
  const url = `https://${address}`;

  let tempDir: string | undefined;
  let kubeconfig: string;
  if (opts.kubeconfigOut) kubeconfig = opts.kubeconfigOut;
  else if (state) kubeconfig = join(state.dir, 'kubeconfig');
  else {
    tempDir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-authority-'));
    kubeconfig = join(tempDir, 'kubeconfig');
  }
  try {
    mkdirSync(dirname(kubeconfig), { recursive: true });
    writeFileAtomic(
      kubeconfig,
      toYaml(
        kubeconfigFor({
          server: url,
          caPem: ca.certPem,
          token: adminToken,
          clusterName: 'ctrlmetrics-authority',
          userName: 'admin',
        }),
      ),
    );
  } catch (err) {
    await server.close(0);
    await persistence?.close().catch(() => undefined);
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    throw new Error(`cannot write the kubeconfig ${kubeconfig}: ${(err as Error).message}`, { cause: err });
  }

  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      hub.closeAll();
      // requests in flight get 2 s to finish, then their connections are cut
      await server.close(2000);
      objects.flushPendingDeletions();
      try {
        await persistence?.close();
      } finally {
        unlock();
        if (tempDir) rmSync(tempDir, { recursive: true, force: true });
      }
    })();
    return stopped;
  };

  return {
    url,
    kubeconfig,
    caPem: ca.certPem,
    adminToken,
    restConfig: { server: url, ca: ca.certPem, token: adminToken },
    stop,
  };
}

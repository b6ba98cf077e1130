/**
 * `ctrlmetrics doctor`: walks the chain a scrape depends on, in order, and says for each link whether it holds
 * and how to fix it: manager Deployment, metrics Service, its port and its ready endpoints, the manager's right to create
 * TokenReviews and SubjectAccessReviews and to hold its leader-election Lease, the scraper's right to GET /metrics,
 * the ServiceMonitor (and its CRD),
 * the NetworkPolicy's namespace label, the serving certificate's DNS names, and a real scrape as the scraper.
 */
import { X509Certificate } from 'node:crypto';
import { KubeApiError, type KubeClient } from 'ctrlmetrics/client';
import { isStatus, serviceAccountGroups, serviceAccountUser } from './kube.js';
import { serviceMonitorCrdInstalled } from './monitors.js';
import { METRICS_NAMESPACE_LABEL } from './label-namespace.js';
import { scrapeOnce, type ScrapeTarget } from './scrape.js';
import { requestServiceAccountToken } from './token.js';

/** The metrics port the scaffolded Service and NetworkPolicy use. */
export const METRICS_PORT = 8443;

/** One line of the report. `skip`: not applicable here (e.g. no NetworkPolicy). */
export interface Check {
  status: 'ok' | 'fail' | 'skip';
  message: string;
  fix?: string;
}

/** What to examine. */
export interface DoctorOptions {
  /** The manager's namespace, `<project>-system`. */
  namespace: string;
  /** The project (name prefix); default: the namespace without `-system`. */
  project?: string;
  /** The scraper identity to check (`NS:NAME` of a service account). */
  as?: { namespace: string; name: string };
  /**
   * Where to scrape `/metrics` from, e.g. `https://127.0.0.1:8443/metrics` through `kubectl port-forward`.
   * Absent: the Service's DNS name when `inCluster`, else the scrape is not tried.
   */
  url?: string;
  /** doctor runs in a pod: the Service's DNS name resolves. */
  inCluster?: boolean;
}

type Obj = Record<string, unknown>;
interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}
interface Deployment {
  metadata: Meta;
  status?: { replicas?: number; readyReplicas?: number };
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> };
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec?: {
        serviceAccountName?: string;
        containers?: Array<{ args?: string[]; volumeMounts?: Array<{ name: string; mountPath: string }> }>;
        volumes?: Array<{ name: string; secret?: { secretName?: string } }>;
      };
    };
  };
}
interface Pod {
  metadata: Meta;
  status?: {
    phase?: string;
    containerStatuses?: Array<{
      name: string;
      ready?: boolean;
      state?: { waiting?: { reason?: string }; terminated?: { reason?: string } };
    }>;
  };
}
interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
}
interface Service {
  metadata: Meta;
  spec?: { ports?: ServicePort[]; selector?: Record<string, string> };
}
interface EndpointSlice {
  metadata: Meta;
  ports?: Array<{ name?: string; port?: number }> | null;
  endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean }; targetRef?: { name?: string } }> | null;
}
interface NetworkPolicy {
  metadata: Meta;
  spec?: {
    podSelector?: { matchLabels?: Record<string, string> };
    policyTypes?: string[];
    ingress?: Array<{
      from?: Array<{ namespaceSelector?: { matchLabels?: Record<string, string> } }>;
      ports?: Array<{ port?: number | string }>;
    }>;
  };
}

const ok = (message: string): Check => ({ status: 'ok', message });
const fail = (message: string, fix?: string): Check => ({ status: 'fail', message, fix });
const skip = (message: string): Check => ({ status: 'skip', message });

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function getOrUndefined<T>(
  client: KubeClient,
  path: string,
  query?: Record<string, string>,
): Promise<T | undefined> {
  try {
    return await client.get<T>(path, { timeoutMs: 15_000, query });
  } catch (err) {
    if (isStatus(err, 404)) return undefined;
    throw err;
  }
}

/** Asks the API whether a service account may do something (a SubjectAccessReview as the caller). */
async function mayServiceAccount(
  client: KubeClient,
  sa: { namespace: string; name: string },
  attrs: Obj,
): Promise<{ allowed: boolean; reason?: string }> {
  const res = await client.create<{ status?: { allowed?: boolean; reason?: string } }>(
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: serviceAccountUser(sa.namespace, sa.name), groups: serviceAccountGroups(sa.namespace), ...attrs },
    },
    { timeoutMs: 15_000 },
  );
  return { allowed: res.status?.allowed === true, reason: res.status?.reason };
}

function matches(labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean {
  return Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
}

/**
 * One quick request before the checks: when the API server cannot be reached at all, every check would fail the
 * same way after its own timeout. Rejects with the one sentence to print; resolves when the API answers anything.
 */
export async function assertApiReachable(client: KubeClient, timeoutMs = 5_000): Promise<void> {
  try {
    await client.get('/version', { timeoutMs, retry: false });
  } catch (err) {
    // any HTTP answer (even 401/403) means the server is there; the checks report what it refuses
    if (err instanceof KubeApiError && err.status !== 0) return;
    throw new Error(
      `the Kubernetes API at ${client.config.server} is unreachable (${reason(err)}): start the API server or fix --kubeconfig / --context; nothing else was checked`,
      { cause: err },
    );
  }
}

function selectorOf(d: Deployment): string {
  const labels = d.spec?.selector?.matchLabels ?? d.spec?.template?.metadata?.labels ?? {};
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Why the manager's pods are not ready, in a few words each (`; pods: NAME CrashLoopBackOff, …`), or that there are none. */
async function podsSummary(client: KubeClient, ns: string, d: Deployment): Promise<string> {
  const selector = selectorOf(d);
  if (!selector) return '';
  const pods = await client.get<{ items: Pod[] }>(`/api/v1/namespaces/${encodeURIComponent(ns)}/pods`, {
    query: { labelSelector: selector },
    timeoutMs: 15_000,
  });
  if (pods.items.length === 0)
    return '; no pod exists (quota, admission or the ReplicaSet: kubectl describe replicaset)';
  const why = pods.items.slice(0, 5).map((p) => {
    const c = p.status?.containerStatuses?.find((x) => !x.ready);
    const state =
      c?.state?.waiting?.reason ?? c?.state?.terminated?.reason ?? (c ? 'not ready' : (p.status?.phase ?? 'Pending'));
    return `${p.metadata.name} ${state}`;
  });
  return `; pods: ${why.join(', ')}`;
}

/**
 * The Service's EndpointSlices (label `kubernetes.io/service-name`): at least one ready address carrying the
 * metrics port. A Service whose selector matches no pod, or only unready ones, has the right port and still
 * serves nothing.
 */
async function endpointsCheck(
  client: KubeClient,
  ns: string,
  name: string,
  svc: Service | undefined,
  port: ServicePort | undefined,
): Promise<Check> {
  if (!svc || !port) return skip(`metrics Service endpoints: not checked (no Service port ${METRICS_PORT})`);
  const slices = await getOrUndefined<{ items: EndpointSlice[] }>(
    client,
    `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/endpointslices`,
    {
      labelSelector: `kubernetes.io/service-name=${name}`,
    },
  );
  if (!slices)
    return skip(
      'metrics Service endpoints: not checked (this API server does not serve discovery.k8s.io/v1 EndpointSlices)',
    );
  const selector = Object.entries(svc.spec?.selector ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const withPort = slices.items.filter((s) => (s.ports ?? []).some((p) => (p.name ?? '') === (port.name ?? '')));
  const all = slices.items.flatMap((s) => s.endpoints ?? []);
  if (all.length === 0) {
    return fail(
      `metrics Service ${ns}/${name} has no endpoints: its selector ${selector || '(none)'} matches no running pod`,
      `compare it with the manager pod's labels (kubectl get pods -n ${ns} --show-labels); a Deployment with no ready pod leaves it empty too`,
    );
  }
  const ready = withPort.flatMap((s) => {
    const p = (s.ports ?? []).find((x) => (x.name ?? '') === (port.name ?? ''));
    return (s.endpoints ?? [])
      .filter((e) => e.conditions?.ready !== false)
      .flatMap((e) => e.addresses.map((a) => `${a}:${p?.port ?? '?'}`));
  });
  if (withPort.length === 0) {
    return fail(
      `metrics Service ${ns}/${name}: its endpoints carry no port ${port.name ?? METRICS_PORT}`,
      `name the container port ${port.targetPort ?? METRICS_PORT} as the Service's targetPort (kubectl describe service -n ${ns} ${name})`,
    );
  }
  if (ready.length === 0) {
    return fail(
      `metrics Service ${ns}/${name}: ${all.length} endpoint${all.length === 1 ? '' : 's'}, none ready (the manager's readiness probe fails)`,
      `kubectl describe pods -n ${ns} ${selector ? `-l ${selector} ` : ''}(Readiness) and kubectl logs -n ${ns} -l ${selector || 'control-plane=controller-manager'}`,
    );
  }
  return ok(
    `metrics Service ${ns}/${name} endpoints: ${ready.length} ready (${ready.slice(0, 3).join(', ')}${ready.length > 3 ? ', …' : ''})`,
  );
}

/** Runs every check in order; never throws for an API failure (it becomes a failed check). */
export async function runDoctor(client: KubeClient, o: DoctorOptions): Promise<Check[]> {
  const ns = o.namespace;
  const project = o.project ?? (ns.endsWith('-system') ? ns.slice(0, -'-system'.length) : ns);
  const deployName = `${project}-controller-manager`;
  const serviceName = `${project}-controller-manager-metrics-service`;
  const monitorName = `${project}-controller-manager-metrics-monitor`;
  const readerRole = `${project}-metrics-reader`;
  const authRole = `${project}-metrics-auth-role`;
  const apply = 'kubectl apply -k config/default';
  const checks: Check[] = [];
  const guard = async (what: string, fn: () => Promise<Check | Check[]>) => {
    try {
      const c = await fn();
      checks.push(...(Array.isArray(c) ? c : [c]));
    } catch (err) {
      checks.push(
        fail(
          `${what}: cannot check (${reason(err)})`,
          'the identity running doctor needs read access to it (e.g. cluster-admin or view)',
        ),
      );
    }
  };

  // 1. the manager Deployment
  let deployment: Deployment | undefined;
  await guard(`manager Deployment ${ns}/${deployName}`, async () => {
    deployment = await getOrUndefined<Deployment>(
      client,
      `/apis/apps/v1/namespaces/${encodeURIComponent(ns)}/deployments/${encodeURIComponent(deployName)}`,
    );
    if (!deployment)
      return fail(
        `manager Deployment ${ns}/${deployName} not found`,
        `deploy the project (${apply}), or pass --namespace/--project of the right project`,
      );
    const desired = deployment.spec?.replicas ?? 1;
    const ready = deployment.status?.readyReplicas ?? 0;
    if (desired === 0)
      return fail(
        `manager Deployment ${ns}/${deployName} is scaled to 0: nothing serves /metrics`,
        `kubectl scale -n ${ns} deployment/${deployName} --replicas=1`,
      );
    if (ready >= desired) return ok(`manager Deployment ${ns}/${deployName}: ${ready} of ${desired} replicas ready`);
    return fail(
      `manager Deployment ${ns}/${deployName}: ${ready} of ${desired} replicas ready${await podsSummary(client, ns, deployment)}`,
      `kubectl describe pods -n ${ns} -l ${selectorOf(deployment)} and kubectl logs -n ${ns} deployment/${deployName}`,
    );
  });

  // 2. the metrics Service and its port
  let svc: Service | undefined;
  let svcPort: ServicePort | undefined;
  await guard(`metrics Service ${ns}/${serviceName}`, async () => {
    svc = await getOrUndefined<Service>(
      client,
      `/api/v1/namespaces/${encodeURIComponent(ns)}/services/${encodeURIComponent(serviceName)}`,
    );
    if (!svc) {
      return [
        fail(
          `metrics Service ${ns}/${serviceName} not found`,
          `enable "- metrics_service.yaml" in config/default/kustomization.yaml and run ${apply}`,
        ),
        skip('metrics Service port: not checked (no Service)'),
      ];
    }
    const port = (svcPort = (svc.spec?.ports ?? []).find((p) => p.port === METRICS_PORT));
    const portCheck = port
      ? ok(
          `metrics Service port ${port.name ?? ''}${port.name ? ' ' : ''}${METRICS_PORT} → ${port.targetPort ?? METRICS_PORT}`,
        )
      : fail(
          `metrics Service ${serviceName} does not expose port ${METRICS_PORT} (ports: ${(svc.spec?.ports ?? []).map((p) => p.port).join(', ') || 'none'})`,
          `set the Service's port to ${METRICS_PORT} (name https, targetPort ${METRICS_PORT}) to match --metrics-bind-address=:${METRICS_PORT}`,
        );
    return [ok(`metrics Service ${ns}/${serviceName} exists`), portCheck];
  });

  // 2b. ready manager pods behind the Service's port (what the EndpointSlice controller found)
  await guard(`metrics Service ${ns}/${serviceName} endpoints`, () =>
    endpointsCheck(client, ns, serviceName, svc, svcPort),
  );

  // 3. the manager's service account may create TokenReviews and SubjectAccessReviews
  const saName = deployment?.spec?.template?.spec?.serviceAccountName ?? deployName;
  const managerSa = { namespace: ns, name: saName };
  for (const [group, resource, kind] of [
    ['authentication.k8s.io', 'tokenreviews', 'TokenReviews'],
    ['authorization.k8s.io', 'subjectaccessreviews', 'SubjectAccessReviews'],
  ] as const) {
    await guard(`manager service account ${ns}/${saName} creating ${kind}`, async () => {
      const r = await mayServiceAccount(client, managerSa, { resourceAttributes: { group, resource, verb: 'create' } });
      return r.allowed
        ? ok(`manager service account ${ns}/${saName} can create ${kind}`)
        : fail(
            `manager service account ${ns}/${saName} cannot create ${kind} (scrapes answer 500)`,
            `bind it to ClusterRole ${authRole}: the ClusterRoleBinding ${project}-metrics-auth-rolebinding of config/rbac (${apply})`,
          );
    });
  }

  // 3b. with --leader-elect, the manager's service account may hold its Lease (else it waits for it forever)
  await guard(`manager service account ${ns}/${saName} holding its Lease`, () =>
    leaseRightsCheck(client, managerSa, deployment, project, apply),
  );

  // 4. the scraper may GET /metrics
  let scraper = o.as;
  await guard('scraper access to /metrics', async () => {
    if (o.as) {
      const as = o.as;
      const r = await mayServiceAccount(client, as, { nonResourceAttributes: { path: '/metrics', verb: 'get' } });
      return r.allowed
        ? ok(`scraper ${as.namespace}:${as.name} can get /metrics`)
        : fail(
            `scraper ${as.namespace}:${as.name} cannot get /metrics (scrapes answer 403)`,
            `ctrlmetrics grant --serviceaccount ${as.namespace}:${as.name} --clusterrole ${readerRole}`,
          );
    }
    const role = await getOrUndefined(
      client,
      `/apis/rbac.authorization.k8s.io/v1/clusterroles/${encodeURIComponent(readerRole)}`,
    );
    if (!role) return fail(`ClusterRole ${readerRole} not found`, `apply the project's RBAC (${apply})`);
    const list = await client.get<{
      items: Array<{
        metadata: Meta;
        roleRef: { kind: string; name: string };
        subjects?: Array<{ kind: string; name: string; namespace?: string }>;
      }>;
    }>('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { timeoutMs: 15_000 });
    const bound = list.items
      .filter((b) => b.roleRef.kind === 'ClusterRole' && b.roleRef.name === readerRole)
      .flatMap((b) => b.subjects ?? []);
    const sa = bound.find((s) => s.kind === 'ServiceAccount' && s.namespace);
    if (sa) scraper = { namespace: sa.namespace!, name: sa.name };
    const subjects = bound.map((s) =>
      s.kind === 'ServiceAccount' ? `${s.namespace}:${s.name}` : `${s.kind} ${s.name}`,
    );
    return subjects.length
      ? ok(`${readerRole} is bound to ${subjects.join(', ')} (check one with --as NS:NAME)`)
      : fail(
          `nothing is bound to ClusterRole ${readerRole}: every scrape is denied (403)`,
          `ctrlmetrics grant --serviceaccount <scraper-ns>:<scraper-sa> --clusterrole ${readerRole}`,
        );
  });

  // 5. the ServiceMonitor and its CRD
  await guard('ServiceMonitor', async () => {
    if (!(await serviceMonitorCrdInstalled(client))) {
      return [
        fail(
          'ServiceMonitor CRD (servicemonitors.monitoring.coreos.com) is not installed: no Prometheus operator runs in this cluster',
          "install the Prometheus operator (e.g. kube-prometheus), or run Prometheus without it: ctrlmetrics prometheus-config --from config/default; on ctrlmetrics' embedded API, start it with --crds prometheus-operator",
        ),
        skip(`ServiceMonitor ${ns}/${monitorName}: not checked (no CRD)`),
      ];
    }
    const sm = await getOrUndefined(
      client,
      `/apis/monitoring.coreos.com/v1/namespaces/${encodeURIComponent(ns)}/servicemonitors/${encodeURIComponent(monitorName)}`,
    );
    return [
      ok('ServiceMonitor CRD is installed'),
      sm
        ? ok(`ServiceMonitor ${ns}/${monitorName} exists`)
        : fail(`ServiceMonitor ${ns}/${monitorName} not found`, `ctrlmetrics edit --enable prometheus, then ${apply}`),
    ];
  });

  // 6. a NetworkPolicy in front of the metrics port: which namespaces may scrape
  await guard('NetworkPolicy', async () => {
    const podLabels = deployment?.spec?.template?.metadata?.labels ?? { 'control-plane': 'controller-manager' };
    const list = await client.get<{ items: NetworkPolicy[] }>(
      `/apis/networking.k8s.io/v1/namespaces/${encodeURIComponent(ns)}/networkpolicies`,
      { timeoutMs: 15_000 },
    );
    const policies = list.items.filter(
      (p) =>
        matches(podLabels, p.spec?.podSelector?.matchLabels) &&
        (p.spec?.policyTypes ?? ['Ingress']).includes('Ingress'),
    );
    if (policies.length === 0) return skip('no NetworkPolicy restricts traffic to the manager pods');
    const selectors = policies.flatMap((p) =>
      (p.spec?.ingress ?? [])
        .filter(
          (r) =>
            !r.ports ||
            r.ports.some((pt) => pt.port === undefined || Number(pt.port) === METRICS_PORT || pt.port === 'https'),
        )
        .flatMap((r) =>
          (r.from ?? []).map((f) => f.namespaceSelector?.matchLabels).filter((m): m is Record<string, string> => !!m),
        ),
    );
    const names = policies.map((p) => p.metadata.name).join(', ');
    if (selectors.length === 0)
      return fail(
        `NetworkPolicy ${names} lets no namespace reach port ${METRICS_PORT}`,
        `allow the scraper's namespace on port ${METRICS_PORT} (namespaceSelector ${METRICS_NAMESPACE_LABEL.key}: ${METRICS_NAMESPACE_LABEL.value})`,
      );
    const namespaces = await client.get<{ items: Array<{ metadata: Meta }> }>('/api/v1/namespaces', {
      timeoutMs: 15_000,
    });
    const allowed = namespaces.items
      .filter((n) => selectors.some((s) => matches(n.metadata.labels, s)))
      .map((n) => n.metadata.name);
    const label = Object.entries(selectors[0])
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    if (o.as && !allowed.includes(o.as.namespace)) {
      return fail(
        `NetworkPolicy ${names}: the scraper's namespace ${o.as.namespace} lacks ${label} (allowed: ${allowed.join(', ') || 'none'})`,
        `ctrlmetrics label-namespace ${o.as.namespace}`,
      );
    }
    return allowed.length
      ? ok(`NetworkPolicy ${names}: namespaces with ${label} may scrape: ${allowed.join(', ')}`)
      : fail(
          `NetworkPolicy ${names}: no namespace carries ${label}, so no pod can scrape`,
          `ctrlmetrics label-namespace <scraper-namespace>`,
        );
  });

  // 7. a serving certificate from a Secret: its DNS names must cover the Service
  let servingCa: { secretName: string; pem: Buffer } | undefined;
  await guard('metrics certificate', async () => {
    const pod = deployment?.spec?.template?.spec;
    const container = pod?.containers?.[0];
    const certArg = container?.args?.find((a) => a.startsWith('--metrics-cert-path='));
    if (!deployment) return skip('metrics certificate: not checked (no Deployment)');
    if (!certArg)
      return skip(
        'metrics certificate: none mounted, the manager serves a self-signed one (scrapers need insecureSkipVerify)',
      );
    const dir = certArg.slice('--metrics-cert-path='.length).replace(/\/+$/, '');
    const mount = container?.volumeMounts?.find((m) => m.mountPath.replace(/\/+$/, '') === dir);
    const secretName = pod?.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName;
    if (!secretName)
      return fail(
        `--metrics-cert-path=${dir} is not a mounted Secret volume`,
        'mount the certificate Secret there (cert_metrics_manager_patch.yaml)',
      );
    const secret = await getOrUndefined<{ data?: Record<string, string> }>(
      client,
      `/api/v1/namespaces/${encodeURIComponent(ns)}/secrets/${encodeURIComponent(secretName)}`,
    );
    if (!secret)
      return fail(
        `certificate Secret ${ns}/${secretName} not found (the pod cannot start)`,
        `check that cert-manager issued the Certificate ${project}-metrics-certs (kubectl describe certificate -n ${ns})`,
      );
    const caPem = secret.data?.['ca.crt'];
    if (caPem) servingCa = { secretName, pem: Buffer.from(caPem, 'base64') };
    const pem = secret.data?.['tls.crt'];
    if (!pem)
      return fail(
        `certificate Secret ${ns}/${secretName} has no tls.crt`,
        'the Secret must hold tls.crt, tls.key and ca.crt',
      );
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(Buffer.from(pem, 'base64'));
    } catch (err) {
      return fail(
        `tls.crt of Secret ${ns}/${secretName} is not a PEM certificate (${reason(err)})`,
        'reissue the certificate',
      );
    }
    const wanted = `${serviceName}.${ns}.svc`;
    const dns = (cert.subjectAltName ?? '')
      .split(/,\s*/)
      .filter((s) => s.startsWith('DNS:'))
      .map((s) => s.slice(4));
    if (cert.checkHost(wanted)) return ok(`certificate in Secret ${secretName} covers ${wanted}`);
    return fail(
      `certificate in Secret ${secretName} does not cover ${wanted} (DNS names: ${dns.join(', ') || 'none'}); scrapers verifying with serverName fail`,
      `set the Certificate's dnsNames to ${wanted} and ${wanted}.cluster.local (enable the metrics replacements in config/default: ctrlmetrics edit --enable metrics-tls)`,
    );
  });

  // 8. a real scrape, as the scraper: through the Service from inside the cluster, or the URL given
  await guard('scrape', () =>
    scrapeCheck(client, {
      ns,
      serviceName,
      url: o.url ?? (o.inCluster ? `https://${serviceName}.${ns}.svc:${METRICS_PORT}/metrics` : undefined),
      scraper,
      servingCa,
    }),
  );

  return checks;
}

/**
 * One GET of /metrics with a fresh token of the scraper's service account, verifying TLS against the CA of the
 * certificate Secret (cert-manager's `ca.crt`) for the Service's DNS name when there is one. A failure says which
 * link broke as `ctrlmetrics scrape` does: token (401), RBAC (403), the manager's reviews or a collector (500), TLS.
 */
/** The verbs client-go's leader election uses on its Lease. */
const LEASE_VERBS = ['get', 'create', 'update'] as const;

/**
 * Whether the manager's service account may get, create and update Leases where its leader election keeps one:
 * the namespace of `--leader-election-namespace` in the Deployment's args, else the pod's (the Deployment's).
 * Not applicable when the Deployment runs without `--leader-elect`.
 */
async function leaseRightsCheck(
  client: KubeClient,
  sa: { namespace: string; name: string },
  d: Deployment | undefined,
  project: string,
  apply: string,
): Promise<Check> {
  const args = d?.spec?.template?.spec?.containers?.flatMap((c) => c.args ?? []) ?? ['--leader-elect'];
  // Go's flag syntax: a boolean is --name or --name=value, a string --name value or --name=value
  const flag = (name: string, boolean: boolean) => {
    for (let i = 0; i < args.length; i++) {
      const a = args[i].replace(/^--?/, '--');
      if (a === `--${name}`) return boolean ? 'true' : args[i + 1];
      if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
    }
    return undefined;
  };
  const elect = flag('leader-elect', true);
  if (elect === undefined || /^(0|f|false)$/i.test(elect))
    return skip('leader election: not checked (the manager runs without --leader-elect)');
  const leaseNs = flag('leader-election-namespace', false) || sa.namespace;
  const missing: string[] = [];
  for (const verb of LEASE_VERBS) {
    const r = await mayServiceAccount(client, sa, {
      resourceAttributes: { namespace: leaseNs, group: 'coordination.k8s.io', resource: 'leases', verb },
    });
    if (!r.allowed) missing.push(verb);
  }
  if (missing.length === 0)
    return ok(`manager service account ${sa.namespace}/${sa.name} can get, create and update Leases in ${leaseNs}`);
  return fail(
    `manager service account ${sa.namespace}/${sa.name} cannot ${missing.join(', ')} Leases in ${leaseNs} (leader election never acquires: the manager reconciles nothing)`,
    `bind it to Role ${project}-leader-election-role in ${leaseNs}: the RoleBinding ${project}-leader-election-rolebinding of config/rbac (${apply})`,
  );
}

async function scrapeCheck(
  client: KubeClient,
  c: {
    ns: string;
    serviceName: string;
    url?: string;
    scraper?: { namespace: string; name: string };
    servingCa?: { secretName: string; pem: Buffer };
  },
): Promise<Check> {
  if (!c.url) {
    return skip(
      `scrape: not tried from outside the cluster; to scrape through the Service run kubectl port-forward -n ${c.ns} service/${c.serviceName} ${METRICS_PORT} ` +
        `and pass --url https://127.0.0.1:${METRICS_PORT}/metrics`,
    );
  }
  if (!c.scraper)
    return skip('scrape: not tried (no service account is bound to the metrics-reader role; pass --as NS:NAME)');
  const who = `${c.scraper.namespace}:${c.scraper.name}`;
  let url: URL;
  try {
    url = new URL(c.url);
  } catch {
    return fail(
      `scrape: --url ${JSON.stringify(c.url)} is not a URL`,
      `e.g. --url https://127.0.0.1:${METRICS_PORT}/metrics`,
    );
  }
  let token: string;
  try {
    token = await requestServiceAccountToken(client, {
      namespace: c.scraper.namespace,
      serviceAccount: c.scraper.name,
      expirationSeconds: 600,
    });
  } catch (err) {
    return fail(
      `scrape: cannot get a token for ${who} (${reason(err)})`,
      `the identity running doctor needs create on serviceaccounts/token in ${c.scraper.namespace}`,
    );
  }
  const serverName = `${c.serviceName}.${c.ns}.svc`;
  const target: ScrapeTarget = c.servingCa
    ? {
        url,
        token: () => token,
        tokenSource: `a token of ${who}`,
        insecure: false,
        ca: c.servingCa.pem,
        caFile: `ca.crt of Secret ${c.servingCa.secretName}`,
        serverName,
        tlsHint: `the manager must serve the certificate issued into Secret ${c.servingCa.secretName} (mounted at --metrics-cert-path) for ${serverName}, as the ServiceMonitor's tlsConfig expects`,
        timeoutMs: 10_000,
      }
    : { url, token: () => token, tokenSource: `a token of ${who}`, insecure: true, timeoutMs: 10_000 };
  const tls = c.servingCa
    ? `TLS verified for ${serverName} against ca.crt of Secret ${c.servingCa.secretName}`
    : 'TLS not verified: the manager serves a self-signed certificate';
  try {
    const res = await scrapeOnce(target);
    const families = res.body.split('\n').filter((l) => l.startsWith('# TYPE ')).length;
    return ok(`scrape of ${url.href} as ${who}: 200, ${families} metric families (${tls})`);
  } catch (err) {
    return fail(`scrape of ${url.href} as ${who} failed: ${reason(err)}`);
  }
}

/** The report: one line per check, `✓`, `✗` (with the fix) or `-` (not applicable). */
export function formatReport(checks: Check[]): string {
  return (
    checks
      .map((c) =>
        c.status === 'ok'
          ? `✓ ${c.message}`
          : c.status === 'skip'
            ? `- ${c.message}`
            : `✗ ${c.message}${c.fix ? ` → fix: ${c.fix}` : ''}`,
      )
      .join('\n') + '\n'
  );
}

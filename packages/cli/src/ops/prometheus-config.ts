/**
 * `ctrlmetrics prometheus-config`: the Prometheus `scrape_configs` jobs the Prometheus operator would generate from
 * a project's ServiceMonitor, for people who run Prometheus without the operator.
 *
 * Field by field, as the operator renders a ServiceMonitor endpoint: job `serviceMonitor/<ns>/<name>/<index>`,
 * `scheme`, `path` → `metrics_path`, `interval`/`scrapeTimeout`, `bearerTokenFile` → `authorization.credentials_file`,
 * `tlsConfig` → `tls_config` (`insecureSkipVerify`, `serverName`, CA/client certificate from Secrets, which the
 * operator mounts under `/etc/prometheus/certs/`), and the target labels `namespace`, `service`, `pod`,
 * `container`, `job` (the Service name) and `endpoint` (the port name). Without `--target` the job discovers the
 * Service's endpoints (`kubernetes_sd_configs`) and sets the labels by relabeling, as the operator does; with
 * `--target HOST:PORT` the same labels are static.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { OpsError, OpsUsageError } from './errors.js';

/** Inputs of {@link renderScrapeConfigs}. */
export interface PrometheusConfigOptions {
  /** `HOST:PORT` to scrape directly (static target) instead of discovering the Service's endpoints. */
  target?: string;
  /** Path Prometheus reads the bearer token from (default: the ServiceMonitor's `bearerTokenFile`). */
  tokenFile?: string;
  /** CA bundle Prometheus verifies the endpoint with (default: where the operator mounts the CA Secret). */
  caFile?: string;
  /** Client certificate and key (default with discovery: where the operator mounts them; static: left out). */
  certFile?: string;
  keyFile?: string;
  /** Value of the `pod` label of a static target (the operator takes it from the endpoint's pod). */
  pod?: string;
}

type Obj = Record<string, unknown>;

interface SecretOrConfigMapRef {
  secret?: { name: string; key: string };
  configMap?: { name: string; key: string };
}

interface MonitorEndpoint {
  port?: string;
  targetPort?: string | number;
  path?: string;
  scheme?: string;
  interval?: string;
  scrapeTimeout?: string;
  honorLabels?: boolean;
  honorTimestamps?: boolean;
  bearerTokenFile?: string;
  bearerTokenSecret?: { name: string; key: string };
  authorization?: { type?: string; credentials?: { name: string; key: string } };
  tlsConfig?: {
    insecureSkipVerify?: boolean;
    serverName?: string;
    caFile?: string;
    certFile?: string;
    keyFile?: string;
    ca?: SecretOrConfigMapRef;
    cert?: SecretOrConfigMapRef;
    keySecret?: { name: string; key: string };
  };
}

interface Manifest {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: Obj;
}

/** Where the operator mounts a referenced Secret or ConfigMap key in the Prometheus pod. */
function operatorMountPath(namespace: string, ref: SecretOrConfigMapRef): string | undefined {
  if (ref.secret) return `/etc/prometheus/certs/secret_${namespace}_${ref.secret.name}_${ref.secret.key}`;
  if (ref.configMap) return `/etc/prometheus/certs/configmap_${namespace}_${ref.configMap.name}_${ref.configMap.key}`;
  return undefined;
}

function describeRef(ref: SecretOrConfigMapRef): string {
  if (ref.secret) return `Secret ${ref.secret.name} key ${ref.secret.key}`;
  if (ref.configMap) return `ConfigMap ${ref.configMap.name} key ${ref.configMap.key}`;
  return 'a reference';
}

/** Prometheus label names: the operator turns every character outside [a-zA-Z0-9_] into `_`. */
function sanitizeLabelName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_]/g, '_');
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Reads manifests from a kustomize directory (`kubectl kustomize`), a directory of YAML files, or one YAML file. */
export async function loadManifests(from: string): Promise<Manifest[]> {
  if (!existsSync(from)) throw new OpsError(`--from ${from}: no such file or directory`);
  let text: string;
  if (statSync(from).isDirectory()) {
    const isKustomization = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'].some((f) =>
      existsSync(join(from, f)),
    );
    if (!isKustomization)
      throw new OpsError(
        `--from ${from}: not a kustomize directory (no kustomization.yaml); pass the overlay (config/default) or a ServiceMonitor YAML file`,
      );
    text = await kustomize(from);
  } else {
    text = readFileSync(from, 'utf8');
  }
  const docs = parseAllDocuments(text);
  const out: Manifest[] = [];
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    if (d.errors.length > 0) throw new OpsError(`--from ${from}: invalid YAML: ${d.errors[0].message}`);
    const v = d.toJS() as unknown;
    if (v && typeof v === 'object') {
      const m = v as Manifest & { items?: Manifest[] };
      if (m.kind === 'List' && Array.isArray(m.items)) out.push(...m.items);
      else out.push(m);
    }
  }
  return out;
}

function kustomize(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('kubectl', ['kustomize', dir], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ENOENT')
        return reject(
          new OpsError(
            'kubectl is not installed: it builds the kustomize overlay (or pass a ServiceMonitor YAML file with --from)',
          ),
        );
      reject(new OpsError(`kubectl kustomize ${dir} failed: ${(stderr || e.message).trim()}`));
    });
  });
}

function matchesSelector(
  labels: Record<string, string> | undefined,
  selector: { matchLabels?: Record<string, string> } | undefined,
): boolean {
  const want = selector?.matchLabels ?? {};
  return Object.entries(want).every(([k, v]) => labels?.[k] === v);
}

/** The `scrape_configs` jobs for every endpoint of every ServiceMonitor in the manifests. */
export function buildScrapeConfigs(
  manifests: Manifest[],
  opts: PrometheusConfigOptions,
  warn: (msg: string) => void = () => undefined,
): Obj[] {
  const monitors = manifests.filter(
    (m) => m.kind === 'ServiceMonitor' && String(m.apiVersion ?? '').startsWith('monitoring.coreos.com/'),
  );
  if (monitors.length === 0) {
    throw new OpsError(
      'no ServiceMonitor in the input: enable it with `ctrlmetrics edit --enable prometheus` (config/default lists ../prometheus), or pass its YAML file with --from',
    );
  }
  if (opts.target !== undefined && !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/.test(opts.target)) {
    throw new OpsUsageError(`--target must be HOST:PORT (e.g. 127.0.0.1:8443), got ${JSON.stringify(opts.target)}`);
  }
  const jobs: Obj[] = [];
  for (const sm of monitors) {
    const name = sm.metadata?.name ?? '';
    const ns = sm.metadata?.namespace ?? 'default';
    const spec = (sm.spec ?? {}) as {
      endpoints?: MonitorEndpoint[];
      selector?: { matchLabels?: Record<string, string> };
      namespaceSelector?: { matchNames?: string[]; any?: boolean };
      jobLabel?: string;
    };
    const namespaces = spec.namespaceSelector?.any
      ? []
      : spec.namespaceSelector?.matchNames?.length
        ? spec.namespaceSelector.matchNames
        : [ns];
    const services = manifests.filter(
      (m) =>
        m.kind === 'Service' &&
        (namespaces.length === 0 || namespaces.includes(m.metadata?.namespace ?? 'default')) &&
        matchesSelector(m.metadata?.labels, spec.selector),
    );
    (spec.endpoints ?? []).forEach((ep, i) => {
      jobs.push(
        buildJob(
          { name, ns, namespaces, selector: spec.selector, jobLabel: spec.jobLabel },
          ep,
          i,
          services,
          opts,
          warn,
        ),
      );
    });
  }
  return jobs;
}

function buildJob(
  sm: {
    name: string;
    ns: string;
    namespaces: string[];
    selector?: { matchLabels?: Record<string, string> };
    jobLabel?: string;
  },
  ep: MonitorEndpoint,
  index: number,
  services: Manifest[],
  opts: PrometheusConfigOptions,
  warn: (msg: string) => void,
): Obj {
  const where = `ServiceMonitor ${sm.ns}/${sm.name} endpoint ${index}`;
  const isStatic = opts.target !== undefined;
  const job: Obj = { job_name: `serviceMonitor/${sm.ns}/${sm.name}/${index}` };
  if (ep.honorLabels !== undefined) job.honor_labels = ep.honorLabels;
  if (ep.honorTimestamps !== undefined) job.honor_timestamps = ep.honorTimestamps;
  if (ep.interval) job.scrape_interval = ep.interval;
  if (ep.scrapeTimeout) job.scrape_timeout = ep.scrapeTimeout;
  job.metrics_path = ep.path ?? '/metrics';
  job.scheme = ep.scheme ?? 'http';

  // bearer token: a file path the scraper reads on every scrape (rotated tokens keep working)
  const tokenFile = opts.tokenFile ?? ep.bearerTokenFile;
  if (opts.tokenFile === undefined && (ep.bearerTokenSecret || ep.authorization?.credentials)) {
    const ref = ep.bearerTokenSecret ?? ep.authorization!.credentials!;
    if (isStatic)
      throw new OpsError(
        `${where} takes its token from Secret ${ref.name} key ${ref.key}: pass --token-file with a file holding that token`,
      );
    job.authorization = {
      type: ep.authorization?.type ?? 'Bearer',
      credentials_file: operatorMountPath(sm.ns, { secret: ref }),
    };
  } else if (tokenFile) {
    job.authorization = { type: 'Bearer', credentials_file: tokenFile };
  }

  const tls = ep.tlsConfig;
  if (tls || opts.caFile) {
    const t: Obj = {};
    const ca =
      opts.caFile ?? tls?.caFile ?? (tls?.ca ? (isStatic ? undefined : operatorMountPath(sm.ns, tls.ca)) : undefined);
    if (tls?.ca && ca === undefined) {
      throw new OpsError(
        `${where} verifies the server with the CA in ${describeRef(tls.ca)}: pass --ca-file with that CA certificate (e.g. kubectl get secret ${tls.ca.secret?.name ?? ''} -n ${sm.ns} -o jsonpath='{.data.ca\\.crt}' | base64 -d > ca.crt)`,
      );
    }
    if (ca) t.ca_file = ca;
    const cert =
      opts.certFile ?? tls?.certFile ?? (tls?.cert && !isStatic ? operatorMountPath(sm.ns, tls.cert) : undefined);
    const key =
      opts.keyFile ??
      tls?.keyFile ??
      (tls?.keySecret && !isStatic ? operatorMountPath(sm.ns, { secret: tls.keySecret }) : undefined);
    if (cert && key) {
      t.cert_file = cert;
      t.key_file = key;
    } else if ((tls?.cert || tls?.keySecret) && isStatic) {
      warn(
        `${where} also presents a client certificate from a Secret; it is left out (the metrics endpoint authenticates the bearer token). Pass --cert-file and --key-file to include it.`,
      );
    } else if (cert || key) {
      throw new OpsUsageError('--cert-file and --key-file go together: pass both or neither');
    }
    if (tls?.serverName) {
      if (/SERVICE_NAME|SERVICE_NAMESPACE/.test(tls.serverName)) {
        throw new OpsError(
          `${where} has the placeholder serverName ${tls.serverName}: enable the [PROMETHEUS-WITH-CERTS] replacements in config/default/kustomization.yaml (ctrlmetrics edit --enable metrics-tls)`,
        );
      }
      t.server_name = tls.serverName;
    }
    if (tls?.insecureSkipVerify) {
      t.insecure_skip_verify = true;
      if (opts.caFile)
        warn(
          `${where} sets insecureSkipVerify: true, so --ca-file is not used to verify the server; enable the TLS patch (ctrlmetrics edit --enable metrics-tls) to verify it.`,
        );
    }
    if (Object.keys(t).length > 0) job.tls_config = t;
  }

  const service = services[0];
  if (services.length > 1)
    warn(`${where} selects ${services.length} Services; the labels name the first, ${service?.metadata?.name}`);
  const serviceName = service?.metadata?.name;
  const portName = ep.port;
  if (isStatic) {
    if (!service)
      warn(`${where}: no Service in the input matches its selector, so the target has no "service" and "job" labels`);
    const labels: Record<string, string> = { namespace: service?.metadata?.namespace ?? sm.ns };
    if (serviceName) labels.service = serviceName;
    if (opts.pod) labels.pod = opts.pod;
    const jobValue = sm.jobLabel ? service?.metadata?.labels?.[sm.jobLabel] : serviceName;
    if (jobValue) labels.job = jobValue;
    if (portName) labels.endpoint = portName;
    else if (ep.targetPort !== undefined) labels.endpoint = String(ep.targetPort);
    job.static_configs = [{ targets: [opts.target!], labels }];
    return job;
  }

  job.kubernetes_sd_configs = [
    { role: 'endpoints', namespaces: { names: sm.namespaces.length ? sm.namespaces : [sm.ns] } },
  ];
  const relabel: Obj[] = [{ source_labels: ['job'], target_label: '__tmp_prometheus_job_name' }];
  for (const [k, v] of Object.entries(sm.selector?.matchLabels ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const l = sanitizeLabelName(k);
    relabel.push({
      action: 'keep',
      source_labels: [`__meta_kubernetes_service_label_${l}`, `__meta_kubernetes_service_labelpresent_${l}`],
      regex: `(${escapeRegex(v)});true`,
    });
  }
  if (portName)
    relabel.push({
      action: 'keep',
      source_labels: ['__meta_kubernetes_endpoint_port_name'],
      regex: escapeRegex(portName),
    });
  else if (ep.targetPort !== undefined) {
    relabel.push({
      action: 'keep',
      source_labels: [
        typeof ep.targetPort === 'number'
          ? '__meta_kubernetes_pod_container_port_number'
          : '__meta_kubernetes_pod_container_port_name',
      ],
      regex: escapeRegex(String(ep.targetPort)),
    });
  }
  relabel.push(
    {
      source_labels: [
        '__meta_kubernetes_endpoint_address_target_kind',
        '__meta_kubernetes_endpoint_address_target_name',
      ],
      separator: ';',
      regex: 'Node;(.*)',
      replacement: '${1}',
      target_label: 'node',
    },
    {
      source_labels: [
        '__meta_kubernetes_endpoint_address_target_kind',
        '__meta_kubernetes_endpoint_address_target_name',
      ],
      separator: ';',
      regex: 'Pod;(.*)',
      replacement: '${1}',
      target_label: 'pod',
    },
    { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
    { source_labels: ['__meta_kubernetes_service_name'], target_label: 'service' },
    { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
    { source_labels: ['__meta_kubernetes_pod_container_name'], target_label: 'container' },
    { action: 'drop', source_labels: ['__meta_kubernetes_pod_phase'], regex: '(Failed|Succeeded)' },
    sm.jobLabel
      ? {
          source_labels: [`__meta_kubernetes_service_label_${sanitizeLabelName(sm.jobLabel)}`],
          target_label: 'job',
          regex: '(.+)',
          replacement: '${1}',
        }
      : { source_labels: ['__meta_kubernetes_service_name'], target_label: 'job', replacement: '${1}' },
    { target_label: 'endpoint', replacement: portName ?? String(ep.targetPort ?? '') },
  );
  job.relabel_configs = relabel;
  return job;
}

/** Reads `--from` and prints the `scrape_configs` YAML document. */
export async function renderScrapeConfigs(
  from: string,
  opts: PrometheusConfigOptions,
  warn: (msg: string) => void,
): Promise<string> {
  const jobs = buildScrapeConfigs(await loadManifests(from), opts, warn);
  return stringify({ scrape_configs: jobs }, { lineWidth: 0 });
}

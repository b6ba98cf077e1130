/**
 * `config/default/`: the overlay users build and deploy. Mirrors kubebuilder v4's file and its section markers
 * (`[PROMETHEUS]`, `[METRICS]`, `[METRICS-WITH-CERTS]`, `[CERTMANAGER]`, `[NETWORK POLICY]`) so its users find
 * their way; optional parts start commented out and are switched with `ctrlmetrics edit`.
 */
import type { ProjectParams } from './params.js';
import { METRICS_CERT_DIR, METRICS_SECRET, METRICS_PORT } from './params.js';
import { SHARD_REPLICAS, commentedShardingReplacements } from './config-sharding.js';

/** The replacement blocks, written once so the template and `ctrlmetrics edit` agree on them. */
export function metricsReplacement(
  fieldPath: 'metadata.name' | 'metadata.namespace',
  target: 'Certificate' | 'ServiceMonitor',
): Record<string, unknown> {
  const index = fieldPath === 'metadata.name' ? 0 : 1;
  const select =
    target === 'Certificate'
      ? { kind: 'Certificate', group: 'cert-manager.io', version: 'v1', name: 'metrics-certs' }
      : {
          kind: 'ServiceMonitor',
          group: 'monitoring.coreos.com',
          version: 'v1',
          name: 'controller-manager-metrics-monitor',
        };
  const fieldPaths =
    target === 'Certificate' ? ['spec.dnsNames.0', 'spec.dnsNames.1'] : ['spec.endpoints.0.tlsConfig.serverName'];
  return {
    source: { kind: 'Service', version: 'v1', name: 'controller-manager-metrics-service', fieldPath },
    targets: [{ select, fieldPaths, options: { delimiter: '.', index, create: true } }],
  };
}

function commentedReplacement(
  fieldPath: 'metadata.name' | 'metadata.namespace',
  target: 'Certificate' | 'ServiceMonitor',
): string {
  const r = metricsReplacement(fieldPath, target) as {
    source: Record<string, string>;
    targets: Array<{ select: Record<string, string>; fieldPaths: string[]; options: { index: number } }>;
  };
  const t = r.targets[0];
  return [
    `#- source:`,
    `#    kind: Service`,
    `#    version: v1`,
    `#    name: controller-manager-metrics-service`,
    `#    fieldPath: ${fieldPath}`,
    `#  targets:`,
    `#  - select:`,
    ...Object.entries(t.select).map(([k, v]) => `#      ${k}: ${v}`),
    `#    fieldPaths:`,
    ...t.fieldPaths.map((f) => `#    - ${f}`),
    `#    options:`,
    `#      delimiter: '.'`,
    `#      index: ${t.options.index}`,
    `#      create: true`,
  ].join('\n');
}

export function configDefault(p: ProjectParams): Record<string, string> {
  const kustomization = `# Every object of the overlay goes to this namespace.
namespace: ${p.projectName}-system

# Prefix of every object name (the Deployment becomes ${p.projectName}-controller-manager). Keep it equal to the
# namespace without "-system": docs, commands and dashboards derive one from the other.
namePrefix: ${p.projectName}-

# Extra labels for every object (and, with includeSelectors, every selector).
#labels:
#- includeSelectors: true
#  pairs:
#    team: platform

# Switch the optional parts on and off with \`ctrlmetrics edit --enable|--disable <option>\`
# (prometheus, certmanager, metrics-tls, network-policy, grafana, sharding), or by (un)commenting the lines below.
resources:
# The CustomResourceDefinitions of the project's APIs (config/crd, written by npm run manifests); ctrlmetrics
# create api enables it.
#- ../crd
- ../rbac
- ../manager
# [CERTMANAGER] Self-signed Issuer and the "metrics-certs" Certificate. Needs cert-manager in the cluster.
# Enable it together with the [CERTMANAGER] replacements below, which fill in the Certificate's DNS names.
#- ../certmanager
# [PROMETHEUS] ServiceMonitor for the Prometheus Operator. Needs its CRDs in the cluster.
#- ../prometheus
# [METRICS] The Service in front of the metrics endpoint (port 8443, named https).
- metrics_service.yaml
# [NETWORK POLICY] Protect the /metrics endpoint with a NetworkPolicy: only pods in namespaces labelled
# "metrics: enabled" may reach it. A NetworkPolicy limits addresses and ports; it authenticates nobody.
#- ../network-policy
# [GRAFANA] ConfigMap with Grafana dashboards for the controller-runtime metrics (label grafana_dashboard: "1").
#- ../grafana
# [SHARDING] The sharder and the project's ControllerRing: the manager runs as ${SHARD_REPLICAS} shards, each reconciling
# its share of the objects. Enable it together with manager_sharding_patch.yaml and the [SHARDING] replacements
# below. Needs [CERTMANAGER].
#- ../sharding

# The patches of the manager name its Deployment: the sharder ([SHARDING]) is a Deployment too.
patches:
# [METRICS] Passes --metrics-bind-address=:${METRICS_PORT} to the manager explicitly (its default too), so the
# Service, the NetworkPolicy and this flag visibly agree on the port.
- path: manager_metrics_patch.yaml
  target:
    kind: Deployment
    name: controller-manager

# [METRICS-WITH-CERTS] Serve the metrics endpoint with the cert-manager certificate (Secret "${METRICS_SECRET}")
# instead of a self-signed one. Needs [CERTMANAGER]; [PROMETHEUS-WITH-CERTS] makes Prometheus verify it.
#- path: cert_metrics_manager_patch.yaml
#  target:
#    kind: Deployment
#    name: controller-manager

# [WEBHOOK] Mount the webhook server's certificate (Secret "webhook-server-cert") into the manager and open its
# port 9443. \`ctrlmetrics create webhook\` turns this on, after the metrics patches, as kubebuilder orders them.
#- path: manager_webhook_patch.yaml
#  target:
#    kind: Deployment
#    name: controller-manager

# [SHARDING] The manager as a ring of shards: replicas, POD_NAME, --sharding-ring, no leader election.
#- path: manager_sharding_patch.yaml
#  target:
#    kind: Deployment
#    name: controller-manager

# [CERTMANAGER] Fill the metrics Certificate's DNS names from the metrics Service's name and namespace:
# <service>.<namespace>.svc and <service>.<namespace>.svc.cluster.local. Switched together with ../certmanager,
# so the SERVICE_NAME.SERVICE_NAMESPACE placeholders never reach a build.
#replacements:
${commentedReplacement('metadata.name', 'Certificate')}
${commentedReplacement('metadata.namespace', 'Certificate')}
# [PROMETHEUS-WITH-CERTS] Fill the ServiceMonitor's tlsConfig.serverName (<service>.<namespace>.svc), so
# Prometheus, which scrapes pod IPs, verifies the certificate against the Service's DNS name.
${commentedReplacement('metadata.name', 'ServiceMonitor')}
${commentedReplacement('metadata.namespace', 'ServiceMonitor')}
# [SHARDING] The sharder's Service into its certificate's DNS names and its --webhook-service; the ring's name into
# the manager's --sharding-ring; the manager's image (config/manager) into the sharder's.
${commentedShardingReplacements()}
`;

  const metricsService = `apiVersion: v1
kind: Service
metadata:
  labels:
    control-plane: controller-manager
    app.kubernetes.io/name: ${p.projectName}
    app.kubernetes.io/managed-by: kustomize
  name: controller-manager-metrics-service
  namespace: system
spec:
  ports:
  - name: https
    port: ${METRICS_PORT}
    protocol: TCP
    targetPort: ${METRICS_PORT}
  selector:
    control-plane: controller-manager
    app.kubernetes.io/name: ${p.projectName}
`;

  const managerMetricsPatch = `# Inserted first so the flags already in the Deployment's args are kept.
- op: add
  path: /spec/template/spec/containers/0/args/0
  value: --metrics-bind-address=:${METRICS_PORT}
`;

  const certMetricsManagerPatch = `# [METRICS-WITH-CERTS] Mounts the cert-manager Secret "${METRICS_SECRET}" and points the manager at it.
# If the files are missing the manager exits with an error instead of falling back to a self-signed certificate.
- op: add
  path: /spec/template/spec/containers/0/volumeMounts/-
  value:
    mountPath: ${METRICS_CERT_DIR}
    name: metrics-certs
    readOnly: true
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --metrics-cert-path=${METRICS_CERT_DIR}
- op: add
  path: /spec/template/spec/volumes/-
  value:
    name: metrics-certs
    secret:
      secretName: ${METRICS_SECRET}
      optional: false
      items:
      - key: ca.crt
        path: ca.crt
      - key: tls.crt
        path: tls.crt
      - key: tls.key
        path: tls.key
`;

  return {
    'config/default/kustomization.yaml': kustomization,
    'config/default/metrics_service.yaml': metricsService,
    'config/default/manager_metrics_patch.yaml': managerMetricsPatch,
    'config/default/cert_metrics_manager_patch.yaml': certMetricsManagerPatch,
  };
}

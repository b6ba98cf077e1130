/** `config/prometheus/`: Prometheus Operator ServiceMonitor for the metrics Service, and its TLS patch. */
import { METRICS_SECRET, commonLabels, type ProjectParams } from './params.js';

/** The `patches` entry of config/prometheus/kustomization.yaml that `edit … metrics-tls` switches. */
export const MONITOR_TLS_PATCH = { path: 'monitor_tls_patch.yaml', target: { kind: 'ServiceMonitor' } };

export function configPrometheus(p: ProjectParams): Record<string, string> {
  return {
    'config/prometheus/kustomization.yaml': `resources:
- monitor.yaml

# [PROMETHEUS-WITH-CERTS] The following patch configures the ServiceMonitor in ../prometheus
# to securely reference certificates created and managed by cert-manager.
# Additionally, ensure that you uncomment the [METRICS-WITH-CERTS] patch under config/default/kustomization.yaml
# to mount the "${METRICS_SECRET}" secret in the Manager Deployment. \`ctrlmetrics edit --enable metrics-tls\` does all of it.
#patches:
#- path: monitor_tls_patch.yaml
#  target:
#    kind: ServiceMonitor
`,
    'config/prometheus/monitor.yaml': `# Prometheus Monitor Service (Metrics)
# A Prometheus picks ServiceMonitors by label (its serviceMonitorSelector, e.g. release: prometheus with
# kube-prometheus-stack): add the labels yours expects below. Its ServiceAccount also needs the ClusterRole
# metrics-reader (\`ctrlmetrics grant --serviceaccount <ns>:<name>\`), and, with ../network-policy, its namespace the label metrics: enabled.
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  labels:
    control-plane: controller-manager
${commonLabels(p, '    ')}
  name: controller-manager-metrics-monitor
  namespace: system
spec:
  endpoints:
  - path: /metrics
    port: https # Ensure this is the name of the port that exposes HTTPS metrics
    scheme: https
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    tlsConfig:
      # TODO(user): The option insecureSkipVerify: true is not recommended for production since it disables
      # certificate verification, exposing the system to potential man-in-the-middle attacks.
      # For production environments, it is recommended to use cert-manager for automatic TLS certificate management.
      # To apply this configuration, enable cert-manager and use the patch monitor_tls_patch.yaml,
      # which securely references the certificate from the secret (\`ctrlmetrics edit --enable metrics-tls\`).
      insecureSkipVerify: true
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${p.projectName}
`,
    'config/prometheus/monitor_tls_patch.yaml': `# Patch for Prometheus ServiceMonitor to enable secure TLS configuration
# using certificates managed by cert-manager
- op: replace
  path: /spec/endpoints/0/tlsConfig
  value:
    # SERVICE_NAME and SERVICE_NAMESPACE are replaced by the [PROMETHEUS-WITH-CERTS] replacements in config/default
    serverName: SERVICE_NAME.SERVICE_NAMESPACE.svc
    insecureSkipVerify: false
    ca:
      secret:
        name: ${METRICS_SECRET}
        key: ca.crt
    cert:
      secret:
        name: ${METRICS_SECRET}
        key: tls.crt
    keySecret:
      name: ${METRICS_SECRET}
      key: tls.key
`,
  };
}

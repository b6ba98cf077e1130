/** `config/prometheus/`: Prometheus Operator ServiceMonitor for the metrics Service, and its TLS patch. */
import { METRICS_SECRET, commonLabels, type ProjectParams } from './params.js';

/** The `patches` entry of config/prometheus/kustomization.yaml that `edit … metrics-tls` switches. */
export const MONITOR_TLS_PATCH = { path: 'monitor_tls_patch.yaml', target: { kind: 'ServiceMonitor' } };

export function configPrometheus(p: ProjectParams): Record<string, string> {
  return {
    'config/prometheus/kustomization.yaml': `resources:
- monitor.yaml

# [PROMETHEUS-WITH-CERTS] Makes Prometheus verify the manager's certificate (CA and client key pair from the Secret
# "${METRICS_SECRET}") instead of skipping verification. Only useful together with [METRICS-WITH-CERTS] in
# config/default, which makes the manager serve that certificate: \`ctrlmetrics edit --enable metrics-tls\` switches both.
#patches:
#- path: monitor_tls_patch.yaml
#  target:
#    kind: ServiceMonitor
`,
    'config/prometheus/monitor.yaml': `# How the Prometheus Operator scrapes the manager: HTTPS on the Service port "https", with the Prometheus pod's
# ServiceAccount token as bearer token.
# A Prometheus picks ServiceMonitors by label (its serviceMonitorSelector, e.g. release: prometheus with
# kube-prometheus-stack): add the labels yours expects below. Its ServiceAccount also needs the ClusterRole
# metrics-reader (\`ctrlmetrics grant --serviceaccount <ns>:<name>\`) and, with ../network-policy, its
# namespace the label metrics: enabled.
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
    port: https # the name of the metrics Service's port
    scheme: https
    # The Prometheus pod's own ServiceAccount token. Where the Prometheus resource denies
    # arbitraryFSAccessThroughSMs, use a token Secret instead:
    #   authorization: {type: Bearer, credentials: {name: <secret>, key: token}}
    bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
    tlsConfig:
      # The manager's default certificate is self-signed, so nothing can verify it: the token is then sent to
      # whoever answers on the Service address. For production, serve a cert-manager certificate and verify it
      # (monitor_tls_patch.yaml, switched on with \`ctrlmetrics edit --enable metrics-tls\`).
      insecureSkipVerify: true
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${p.projectName}
`,
    'config/prometheus/monitor_tls_patch.yaml': `# [PROMETHEUS-WITH-CERTS] Replaces only the endpoint's tlsConfig (path, port, scheme and token stay): verify the
# manager's cert-manager certificate, for the Service's DNS name (Prometheus connects to pod IPs, which the
# certificate does not name).
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

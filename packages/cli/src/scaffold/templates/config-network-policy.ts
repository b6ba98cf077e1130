/** `config/network-policy/`: who may reach the manager pods. Limits addresses and ports; authenticates nobody. */
import { METRICS_PORT, WEBHOOK_PORT, commonLabels, type ProjectParams } from './params.js';

export function configNetworkPolicy(p: ProjectParams): Record<string, string> {
  const labels = commonLabels(p, '    ');
  return {
    'config/network-policy/kustomization.yaml': `resources:
- allow-metrics-traffic.yaml
# [WEBHOOK] Uncomment when the manager serves admission or conversion webhooks.
#- allow-webhook-traffic.yaml
`,
    'config/network-policy/allow-metrics-traffic.yaml': `# Lets only pods of namespaces labelled "metrics: enabled" connect to the manager's metrics port
# (TCP ${METRICS_PORT}): \`ctrlmetrics label-namespace <ns>\` or \`kubectl label namespace <ns> metrics=enabled\`.
# It limits addresses and ports and authenticates nobody: every scrape still needs a token allowed to
# GET /metrics (ClusterRole metrics-reader). Only enforced if the cluster's network plugin supports policies.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  labels:
${labels}
  name: allow-metrics-traffic
  namespace: system
spec:
  podSelector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${p.projectName}
  policyTypes:
  - Ingress
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          metrics: enabled
    ports:
    - port: ${METRICS_PORT}
      protocol: TCP
`,
    'config/network-policy/allow-webhook-traffic.yaml': `# For managers that serve webhooks: lets anything connect to the webhook server's pod port ${WEBHOOK_PORT}.
# The API server calls webhooks through the webhook Service, and no namespaceSelector matches the API server
# (kubebuilder v4.15's version allowed the Service port 443 from "webhook: enabled" namespaces, which blocks
# admission under an enforcing CNI; kubebuilder #5906). A namespaceSelector on a webhook configuration
# restricts which objects' admission requests are sent, not network traffic.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  labels:
${labels}
  name: allow-webhook-traffic
  namespace: system
spec:
  podSelector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${p.projectName}
  policyTypes:
  - Ingress
  ingress:
  - ports:
    - port: ${WEBHOOK_PORT}
      protocol: TCP
`,
  };
}

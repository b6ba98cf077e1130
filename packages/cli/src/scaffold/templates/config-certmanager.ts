/**
 * `config/certmanager/`: a self-signed Issuer and the metrics Certificate. Generated in every project (kubebuilder
 * only writes it along with a webhook, leaving its metrics-certificate steps with nothing to point at).
 */
import { METRICS_SECRET, commonLabels, type ProjectParams } from './params.js';

export function configCertmanager(p: ProjectParams): Record<string, string> {
  const labels = commonLabels(p, '    ');
  return {
    'config/certmanager/kustomization.yaml': `resources:
- issuer.yaml
- certificate-metrics.yaml

configurations:
- kustomizeconfig.yaml
`,
    'config/certmanager/kustomizeconfig.yaml': `# Tells kustomize that a Certificate's spec.issuerRef.name refers to an Issuer, so the namePrefix that renames
# the Issuer renames the reference too.
nameReference:
- kind: Issuer
  group: cert-manager.io
  fieldSpecs:
  - kind: Certificate
    group: cert-manager.io
    path: spec/issuerRef/name
`,
    'config/certmanager/issuer.yaml': `# A self-signed Issuer (cert-manager.io/v1): enough for Prometheus to pin the certificate it issues. Point
# certificate-metrics.yaml at your own Issuer or ClusterIssuer to chain to your CA instead.
apiVersion: cert-manager.io/v1
kind: Issuer
metadata:
  labels:
${labels}
  name: selfsigned-issuer
  namespace: system
spec:
  selfSigned: {}
`,
    'config/certmanager/certificate-metrics.yaml': `# The metrics server's certificate. cert-manager writes it (ca.crt, tls.crt, tls.key) to the Secret
# ${METRICS_SECRET}, which [METRICS-WITH-CERTS] mounts into the manager and [PROMETHEUS-WITH-CERTS] reads.
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  labels:
${labels}
  name: metrics-certs  # the replacements in config/default select the Certificate by this name
  namespace: system
spec:
  dnsNames:
  # SERVICE_NAME and SERVICE_NAMESPACE will be substituted by kustomize (the [CERTMANAGER] replacements in
  # config/default, switched on together with this directory).
  - SERVICE_NAME.SERVICE_NAMESPACE.svc
  - SERVICE_NAME.SERVICE_NAMESPACE.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: selfsigned-issuer
  secretName: ${METRICS_SECRET}
`,
  };
}

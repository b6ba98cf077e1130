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
    'config/certmanager/kustomizeconfig.yaml': `# This configuration is for teaching kustomize how to update name ref substitution
# (the namePrefix must also rewrite the Certificate's issuerRef.name).
nameReference:
- kind: Issuer
  group: cert-manager.io
  fieldSpecs:
  - kind: Certificate
    group: cert-manager.io
    path: spec/issuerRef/name
`,
    'config/certmanager/issuer.yaml': `# The following manifest contains a self-signed issuer CR.
# More information can be found at https://docs.cert-manager.io
# WARNING: Targets CertManager v1.0. Check https://cert-manager.io/docs/installation/upgrading/ for breaking changes.
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
    'config/certmanager/certificate-metrics.yaml': `# The following manifests contain a self-signed issuer CR and a metrics certificate CR.
# More document can be found at https://docs.cert-manager.io
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  labels:
${labels}
  name: metrics-certs  # this name should match the one appeared in kustomizeconfig.yaml
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

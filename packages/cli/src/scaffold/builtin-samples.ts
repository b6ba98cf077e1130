/**
 * A small valid object of each built-in kind a controller can watch, for the test `create api --resource=false`
 * scaffolds: the test creates it and waits for the controller to reconcile it. Each is what a Kubernetes 1.25 API
 * server accepts on its own (required fields set, selectors matching their templates, references that need no
 * other object); `metadata` is added by the scaffold.
 */

const IMAGE = 'registry.k8s.io/pause:3.9';
const podTemplate = {
  metadata: { labels: { app: 'sample' } },
  spec: { containers: [{ name: 'sample', image: IMAGE }] },
};
const jobTemplate = { spec: { restartPolicy: 'Never', containers: [{ name: 'sample', image: IMAGE }] } };
const selector = { matchLabels: { app: 'sample' } };
const webhook = (name: string, path: string) => ({
  name,
  clientConfig: { url: `https://webhook.example.com/${path}` },
  admissionReviewVersions: ['v1'],
  sideEffects: 'None',
  rules: [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['samples'] }],
});
const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }];
const subjects = [{ kind: 'ServiceAccount', name: 'default', namespace: 'default' }];
/** A certificate signing request for CN=sample (public data: the key that signed it is not kept). */
const CSR_PEM = `-----BEGIN CERTIFICATE REQUEST-----
MIHMMHMCAQAwETEPMA0GA1UEAwwGc2FtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEJ/ZjFvB7jNJpxG7XksMtT3sukfHOrLlFpxdrCcqb1YEJG8j/Pkh7JjBx
hBKkG4r0cd7ac/oDfwc0Tf27oG++aaAAMAoGCCqGSM49BAMCA0kAMEYCIQCdhRDl
FCErduvRBrMh/myffmaJ5RNw1Z4d0C4K7CC3ygIhAOvbkdW/CN7XSnZJyuLQA7ZU
pNy7zRd7NgO3AspGbAll
-----END CERTIFICATE REQUEST-----
`;

/** The fields of a sample per `apiVersion/Kind` (those valid with metadata alone have `{}`). */
const SAMPLES: Record<string, Record<string, unknown>> = {
  'v1/ConfigMap': { data: { key: 'value' } },
  'v1/Endpoints': { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }] },
  'v1/Event': {
    involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'sample' },
    reason: 'Sample',
    message: 'a sample event',
    type: 'Normal',
    source: { component: 'sample' },
  },
  'v1/LimitRange': {
    spec: { limits: [{ type: 'Container', default: { cpu: '500m' }, defaultRequest: { cpu: '100m' } }] },
  },
  'v1/Namespace': {},
  'v1/Node': {},
  'v1/PersistentVolumeClaim': { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
  'v1/PersistentVolume': {
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/sample' } },
  },
  'v1/Pod': { spec: { containers: [{ name: 'sample', image: IMAGE }] } },
  'v1/PodTemplate': { template: podTemplate },
  'v1/ReplicationController': { spec: { replicas: 0, selector: { app: 'sample' }, template: podTemplate } },
  'v1/ResourceQuota': { spec: { hard: { pods: '10' } } },
  'v1/Secret': { stringData: { key: 'value' } },
  'v1/ServiceAccount': {},
  'v1/Service': { spec: { selector: { app: 'sample' }, ports: [{ port: 80 }] } },
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': {
    webhooks: [webhook('m.sample.example.com', 'mutate')],
  },
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': {
    webhooks: [webhook('v.sample.example.com', 'validate')],
  },
  'apiregistration.k8s.io/v1/APIService': {
    spec: {
      group: 'sample.example.com',
      version: 'v1',
      groupPriorityMinimum: 100,
      versionPriority: 10,
      service: { namespace: 'default', name: 'sample' },
      insecureSkipTLSVerify: true,
    },
  },
  'apps/v1/ControllerRevision': { revision: 1, data: { spec: { template: podTemplate } } },
  'apps/v1/DaemonSet': { spec: { selector, template: podTemplate } },
  'apps/v1/Deployment': { spec: { replicas: 0, selector, template: podTemplate } },
  'apps/v1/ReplicaSet': { spec: { replicas: 0, selector, template: podTemplate } },
  'apps/v1/StatefulSet': { spec: { replicas: 0, serviceName: 'sample', selector, template: podTemplate } },
  'autoscaling/v1/HorizontalPodAutoscaler': {
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sample' }, maxReplicas: 3 },
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sample' }, maxReplicas: 3 },
  },
  'autoscaling/v2beta2/HorizontalPodAutoscaler': {
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'sample' }, maxReplicas: 3 },
  },
  'batch/v1/CronJob': {
    spec: { schedule: '*/5 * * * *', suspend: true, jobTemplate: { spec: { template: jobTemplate } } },
  },
  'batch/v1/Job': { spec: { suspend: true, template: jobTemplate } },
  'certificates.k8s.io/v1/CertificateSigningRequest': {
    spec: {
      request: Buffer.from(CSR_PEM).toString('base64'),
      signerName: 'example.com/sample',
      usages: ['digital signature'],
    },
  },
  'coordination.k8s.io/v1/Lease': { spec: { holderIdentity: 'sample', leaseDurationSeconds: 15 } },
  'discovery.k8s.io/v1/EndpointSlice': {
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.1'] }],
    ports: [{ port: 80, protocol: 'TCP' }],
  },
  'events.k8s.io/v1/Event': {
    eventTime: '2026-01-01T00:00:00.000000Z',
    reportingController: 'example.com/sample',
    reportingInstance: 'sample-1',
    action: 'Sampling',
    reason: 'Sample',
    regarding: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'sample' },
    note: 'a sample event',
    type: 'Normal',
  },
  'flowcontrol.apiserver.k8s.io/v1beta1/PriorityLevelConfiguration': {
    spec: { type: 'Limited', limited: { assuredConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
  },
  'flowcontrol.apiserver.k8s.io/v1beta2/PriorityLevelConfiguration': {
    spec: { type: 'Limited', limited: { assuredConcurrencyShares: 1, limitResponse: { type: 'Reject' } } },
  },
  'flowcontrol.apiserver.k8s.io/v1beta1/FlowSchema': {
    spec: {
      priorityLevelConfiguration: { name: 'global-default' },
      matchingPrecedence: 9000,
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'sample' } }],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
        },
      ],
    },
  },
  'flowcontrol.apiserver.k8s.io/v1beta2/FlowSchema': {
    spec: {
      priorityLevelConfiguration: { name: 'global-default' },
      matchingPrecedence: 9000,
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: 'sample' } }],
          nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
        },
      ],
    },
  },
  'networking.k8s.io/v1/IngressClass': { spec: { controller: 'example.com/sample' } },
  'networking.k8s.io/v1/Ingress': { spec: { defaultBackend: { service: { name: 'sample', port: { number: 80 } } } } },
  'networking.k8s.io/v1/NetworkPolicy': { spec: { podSelector: selector, policyTypes: ['Ingress'] } },
  'node.k8s.io/v1/RuntimeClass': { handler: 'sample' },
  'policy/v1/PodDisruptionBudget': { spec: { minAvailable: 1, selector } },
  'rbac.authorization.k8s.io/v1/ClusterRole': { rules },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects,
  },
  'rbac.authorization.k8s.io/v1/Role': { rules },
  'rbac.authorization.k8s.io/v1/RoleBinding': {
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects,
  },
  'scheduling.k8s.io/v1/PriorityClass': { value: 1000, description: 'a sample priority' },
  'storage.k8s.io/v1/CSIDriver': { spec: { attachRequired: false } },
  'storage.k8s.io/v1/CSINode': { spec: { drivers: [] } },
  'storage.k8s.io/v1/CSIStorageCapacity': { storageClassName: 'sample', capacity: '10Gi' },
  'storage.k8s.io/v1beta1/CSIStorageCapacity': { storageClassName: 'sample', capacity: '10Gi' },
  'storage.k8s.io/v1/StorageClass': { provisioner: 'example.com/sample' },
  'storage.k8s.io/v1/VolumeAttachment': {
    spec: { attacher: 'sample.csi.example.com', nodeName: 'sample', source: { persistentVolumeName: 'sample' } },
  },
};

/**
 * A sample object of a built-in kind (`apiVersion` as objects carry it), named `name` (in `namespace` when given),
 * or undefined for a kind without one. A CustomResourceDefinition's name must be its plural and group, so it has
 * its own.
 */
export function builtinSample(
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
): Record<string, unknown> | undefined {
  const metadata = { name, ...(namespace ? { namespace } : {}) };
  if (apiVersion === 'apiextensions.k8s.io/v1' && kind === 'CustomResourceDefinition') {
    return {
      apiVersion,
      kind,
      metadata: { name: 'samples.sample.example.com' },
      spec: {
        group: 'sample.example.com',
        names: { plural: 'samples', kind: 'Sample' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    };
  }
  if (apiVersion === 'storage.k8s.io/v1' && kind === 'CSIDriver')
    return { apiVersion, kind, metadata: { name: 'sample.csi.example.com' }, ...SAMPLES[`${apiVersion}/${kind}`] };
  const fields = SAMPLES[`${apiVersion}/${kind}`];
  return fields && { apiVersion, kind, metadata, ...structuredClone(fields) };
}

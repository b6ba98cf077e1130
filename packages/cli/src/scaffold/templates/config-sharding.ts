/**
 * `config/sharding/`: the manager as a ring of shards (timebertt/kubernetes-controller-sharding's protocol, which
 * `ctrlmetrics/sharding` implements): the ControllerRing API, the sharder (a Deployment of the project's image running
 * `dist/sharder.js`, its Service, serving certificate and RBAC) and what a shard needs beyond the manager's own
 * rules. `config/default/manager_sharding_patch.yaml` makes the manager a shard. All of it is switched on with
 * `ctrlmetrics edit --enable sharding`, together with the [SHARDING] replacements in config/default that carry the
 * final (prefixed) names into the Deployments and the certificate.
 *
 * The ring itself (a ControllerRing) is not in the build: kubectl cannot apply an object of a CRD it creates in the
 * same apply ("ensure CRDs are installed first"), so the sharder creates and updates it at start (src/sharder.ts),
 * named after the manager's Deployment.
 */
import { stringify } from 'yaml';
import { controllerRingCrd } from 'ctrlmetrics/internal';
import { HEALTH_PORT, METRICS_PORT, WEBHOOK_PORT, commonLabels, type ProjectParams } from './params.js';
import { MANAGER_NODE_OPTIONS } from './config-manager.js';

/** The ring is named after the manager's Deployment (`<project>-controller-manager` once kustomize prefixed it). */
export const RING_SOURCE = 'controller-manager';
/** The Service in front of the sharder's webhook server. */
export const SHARDER_SERVICE = 'sharder-webhook-service';
/** cert-manager's Secret with the sharder's serving certificate (not prefixed: no Secret object in the build). */
export const SHARDER_SECRET = 'sharder-webhook-server-cert';
/** Where the sharder reads its serving certificate (controller-runtime's default webhook certificate folder). */
export const SHARDER_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
/** The shards the manager's Deployment runs when sharding is on. */
export const SHARD_REPLICAS = 3;

type Replacement = {
  source: Record<string, string>;
  targets: Array<{ select: Record<string, string>; fieldPaths: string[]; options?: Record<string, unknown> }>;
};

/**
 * The [SHARDING] replacements of config/default, written once so the template and `ctrlmetrics edit` agree on them:
 * the sharder's Service name and namespace into its certificate's DNS names and its `WEBHOOK_SERVICE_NAME`, the
 * manager Deployment's final name (the ring's) into both Deployments' `SHARDING_RING`, the manager's image (set in
 * config/manager) into the sharder's.
 */
export function shardingReplacements(): Replacement[] {
  // fresh objects for every use: YAML would write a shared one as an anchor and its aliases
  const certificate = () => ({
    kind: 'Certificate',
    group: 'cert-manager.io',
    version: 'v1',
    name: 'sharder-serving-cert',
  });
  const sharder = () => ({ kind: 'Deployment', group: 'apps', version: 'v1', name: 'sharder' });
  const manager = () => ({ kind: 'Deployment', group: 'apps', version: 'v1', name: 'controller-manager' });
  const dnsNames = () => ['spec.dnsNames.0', 'spec.dnsNames.1'];
  return [
    {
      source: { kind: 'Service', version: 'v1', name: SHARDER_SERVICE, fieldPath: 'metadata.name' },
      targets: [
        { select: certificate(), fieldPaths: dnsNames(), options: { delimiter: '.', index: 0, create: true } },
        {
          select: sharder(),
          fieldPaths: ['spec.template.spec.containers.[name=sharder].env.[name=WEBHOOK_SERVICE_NAME].value'],
        },
      ],
    },
    {
      source: { kind: 'Service', version: 'v1', name: SHARDER_SERVICE, fieldPath: 'metadata.namespace' },
      targets: [{ select: certificate(), fieldPaths: dnsNames(), options: { delimiter: '.', index: 1, create: true } }],
    },
    {
      source: { kind: 'Deployment', group: 'apps', version: 'v1', name: RING_SOURCE, fieldPath: 'metadata.name' },
      targets: [
        {
          select: manager(),
          fieldPaths: ['spec.template.spec.containers.[name=manager].env.[name=SHARDING_RING].value'],
        },
        {
          select: sharder(),
          fieldPaths: ['spec.template.spec.containers.[name=sharder].env.[name=SHARDING_RING].value'],
        },
      ],
    },
    {
      source: {
        kind: 'Deployment',
        group: 'apps',
        version: 'v1',
        name: 'controller-manager',
        fieldPath: 'spec.template.spec.containers.[name=manager].image',
      },
      targets: [{ select: sharder(), fieldPaths: ['spec.template.spec.containers.[name=sharder].image'] }],
    },
  ];
}

/** True when a replacement entry is one of {@link shardingReplacements} (by its source). */
export function isShardingReplacement(entry: unknown): boolean {
  const source = (entry as { source?: { name?: unknown; fieldPath?: unknown } } | null)?.source;
  if (!source) return false;
  return shardingReplacements().some((r) => r.source.name === source.name && r.source.fieldPath === source.fieldPath);
}

/** The replacements as config/default's template holds them: commented out. */
export function commentedShardingReplacements(): string {
  return stringify(shardingReplacements(), { lineWidth: 0, indentSeq: false })
    .trimEnd()
    .split('\n')
    .map((l) => `#${l}`)
    .join('\n');
}

/** The patch that makes the manager a shard (config/default/manager_sharding_patch.yaml). */
export function managerShardingPatch(): string {
  return `# [SHARDING] The manager as a ring of ${SHARD_REPLICAS} shards: each pod holds a Lease of its own named after the pod
# (POD_NAME), caches and reconciles only the objects the sharder labelled for it, and hands them over when it stops.
# Leader election is off: a shard's Lease takes its place. SHARDING_RING, the ring's name, is this Deployment's
# (filled in by the [SHARDING] replacements); the sharder creates the ring.
- op: replace
  path: /spec/replicas
  value: ${SHARD_REPLICAS}
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --leader-elect=false
- op: add
  path: /spec/template/spec/containers/0/args/-
  value: --sharding-ring=$(SHARDING_RING)
- op: add
  path: /spec/template/spec/containers/0/env/-
  value:
    name: POD_NAME
    valueFrom:
      fieldRef:
        fieldPath: metadata.name
- op: add
  path: /spec/template/spec/containers/0/env/-
  value:
    name: SHARDING_RING
    value: RING_NAME
`;
}

export function configSharding(p: ProjectParams): Record<string, string> {
  const labels = commonLabels(p, '    ');
  const podLabels = `        control-plane: sharder\n        app.kubernetes.io/name: ${p.projectName}`;
  return {
    'config/sharding/kustomization.yaml': `# [SHARDING] The sharder and the project's ControllerRing (sharding.timebertt.dev/v1alpha1). Switched on with
# \`ctrlmetrics edit --enable sharding\`, which also makes the manager a shard (manager_sharding_patch.yaml in
# config/default). Needs cert-manager (the sharder's serving certificate).
resources:
- controllerring_crd.yaml
- rbac.yaml
- sharder.yaml
- service.yaml
- certificate.yaml

configurations:
- kustomizeconfig.yaml
`,
    'config/sharding/kustomizeconfig.yaml': `# Tells kustomize that a Certificate's spec.issuerRef.name refers to an Issuer, so the namePrefix that renames
# the Issuer (config/certmanager) renames the reference too.
nameReference:
- kind: Issuer
  group: cert-manager.io
  fieldSpecs:
  - kind: Certificate
    group: cert-manager.io
    path: spec/issuerRef/name
`,
    'config/sharding/controllerring_crd.yaml': `# The ControllerRing API of timebertt/kubernetes-controller-sharding, which the sharder serves.
${stringify(controllerRingCrd(), { lineWidth: 0 })}`,
    'config/sharding/rbac.yaml': `# The sharder: its ring (which it creates), the shards' Leases, the ring's kinds (listed as metadata, relabelled),
# its webhook configuration, its own leader election and its metrics endpoint's authentication. List your ring's
# kinds (src/sharder.ts) in the last rules of sharder-role and shard-role.
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
${labels}
  name: sharder
  namespace: system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
${labels}
  name: sharder-role
rules:
- apiGroups:
  - sharding.timebertt.dev
  resources:
  - controllerrings
  verbs:
  - get
  - list
  - watch
  - create
  - update
- apiGroups:
  - sharding.timebertt.dev
  resources:
  - controllerrings/status
  verbs:
  - update
  - patch
- apiGroups:
  - coordination.k8s.io
  resources:
  - leases
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - admissionregistration.k8s.io
  resources:
  - mutatingwebhookconfigurations
  verbs:
  - get
  - create
  - update
  - patch
  - delete
- apiGroups:
  - ""
  resources:
  - namespaces
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - ""
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - authentication.k8s.io
  resources:
  - tokenreviews
  verbs:
  - create
- apiGroups:
  - authorization.k8s.io
  resources:
  - subjectaccessreviews
  verbs:
  - create
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - list
  - patch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
${labels}
  name: sharder-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: sharder-role
subjects:
- kind: ServiceAccount
  name: sharder
  namespace: system
---
# A shard acknowledges a drain by taking the sharding labels off the object it gives up: a patch of the ring's
# kinds, besides the manager's own rules (its Lease: config/rbac/leader_election_role.yaml).
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  labels:
${labels}
  name: shard-role
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - patch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
${labels}
  name: shard-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: shard-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
`,
    'config/sharding/sharder.yaml': `# The sharder: the assignment webhook on both replicas, the ring's and the Leases' controllers on the leader. It
# runs dist/sharder.js of the manager's image (the [SHARDING] replacements copy the image from config/manager).
apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    control-plane: sharder
${labels}
  name: sharder
  namespace: system
spec:
  replicas: 2
  selector:
    matchLabels:
      control-plane: sharder
      app.kubernetes.io/name: ${p.projectName}
  template:
    metadata:
      annotations:
        kubectl.kubernetes.io/default-container: sharder
      labels:
${podLabels}
    spec:
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
      - command:
        - /nodejs/bin/node
        - /app/dist/sharder.js
        args:
        - --leader-elect
        - --ring=$(SHARDING_RING)
        - --webhook-service=$(POD_NAMESPACE)/$(WEBHOOK_SERVICE_NAME)
        - --webhook-cert-path=${SHARDER_CERT_DIR}
        - --metrics-bind-address=:${METRICS_PORT}
        - --health-probe-bind-address=:${HEALTH_PORT}
        image: controller:latest
        name: sharder
        env:
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: WEBHOOK_SERVICE_NAME
          value: SERVICE_NAME
        - name: SHARDING_RING
          value: RING_NAME
        - name: NODE_OPTIONS
          value: ${MANAGER_NODE_OPTIONS}
        ports:
        - containerPort: ${WEBHOOK_PORT}
          name: webhook-server
          protocol: TCP
        - containerPort: ${METRICS_PORT}
          name: https
          protocol: TCP
        - containerPort: ${HEALTH_PORT}
          name: health
          protocol: TCP
        securityContext:
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities:
            drop:
            - "ALL"
        livenessProbe:
          httpGet:
            path: /healthz
            port: ${HEALTH_PORT}
          initialDelaySeconds: 15
          periodSeconds: 20
        readinessProbe:
          httpGet:
            path: /readyz
            port: ${HEALTH_PORT}
          initialDelaySeconds: 5
          periodSeconds: 10
        # It keeps no cache of the sharded objects (it pages through their metadata), so its memory does not grow
        # with them.
        resources:
          limits:
            cpu: 500m
            memory: 256Mi
          requests:
            cpu: 10m
            memory: 128Mi
        volumeMounts:
        - mountPath: ${SHARDER_CERT_DIR}
          name: cert
          readOnly: true
      volumes:
      - name: cert
        secret:
          secretName: ${SHARDER_SECRET}
      serviceAccountName: sharder
      terminationGracePeriodSeconds: 10
`,
    'config/sharding/service.yaml': `# kube-apiserver calls the sharder's assignment webhook through this Service.
apiVersion: v1
kind: Service
metadata:
  labels:
${labels}
  name: ${SHARDER_SERVICE}
  namespace: system
spec:
  ports:
  - port: 443
    protocol: TCP
    targetPort: ${WEBHOOK_PORT}
  selector:
    control-plane: sharder
    app.kubernetes.io/name: ${p.projectName}
`,
    'config/sharding/certificate.yaml': `# The sharder's serving certificate (Secret ${SHARDER_SECRET}: ca.crt, tls.crt, tls.key). The sharder writes
# ca.crt into the ring's webhook configuration as its caBundle.
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  labels:
${labels}
  name: sharder-serving-cert
  namespace: system
spec:
  dnsNames:
  # SERVICE_NAME and SERVICE_NAMESPACE are substituted by kustomize (the [SHARDING] replacements in config/default).
  - SERVICE_NAME.SERVICE_NAMESPACE.svc
  - SERVICE_NAME.SERVICE_NAMESPACE.svc.cluster.local
  issuerRef:
    kind: Issuer
    name: selfsigned-issuer
  secretName: ${SHARDER_SECRET}
`,
    'config/default/manager_sharding_patch.yaml': managerShardingPatch(),
  };
}

/** `config/manager/`: the manager's Namespace and Deployment (restricted Pod Security Standard). */
import { HEALTH_PORT, METRICS_PORT, commonLabels, type ProjectParams } from './params.js';

/** The manager container's memory settings (measured with bench/manager-memory.ts). */
export const MEMORY = { requestMi: 160, limitMi: 320, maxOldSpaceMb: 160, maxSemiSpaceMb: 1 } as const;

/**
 * The manager container's `NODE_OPTIONS`: V8's heap sized for a small, long-running process (see the comment in
 * manager.yaml). `npm run bench` runs our server with these flags too.
 */
export const MANAGER_NODE_OPTIONS = `--max-old-space-size=${MEMORY.maxOldSpaceMb} --max-semi-space-size=${MEMORY.maxSemiSpaceMb} --v8-pool-size=1`;

export function configManager(p: ProjectParams): Record<string, string> {
  const labels = commonLabels(p, '    ');
  return {
    'config/manager/kustomization.yaml': `resources:
- manager.yaml
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
images:
- name: controller
  newName: controller
  newTag: latest
`,
    'config/manager/manager.yaml': `apiVersion: v1
kind: Namespace
metadata:
  labels:
    control-plane: controller-manager
${labels}
  name: system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: system
  labels:
    control-plane: controller-manager
${labels}
spec:
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${p.projectName}
  replicas: 1
  template:
    metadata:
      annotations:
        kubectl.kubernetes.io/default-container: manager
      labels:
        control-plane: controller-manager
        app.kubernetes.io/name: ${p.projectName}
    spec:
      # Meets the "restricted" Pod Security Standard (non-root, seccomp RuntimeDefault, no privilege escalation,
      # all capabilities dropped), so the namespace may enforce it.
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
      # The image's entrypoint is node; the script is part of the command so that flags patched in at
      # args/0 (--metrics-bind-address) reach the manager, not node.
      - command:
        - /nodejs/bin/node
        - /app/dist/main.js
        args:
        - --leader-elect
        - --health-probe-bind-address=:${HEALTH_PORT}
        image: controller:latest
        name: manager
        ports:
        # Declared (kubebuilder does not) so PodMonitors and named target ports can use it.
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
        # Sized from measurement (ctrlmetrics' docs/performance-notes.md, "The generated manager's memory"): with one
        # controller, 300 ConfigMaps being updated and scraped, RSS is ~140Mi once synced and peaks at ~172Mi on
        # Node 24, so the limit keeps the peak under 60% of it. Raise both with the number of cached objects.
        resources:
          limits:
            cpu: 500m
            memory: ${MEMORY.limitMi}Mi
          requests:
            cpu: 10m
            memory: ${MEMORY.requestMi}Mi
        env:
        # V8's old generation capped well below the limit (the rest of the RSS is code, the young generation and
        # buffers, ~100Mi), so the heap is collected harder before the container is OOM-killed; its young
        # generation kept at its 1Mi starting size instead of growing to 16Mi twice over under steady work such as
        # scrapes (-15Mi of peak RSS in the measurement above); one V8 helper thread, not four, as the container
        # has at most half a CPU (-5Mi more).
        - name: NODE_OPTIONS
          value: ${MANAGER_NODE_OPTIONS}
        volumeMounts: []
      volumes: []
      serviceAccountName: controller-manager
      terminationGracePeriodSeconds: 10
`,
  };
}

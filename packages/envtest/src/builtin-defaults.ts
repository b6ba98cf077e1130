/**
 * The defaults kube-apiserver 1.25 fills into built-in objects when it decodes them (the `SetDefaults_*` functions
 * of core/v1, apps/v1, batch/v1, autoscaling/v2, storage/v1 and scheduling/v1, applied to every embedded type as its generated
 * defaulters do); what a resource's strategy adds on create is the strategy's (strategies/). The OpenAPI
 * documents carry none of these: they are written here from kube's defaulting rules, and the suite
 * test/authority/builtin-workloads.suite.ts holds them to a real server's answers.
 *
 * Defaults fill only what is absent, so applying them to an object already defaulted changes nothing.
 */
import type { KubeObject } from './types.js';
import { isRecord, type JsonObject } from './json.js';

type Obj = JsonObject;

const isObj = isRecord;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** A probe's defaults (`SetDefaults_Probe`, and an HTTP GET's scheme). */
function defaultProbe(p: unknown): void {
  if (!isObj(p)) return;
  p.timeoutSeconds ??= 1;
  p.periodSeconds ??= 10;
  p.successThreshold ??= 1;
  p.failureThreshold ??= 3;
  if (isObj(p.httpGet)) p.httpGet.scheme ??= 'HTTP';
}

function defaultContainer(c: Obj): void {
  // a struct, not a pointer, in kube's types: always written, `{}` when empty
  c.resources ??= {};
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  const image = String(c.image ?? '');
  const tagged = /:[^/:]+$/.test(image.split('@')[0]);
  c.imagePullPolicy ??= image.includes('@')
    ? 'IfNotPresent'
    : !tagged || image.endsWith(':latest')
      ? 'Always'
      : 'IfNotPresent';
  for (const p of objects(c.ports)) p.protocol ??= 'TCP';
  for (const e of objects(c.env))
    if (isObj(e.valueFrom) && isObj(e.valueFrom.fieldRef)) e.valueFrom.fieldRef.apiVersion ??= 'v1';
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

/** The file mode kube gives projected files that name none (0644). */
const DEFAULT_MODE = 420;

function defaultVolume(v: Obj): void {
  for (const source of ['configMap', 'secret', 'downwardAPI', 'projected'])
    if (isObj(v[source])) v[source].defaultMode ??= DEFAULT_MODE;
  if (isObj(v.downwardAPI))
    for (const i of objects(v.downwardAPI.items)) if (isObj(i.fieldRef)) i.fieldRef.apiVersion ??= 'v1';
  if (isObj(v.hostPath)) v.hostPath.type ??= '';
}

/** A pod spec's defaults, as in a pod template (what a Deployment or Job stores). */
export function defaultPodSpec(ps: unknown): void {
  if (!isObj(ps)) return;
  ps.restartPolicy ??= 'Always';
  ps.terminationGracePeriodSeconds ??= 30;
  ps.dnsPolicy ??= 'ClusterFirst';
  ps.securityContext ??= {};
  ps.schedulerName ??= 'default-scheduler';
  // the deprecated `serviceAccount` is v1's alias of `serviceAccountName`: kube's conversion reads it when the name
  // is missing and writes the name into it
  if (!ps.serviceAccountName && typeof ps.serviceAccount === 'string' && ps.serviceAccount)
    ps.serviceAccountName = ps.serviceAccount;
  if (ps.serviceAccountName) ps.serviceAccount = ps.serviceAccountName;
  for (const c of [...objects(ps.containers), ...objects(ps.initContainers)]) defaultContainer(c);
  for (const v of objects(ps.volumes)) defaultVolume(v);
}

function defaultPodTemplate(template: unknown): void {
  if (isObj(template)) defaultPodSpec(template.spec);
}

function defaultClaim(pvc: Obj): void {
  const spec = (pvc.spec = isObj(pvc.spec) ? pvc.spec : {});
  spec.volumeMode ??= 'Filesystem';
  const status = (pvc.status = isObj(pvc.status) ? pvc.status : {});
  status.phase ??= 'Pending';
}

/** An HPA's scaling rules with kube's defaults in what is not given: stabilization window, select policy, policies. */
function scalingRules(given: unknown, stabilizationWindowSeconds: number, policies: Obj[]): Obj {
  const rules = isObj(given) ? given : {};
  return {
    stabilizationWindowSeconds: rules.stabilizationWindowSeconds ?? stabilizationWindowSeconds,
    selectPolicy: rules.selectPolicy ?? 'Max',
    policies: Array.isArray(rules.policies) && rules.policies.length ? rules.policies : policies,
  };
}

/** The `spec` of `o`, made an object if it is absent. */
function specOf(o: KubeObject): Obj {
  return (o.spec = isObj(o.spec) ? o.spec : {});
}

/** A workload's update strategy with its type defaulted and, for a rolling update, `rollingUpdate` filled in. */
function rollingStrategy(given: unknown, rollingUpdate: Obj): Obj {
  const strategy = isObj(given) ? given : {};
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate')
    strategy.rollingUpdate = { ...rollingUpdate, ...(isObj(strategy.rollingUpdate) ? strategy.rollingUpdate : {}) };
  return strategy;
}

/** The status of `o`, made an object if it is absent. */
function statusOf(o: KubeObject): Obj {
  return (o.status = isObj(o.status) ? o.status : {});
}

/** Fills in one resource's defaults, in place. */
type Defaulter = (o: KubeObject) => void;

/** The defaulters by resource (`<group>/<plural>`, a core resource as `/<plural>`), as kube's scheme runs them. */
const DEFAULTERS: ReadonlyMap<string, Defaulter> = new Map<string, Defaulter>([
  [
    'apps/deployments',
    (o) => {
      const s = specOf(o);
      s.replicas ??= 1;
      s.strategy = rollingStrategy(s.strategy, { maxUnavailable: '25%', maxSurge: '25%' });
      s.revisionHistoryLimit ??= 10;
      s.progressDeadlineSeconds ??= 600;
      defaultPodTemplate(s.template);
    },
  ],
  [
    'apps/statefulsets',
    (o) => {
      const s = specOf(o);
      s.replicas ??= 1;
      s.podManagementPolicy ??= 'OrderedReady';
      s.updateStrategy = rollingStrategy(s.updateStrategy, { partition: 0 });
      s.revisionHistoryLimit ??= 10;
      defaultPodTemplate(s.template);
      for (const claim of objects(s.volumeClaimTemplates)) defaultClaim(claim);
    },
  ],
  [
    'apps/daemonsets',
    (o) => {
      const s = specOf(o);
      s.updateStrategy = rollingStrategy(s.updateStrategy, { maxUnavailable: 1, maxSurge: 0 });
      s.revisionHistoryLimit ??= 10;
      defaultPodTemplate(s.template);
    },
  ],
  [
    'apps/replicasets',
    (o) => {
      const s = specOf(o);
      s.replicas ??= 1;
      defaultPodTemplate(s.template);
    },
  ],
  [
    '/replicationcontrollers',
    (o) => {
      const s = specOf(o);
      s.replicas ??= 1;
      // an RC without a selector or labels takes its template's labels for both
      const labels =
        isObj(s.template) && isObj(s.template.metadata) && isObj(s.template.metadata.labels)
          ? s.template.metadata.labels
          : undefined;
      if (labels && !(isObj(s.selector) && Object.keys(s.selector).length)) s.selector = { ...labels };
      const meta = (o.metadata = isObj(o.metadata) ? o.metadata : {});
      if (labels && !(isObj(meta.labels) && Object.keys(meta.labels).length)) meta.labels = { ...labels };
      defaultPodTemplate(s.template);
    },
  ],
  [
    '/pods',
    (o) => {
      const s = specOf(o);
      defaultPodSpec(s);
      // a pod's own defaults (not a template's): requests default to the limits given, service links are on
      for (const c of [...objects(s.containers), ...objects(s.initContainers)]) {
        const resources = isObj(c.resources) ? c.resources : (c.resources = {});
        if (isObj(resources.limits))
          resources.requests = { ...resources.limits, ...(isObj(resources.requests) ? resources.requests : {}) };
      }
      s.enableServiceLinks ??= true;
    },
  ],
  ['/podtemplates', (o) => defaultPodTemplate(o.template)],
  [
    'batch/jobs',
    (o) => {
      const s = specOf(o);
      if (s.completions === undefined && s.parallelism === undefined) {
        s.completions = 1;
        s.parallelism = 1;
      }
      s.parallelism ??= 1;
      s.backoffLimit ??= 6;
      s.completionMode ??= 'NonIndexed';
      s.suspend ??= false;
      defaultPodTemplate(s.template);
    },
  ],
  [
    'batch/cronjobs',
    (o) => {
      const s = specOf(o);
      s.concurrencyPolicy ??= 'Allow';
      s.suspend ??= false;
      s.successfulJobsHistoryLimit ??= 3;
      s.failedJobsHistoryLimit ??= 1;
      if (isObj(s.jobTemplate) && isObj(s.jobTemplate.spec)) defaultPodTemplate(s.jobTemplate.spec.template);
    },
  ],
  [
    'autoscaling/horizontalpodautoscalers',
    (o) => {
      const s = specOf(o);
      s.minReplicas ??= 1;
      // without metrics an HPA scales on CPU at 80 % of the pods' requests
      if (!Array.isArray(s.metrics) || !s.metrics.length)
        s.metrics = [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
        ];
      // a behavior, once given, has every rule filled in (kube's GenerateHPAScale{Up,Down}Rules)
      if (isObj(s.behavior)) {
        s.behavior.scaleUp = scalingRules(s.behavior.scaleUp, 0, [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ]);
        s.behavior.scaleDown = scalingRules(s.behavior.scaleDown, 300, [
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ]);
      }
    },
  ],
  ['/services', (o) => void (statusOf(o).loadBalancer ??= {})],
  ['networking.k8s.io/ingresses', (o) => void (statusOf(o).loadBalancer ??= {})],
  ['/persistentvolumeclaims', defaultClaim],
  [
    '/persistentvolumes',
    (o) => {
      const s = specOf(o);
      s.persistentVolumeReclaimPolicy ??= 'Retain';
      s.volumeMode ??= 'Filesystem';
      statusOf(o).phase ??= 'Pending';
    },
  ],
  [
    '/endpoints',
    (o) => {
      for (const subset of objects(o.subsets)) for (const p of objects(subset.ports)) p.protocol ??= 'TCP';
    },
  ],
  [
    'discovery.k8s.io/endpointslices',
    (o) => {
      for (const p of objects(o.ports)) {
        p.name ??= '';
        p.protocol ??= 'TCP';
      }
    },
  ],
  ['scheduling.k8s.io/priorityclasses', (o) => void (o.preemptionPolicy ??= 'PreemptLowerPriority')],
  [
    'storage.k8s.io/storageclasses',
    (o) => {
      o.reclaimPolicy ??= 'Delete';
      o.volumeBindingMode ??= 'Immediate';
    },
  ],
  [
    'storage.k8s.io/csidrivers',
    (o) => {
      const s = specOf(o);
      s.attachRequired ??= true;
      s.podInfoOnMount ??= false;
      s.storageCapacity ??= false;
      s.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
      s.requiresRepublish ??= false;
      s.volumeLifecycleModes ??= ['Persistent'];
    },
  ],
]);

/** Fills in the defaults of a built-in object of `group`/`resource`, in place; a resource without any is left as is. */
export function defaultBuiltin(group: string, resource: string, o: KubeObject): void {
  DEFAULTERS.get(`${group}/${resource}`)?.(o);
}

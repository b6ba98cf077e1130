/**
 * The defaults kube-apiserver 1.25 fills into built-in objects when it decodes them (the `SetDefaults_*` functions
 * of core/v1, apps/v1, batch/v1, autoscaling/v2, storage/v1 and scheduling/v1, applied to every embedded type as its generated
 * defaulters do), and what the workload strategies add on create (a Job's generated selector). The OpenAPI
 * documents carry none of these: they are written here from kube's defaulting rules, and the suite
 * test/authority/builtin-workloads.suite.ts holds them to a real server's answers.
 *
 * Defaults fill only what is absent, so applying them to an object already defaulted changes nothing.
 */
import type { KubeObject } from './types.js';
import { isRecord, type JsonObject } from './json.js';
import { sameQuantity } from 'ctrlmetrics/internal';

type Obj = JsonObject;

const isObj = isRecord;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
/** A resource quantity as JSON holds one (`"500m"`, `2`), else `undefined`. */
const quantity = (v: unknown): string | number | undefined =>
  typeof v === 'string' || typeof v === 'number' ? v : undefined;

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

/** A Job's labels for its pods and its selector (the Job strategy's generated selector, kube 1.25's label names). */
function generateJobSelector(job: KubeObject): void {
  const spec = job.spec;
  if (!isObj(spec) || spec.manualSelector === true) return;
  const uid = String(job.metadata?.uid ?? '');
  const template = (spec.template = isObj(spec.template) ? spec.template : {});
  const meta = (template.metadata = isObj(template.metadata) ? template.metadata : {});
  meta.labels = {
    ...(isObj(meta.labels) ? meta.labels : {}),
    'controller-uid': uid,
    'job-name': String(job.metadata?.name ?? ''),
  };
  spec.selector = { matchLabels: { 'controller-uid': uid } };
}

/**
 * A pod's quality-of-service class, as kube computes it: BestEffort without any request or limit, Guaranteed when
 * every container limits CPU and memory and requests what it limits, else Burstable.
 */
function qosClassOf(spec: Obj): string {
  const containers = [...objects(spec.containers), ...objects(spec.initContainers)];
  const of = (c: Obj, k: 'requests' | 'limits'): Obj =>
    isObj(c.resources) && isObj(c.resources[k]) ? c.resources[k] : {};
  const compute = (r: Obj) => Object.keys(r).filter((k) => k === 'cpu' || k === 'memory');
  if (containers.every((c) => !compute(of(c, 'requests')).length && !compute(of(c, 'limits')).length))
    return 'BestEffort';
  const guaranteed = containers.every((c) => {
    const limits = of(c, 'limits');
    const requests = of(c, 'requests');
    return ['cpu', 'memory'].every((k) => {
      if (limits[k] === undefined) return false;
      if (requests[k] === undefined) return true;
      const [request, limit] = [quantity(requests[k]), quantity(limits[k])];
      return request !== undefined && limit !== undefined && sameQuantity(request, limit);
    });
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
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

/**
 * Fills in the defaults of a built-in object of `group`/`resource`, in place. `creating` is true on create, when
 * the strategies add what they generate.
 */
export function defaultBuiltin(group: string, resource: string, o: KubeObject, creating: boolean): void {
  const spec = isObj(o.spec) ? o.spec : undefined;
  switch (`${group}/${resource}`) {
    case 'apps/deployments': {
      const s = (o.spec = spec ?? {});
      s.replicas ??= 1;
      const strategy = (s.strategy = isObj(s.strategy) ? s.strategy : {});
      strategy.type ||= 'RollingUpdate';
      if (strategy.type === 'RollingUpdate')
        strategy.rollingUpdate = {
          maxUnavailable: '25%',
          maxSurge: '25%',
          ...(isObj(strategy.rollingUpdate) ? strategy.rollingUpdate : {}),
        };
      s.revisionHistoryLimit ??= 10;
      s.progressDeadlineSeconds ??= 600;
      defaultPodTemplate(s.template);
      break;
    }
    case 'apps/statefulsets': {
      const s = (o.spec = spec ?? {});
      s.replicas ??= 1;
      s.podManagementPolicy ??= 'OrderedReady';
      const strategy = (s.updateStrategy = isObj(s.updateStrategy) ? s.updateStrategy : {});
      strategy.type ||= 'RollingUpdate';
      if (strategy.type === 'RollingUpdate')
        strategy.rollingUpdate = { partition: 0, ...(isObj(strategy.rollingUpdate) ? strategy.rollingUpdate : {}) };
      s.revisionHistoryLimit ??= 10;
      defaultPodTemplate(s.template);
      for (const claim of objects(s.volumeClaimTemplates)) defaultClaim(claim);
      break;
    }
    case 'apps/daemonsets': {
      const s = (o.spec = spec ?? {});
      const strategy = (s.updateStrategy = isObj(s.updateStrategy) ? s.updateStrategy : {});
      strategy.type ||= 'RollingUpdate';
      if (strategy.type === 'RollingUpdate')
        strategy.rollingUpdate = {
          maxUnavailable: 1,
          maxSurge: 0,
          ...(isObj(strategy.rollingUpdate) ? strategy.rollingUpdate : {}),
        };
      s.revisionHistoryLimit ??= 10;
      defaultPodTemplate(s.template);
      break;
    }
    case 'apps/replicasets': {
      const s = (o.spec = spec ?? {});
      s.replicas ??= 1;
      defaultPodTemplate(s.template);
      break;
    }
    case '/replicationcontrollers': {
      const s = (o.spec = spec ?? {});
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
      break;
    }
    case '/pods': {
      const s = (o.spec = spec ?? {});
      defaultPodSpec(s);
      // a pod's own defaults (not a template's): requests default to the limits given, service links are on
      for (const c of [...objects(s.containers), ...objects(s.initContainers)]) {
        const resources = isObj(c.resources) ? c.resources : (c.resources = {});
        if (isObj(resources.limits))
          resources.requests = { ...resources.limits, ...(isObj(resources.requests) ? resources.requests : {}) };
      }
      s.enableServiceLinks ??= true;
      // the pod strategy's create: Pending, with the quality of service its resources give it
      if (creating) o.status = { phase: 'Pending', qosClass: qosClassOf(s) };
      break;
    }
    case '/podtemplates':
      defaultPodTemplate(o.template);
      break;
    case 'batch/jobs': {
      const s = (o.spec = spec ?? {});
      if (s.completions === undefined && s.parallelism === undefined) {
        s.completions = 1;
        s.parallelism = 1;
      }
      s.parallelism ??= 1;
      s.backoffLimit ??= 6;
      s.completionMode ??= 'NonIndexed';
      s.suspend ??= false;
      if (creating) generateJobSelector(o);
      defaultPodTemplate(s.template);
      break;
    }
    case 'batch/cronjobs': {
      const s = (o.spec = spec ?? {});
      s.concurrencyPolicy ??= 'Allow';
      s.suspend ??= false;
      s.successfulJobsHistoryLimit ??= 3;
      s.failedJobsHistoryLimit ??= 1;
      if (isObj(s.jobTemplate) && isObj(s.jobTemplate.spec)) defaultPodTemplate(s.jobTemplate.spec.template);
      break;
    }
    case 'autoscaling/horizontalpodautoscalers': {
      const s = (o.spec = spec ?? {});
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
      break;
    }
    case '/services':
    case 'networking.k8s.io/ingresses': {
      const status = (o.status = isObj(o.status) ? o.status : {});
      status.loadBalancer ??= {};
      break;
    }
    case '/persistentvolumeclaims':
      defaultClaim(o);
      break;
    case '/persistentvolumes': {
      const s = (o.spec = spec ?? {});
      s.persistentVolumeReclaimPolicy ??= 'Retain';
      s.volumeMode ??= 'Filesystem';
      const status = (o.status = isObj(o.status) ? o.status : {});
      status.phase ??= 'Pending';
      break;
    }
    case '/endpoints':
      for (const subset of objects(o.subsets)) for (const p of objects(subset.ports)) p.protocol ??= 'TCP';
      break;
    case 'discovery.k8s.io/endpointslices':
      for (const p of objects(o.ports)) {
        p.name ??= '';
        p.protocol ??= 'TCP';
      }
      break;
    case 'scheduling.k8s.io/priorityclasses':
      o.preemptionPolicy ??= 'PreemptLowerPriority';
      break;
    case 'storage.k8s.io/storageclasses':
      o.reclaimPolicy ??= 'Delete';
      o.volumeBindingMode ??= 'Immediate';
      break;
    case 'storage.k8s.io/csidrivers': {
      const s = (o.spec = spec ?? {});
      s.attachRequired ??= true;
      s.podInfoOnMount ??= false;
      s.storageCapacity ??= false;
      s.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
      s.requiresRepublish ??= false;
      s.volumeLifecycleModes ??= ['Persistent'];
      break;
    }
  }
}

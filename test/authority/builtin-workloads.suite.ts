/**
 * Defaults and validation of built-in kinds, as kube-apiserver 1.25 applies them: what a StatefulSet, Deployment,
 * Job, CronJob, Service, PersistentVolumeClaim and Ingress gain on create, and the 422s users meet first (selector
 * required, empty, not matching the template, changed; containers without images; restart policies). Expected
 * values are written from kube's defaulting and validation rules, not read from the authority. Run on the
 * authority (test/authority/builtin-workloads.test.ts) and on a real cluster
 * (test/real-api/builtin-workloads.test.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError, KubeClient } from '../../packages/ctrlmetrics/src/index.js';

/** A JSON document as the API answers it. */
type Doc = Record<string, any>;

/** Where the suite runs: a cluster-admin client, and how to let go of the server. */
export interface WorkloadsTarget {
  admin: KubeClient;
  stop(): Promise<void>;
}

const IMAGE = 'registry.k8s.io/pause:3.9';
const template = (labels: Record<string, string>, extra: Doc = {}) => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: IMAGE }], ...extra },
});

/** The defaults kube gives a pod template's spec with one container named c. */
const DEFAULTED_POD_SPEC = {
  containers: [
    {
      name: 'c',
      image: IMAGE,
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      imagePullPolicy: 'IfNotPresent',
    },
  ],
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  dnsPolicy: 'ClusterFirst',
  securityContext: {},
  schedulerName: 'default-scheduler',
};

export function builtinWorkloadsSuite(
  name: string,
  start: () => Promise<WorkloadsTarget>,
  o: { namespace?: string } = {},
): void {
  const ns = o.namespace ?? 'workloads';
  describe(name, () => {
    let target: WorkloadsTarget;
    let admin: KubeClient;

    before(async () => {
      target = await start();
      admin = target.admin;
      await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      await admin?.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
      await target?.stop();
    });

    const create = (path: string, body: Doc) => admin.create<Doc>(path.replace('NS', ns), body);
    /** The 422 of a write: its message, after the kind and name. */
    const refusal = async (write: Promise<unknown>): Promise<string> => {
      const err = await write.then(
        () => assert.fail('the write was accepted'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof KubeApiError, String(err));
      assert.equal(err.status, 422, err.message);
      return err.message;
    };

    it("a StatefulSet gets its strategy, policies, history limit and its templates' defaults", async () => {
      const sts = await create('/apis/apps/v1/namespaces/NS/statefulsets', {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'web' },
        spec: {
          serviceName: 'web',
          selector: { matchLabels: { app: 'web' } },
          template: template({ app: 'web' }),
          volumeClaimTemplates: [
            {
              metadata: { name: 'data' },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          ],
        },
      });
      assert.equal(sts.spec.replicas, 1);
      assert.equal(sts.spec.podManagementPolicy, 'OrderedReady');
      assert.deepEqual(sts.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
      assert.equal(sts.spec.revisionHistoryLimit, 10);
      assert.deepEqual(sts.spec.template.spec, DEFAULTED_POD_SPEC);
      assert.equal(sts.spec.volumeClaimTemplates[0].spec.volumeMode, 'Filesystem');
      assert.deepEqual(sts.spec.volumeClaimTemplates[0].status, { phase: 'Pending' });
      assert.equal(sts.metadata.generation, 1);
    });

    it('a Deployment gets replicas, its rolling update, history and progress deadline', async () => {
      const d = await create('/apis/apps/v1/namespaces/NS/deployments', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api' },
        spec: { selector: { matchLabels: { app: 'api' } }, template: template({ app: 'api' }) },
      });
      assert.equal(d.spec.replicas, 1);
      assert.deepEqual(d.spec.strategy, {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
      });
      assert.equal(d.spec.revisionHistoryLimit, 10);
      assert.equal(d.spec.progressDeadlineSeconds, 600);
      assert.deepEqual(d.spec.template.spec, DEFAULTED_POD_SPEC);
    });

    it('a Job gets its counts, backoff limit and mode, and a selector generated from its uid', async () => {
      const job = await create('/apis/batch/v1/namespaces/NS/jobs', {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'once' },
        spec: { template: template({}, { restartPolicy: 'Never' }) },
      });
      assert.equal(job.spec.completions, 1);
      assert.equal(job.spec.parallelism, 1);
      assert.equal(job.spec.backoffLimit, 6);
      assert.equal(job.spec.completionMode, 'NonIndexed');
      assert.equal(job.spec.suspend, false);
      const uid = job.metadata.uid;
      assert.deepEqual(job.spec.selector, { matchLabels: { 'controller-uid': uid } });
      assert.equal(job.spec.template.metadata.labels['controller-uid'], uid);
      assert.equal(job.spec.template.metadata.labels['job-name'], 'once');
      assert.equal(job.spec.template.spec.restartPolicy, 'Never');
    });

    it('a CronJob gets its concurrency policy, suspension and history limits', async () => {
      const cj = await create('/apis/batch/v1/namespaces/NS/cronjobs', {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'nightly' },
        spec: {
          schedule: '0 3 * * *',
          jobTemplate: { spec: { template: template({}, { restartPolicy: 'OnFailure' }) } },
        },
      });
      assert.equal(cj.spec.concurrencyPolicy, 'Allow');
      assert.equal(cj.spec.suspend, false);
      assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
      assert.equal(cj.spec.failedJobsHistoryLimit, 1);
      assert.deepEqual(cj.spec.jobTemplate.spec.template.spec, { ...DEFAULTED_POD_SPEC, restartPolicy: 'OnFailure' });
    });

    it('a Service, a PersistentVolumeClaim and an Ingress get theirs', async () => {
      const svc = await create('/api/v1/namespaces/NS/services', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'api' },
        spec: { selector: { app: 'api' }, ports: [{ port: 80 }] },
      });
      assert.equal(svc.spec.type, 'ClusterIP');
      assert.equal(svc.spec.sessionAffinity, 'None');
      assert.deepEqual(svc.spec.ports, [{ port: 80, protocol: 'TCP', targetPort: 80 }]);
      assert.deepEqual(svc.status, { loadBalancer: {} });
      const pvc = await create('/api/v1/namespaces/NS/persistentvolumeclaims', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
      assert.equal(pvc.spec.volumeMode, 'Filesystem');
      assert.deepEqual(pvc.status, { phase: 'Pending' });
      const ing = await create('/apis/networking.k8s.io/v1/namespaces/NS/ingresses', {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'api' },
        spec: {
          rules: [
            {
              host: 'api.example.com',
              http: {
                paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'api', port: { number: 80 } } } }],
              },
            },
          ],
        },
      });
      assert.deepEqual(ing.status, { loadBalancer: {} });
      assert.equal(ing.metadata.generation, 1);
    });

    it('a HorizontalPodAutoscaler gets its minimum, a CPU target without metrics, and a given behavior filled in', async () => {
      const hpa = (name: string, spec: Doc) =>
        create('/apis/autoscaling/v2/namespaces/NS/horizontalpodautoscalers', {
          apiVersion: 'autoscaling/v2',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name },
          spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }, maxReplicas: 5, ...spec },
        });
      const plain = await hpa('plain', {});
      assert.equal(plain.spec.minReplicas, 1);
      assert.deepEqual(plain.spec.metrics, [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
      ]);
      assert.equal(plain.spec.behavior, undefined);
      const behaved = await hpa('behaved', { behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } });
      assert.deepEqual(behaved.spec.behavior, {
        scaleUp: {
          stabilizationWindowSeconds: 0,
          selectPolicy: 'Max',
          policies: [
            { type: 'Pods', value: 4, periodSeconds: 15 },
            { type: 'Percent', value: 100, periodSeconds: 15 },
          ],
        },
        scaleDown: {
          stabilizationWindowSeconds: 60,
          selectPolicy: 'Max',
          policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
        },
      });
    });

    it("autoscaling/v1 HPAs are the v2 objects: one CPU target, the rest in kube's round-trip annotations", async () => {
      const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' };
      const v1 = '/apis/autoscaling/v1/namespaces/NS/horizontalpodautoscalers';
      const v2 = '/apis/autoscaling/v2/namespaces/NS/horizontalpodautoscalers';
      const get = (base: string, name: string) => admin.get<Doc>(`${base.replace('NS', ns)}/${name}`);

      // written in v1 with a CPU target: a v2 Resource metric on cpu with a Utilization target
      const made = await create(v1, {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'v1-cpu' },
        spec: { scaleTargetRef: ref, maxReplicas: 4, targetCPUUtilizationPercentage: 60 },
      });
      assert.equal(made.apiVersion, 'autoscaling/v1');
      assert.deepEqual(made.spec, {
        scaleTargetRef: ref,
        minReplicas: 1,
        maxReplicas: 4,
        targetCPUUtilizationPercentage: 60,
      });
      assert.deepEqual(made.status, { currentReplicas: 0, desiredReplicas: 0 });
      assert.equal(made.metadata.annotations, undefined);
      assert.deepEqual((await get(v2, 'v1-cpu')).spec.metrics, [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ]);

      // written in v1 without one: v2's default, CPU at 80 %, which v1 shows as its target
      await create(v1, {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'v1-bare' },
        spec: { scaleTargetRef: ref, maxReplicas: 2 },
      });
      assert.equal((await get(v1, 'v1-bare')).spec.targetCPUUtilizationPercentage, 80);

      // written in v2 with what v1 has no field for: read in v1, the other metrics and the behavior are annotations
      const memory = {
        type: 'Resource',
        resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } },
      };
      const pods = {
        type: 'Pods',
        pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '10' } },
      };
      const cpu = {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
      };
      const behavior = {
        scaleDown: {
          stabilizationWindowSeconds: 30,
          selectPolicy: 'Min',
          policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }],
        },
      };
      await create(v2, {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'v2-many', annotations: { team: 'a' } },
        spec: { scaleTargetRef: ref, minReplicas: 2, maxReplicas: 9, metrics: [memory, pods, cpu], behavior },
      });
      const read = await get(v1, 'v2-many');
      assert.deepEqual(read.spec, {
        scaleTargetRef: ref,
        minReplicas: 2,
        maxReplicas: 9,
        targetCPUUtilizationPercentage: 70,
      });
      const annotations = read.metadata.annotations;
      assert.deepEqual(Object.keys(annotations).sort(), [
        'autoscaling.alpha.kubernetes.io/behavior',
        'autoscaling.alpha.kubernetes.io/metrics',
        'team',
      ]);
      // v1's metric shape is v2beta1's: metricName, targetAverageValue, targetAverageUtilization
      assert.deepEqual(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/metrics']), [
        { type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } },
        { type: 'Pods', pods: { metricName: 'rps', targetAverageValue: '10' } },
      ]);
      assert.deepEqual(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/behavior']), {
        scaleUp: {
          stabilizationWindowSeconds: 0,
          selectPolicy: 'Max',
          policies: [
            { type: 'Pods', value: 4, periodSeconds: 15 },
            { type: 'Percent', value: 100, periodSeconds: 15 },
          ],
        },
        scaleDown: behavior.scaleDown,
      });

      // the v1 object written back as read, with a new maximum, loses nothing; the annotations are not stored
      await admin.replace(`${v1.replace('NS', ns)}/v2-many`, { ...read, spec: { ...read.spec, maxReplicas: 12 } });
      const after = await get(v2, 'v2-many');
      assert.equal(after.spec.maxReplicas, 12);
      assert.deepEqual(after.spec.metrics, [memory, pods, cpu]);
      assert.deepEqual(after.spec.behavior.scaleDown, behavior.scaleDown);
      assert.deepEqual(after.metadata.annotations, { team: 'a' });

      // a status written in v1 is v2's current metrics
      const status = await admin.replace<Doc>(`${v1.replace('NS', ns)}/v1-cpu/status`, {
        ...made,
        status: { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 55 },
      });
      assert.deepEqual(status.status, { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 55 });
      assert.deepEqual((await get(v2, 'v1-cpu')).status.currentMetrics, [
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 55 } } },
      ]);
    });

    it('a Pod starts Pending with the quality of service its resources give it; requests default to its limits', async () => {
      const pod = (name: string, resources: Doc) =>
        create('/api/v1/namespaces/NS/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { containers: [{ name: 'c', image: IMAGE, resources }] },
        });
      const best = await pod('best-effort', {});
      assert.equal(best.status.phase, 'Pending');
      assert.equal(best.status.qosClass, 'BestEffort');
      assert.equal(best.spec.enableServiceLinks, true);
      assert.equal(best.spec.restartPolicy, 'Always');
      const guaranteed = await pod('guaranteed', { limits: { cpu: '500m', memory: '64Mi' } });
      assert.deepEqual(guaranteed.spec.containers[0].resources, {
        limits: { cpu: '500m', memory: '64Mi' },
        requests: { cpu: '500m', memory: '64Mi' },
      });
      assert.equal(guaranteed.status.qosClass, 'Guaranteed');
      const burstable = await pod('burstable', { requests: { cpu: '100m' }, limits: { cpu: '500m', memory: '64Mi' } });
      assert.deepEqual(burstable.spec.containers[0].resources.requests, { cpu: '100m', memory: '64Mi' });
      assert.equal(burstable.status.qosClass, 'Burstable');
    });

    it("a new Pod gets what kube's admission plugins add: its service account and token volume, tolerations, priority", async () => {
      const pod = (name: string, spec: Doc) =>
        create('/api/v1/namespaces/NS/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { containers: [{ name: 'c', image: IMAGE }], ...spec },
        });
      const plain = await pod('admitted', {});
      assert.equal(plain.spec.serviceAccountName, 'default');
      assert.equal(plain.spec.serviceAccount, 'default');
      const volume = plain.spec.volumes.find((v: Doc) => v.name.startsWith('kube-api-access-'));
      assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.deepEqual(volume.projected, {
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
            },
          },
        ],
        defaultMode: 420,
      });
      assert.deepEqual(plain.spec.containers[0].volumeMounts, [
        { name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ]);
      assert.deepEqual(plain.spec.tolerations, [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ]);
      assert.equal(plain.spec.priority, 0);
      assert.equal(plain.spec.preemptionPolicy, 'PreemptLowerPriority');

      // automounting off: no volume; the pod's own toleration of a key is kept, the other added
      const own = await pod('own-choices', {
        automountServiceAccountToken: false,
        tolerations: [
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 5 },
        ],
      });
      assert.equal(own.spec.volumes, undefined);
      assert.equal(own.spec.containers[0].volumeMounts, undefined);
      assert.deepEqual(
        own.spec.tolerations.map((t: Doc) => [t.key, t.tolerationSeconds]),
        [
          ['node.kubernetes.io/unreachable', 5],
          ['node.kubernetes.io/not-ready', 300],
        ],
      );

      // a missing service account or PriorityClass is a 403
      const forbidden = async (write: Promise<unknown>) => {
        const err = await write.then(
          () => assert.fail('the write was accepted'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof KubeApiError && err.status === 403, String(err));
        return err.message;
      };
      assert.equal(
        await forbidden(pod('no-account', { serviceAccountName: 'nobody' })),
        `pods "no-account" is forbidden: error looking up service account ${ns}/nobody: serviceaccount "nobody" not found`,
      );
      assert.equal(
        await forbidden(pod('no-class', { priorityClassName: 'nope' })),
        'pods "no-class" is forbidden: no PriorityClass with name nope was found',
      );
      // the system classes a cluster creates on start
      const critical = await pod('critical', { priorityClassName: 'system-cluster-critical' });
      assert.equal(critical.spec.priority, 2000000000);
    });

    it("a workload whose selector is missing, empty or does not match its template is refused with kube's causes", async () => {
      const deployment = (name: string, spec: Doc) =>
        create('/apis/apps/v1/namespaces/NS/deployments', {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name },
          spec,
        });
      assert.equal(
        await refusal(
          deployment('mismatch', { selector: { matchLabels: { app: 'a' } }, template: template({ app: 'b' }) }),
        ),
        'Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
      );
      assert.equal(
        await refusal(deployment('unselected', { template: template({ app: 'b' }) })),
        'Deployment.apps "unselected" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`]',
      );
      assert.equal(
        await refusal(deployment('empty', { selector: {}, template: template({ app: 'b' }) })),
        'Deployment.apps "empty" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
      );
      assert.equal(
        await refusal(
          create('/apis/apps/v1/namespaces/NS/statefulsets', {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            metadata: { name: 'mismatch' },
            spec: { serviceName: 's', selector: { matchLabels: { app: 'a' } }, template: template({ app: 'b' }) },
          }),
        ),
        'StatefulSet.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{"app":"b"}: `selector` does not match template `labels`',
      );
    });

    it("a workload's selector cannot change", async () => {
      const path = `/apis/apps/v1/namespaces/${ns}/deployments/api`;
      const current = await admin.get<Doc>(path);
      const changed = {
        ...current,
        spec: {
          ...current.spec,
          selector: { matchLabels: { app: 'other' } },
          template: { ...current.spec.template, metadata: { labels: { app: 'other' } } },
        },
      };
      assert.equal(
        await refusal(admin.replace(path, changed)),
        'Deployment.apps "api" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"other"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
      );
    });

    it('an unknown field at any depth is refused under Strict, reported under Warn and never stored', async () => {
      const typo = (name: string) => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name, lables: { app: 't' } },
        spec: {
          selector: { matchLabels: { app: 't' } },
          template: {
            metadata: { labels: { app: 't' } },
            spec: { containers: [{ name: 'c', image: IMAGE, imagePullPolice: 'Always' }] },
          },
        },
      });
      const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
      const strict = await admin.raw<Doc>('POST', path, { query: { fieldValidation: 'Strict' }, body: typo('strict') });
      assert.equal(strict.status, 400);
      assert.equal(
        strict.body.message,
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "metadata.lables", unknown field "spec.template.spec.containers[0].imagePullPolice"',
      );
      const warned = await admin.raw<Doc>('POST', path, { query: { fieldValidation: 'Warn' }, body: typo('warned') });
      assert.equal(warned.status, 201);
      assert.deepEqual(String(warned.headers.warning).split(/,\s*(?=299)/), [
        '299 - "unknown field \\"metadata.lables\\""',
        '299 - "unknown field \\"spec.template.spec.containers[0].imagePullPolice\\""',
      ]);
      assert.equal(warned.body.metadata.lables, undefined);
      assert.equal(warned.body.spec.template.spec.containers[0].imagePullPolice, undefined);
      assert.equal(warned.body.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    });

    it('a merge or JSON patch is checked for unknown fields in its result: 422 under Strict, warnings under Warn', async () => {
      const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
      await create(path, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'patched' },
        spec: { selector: { matchLabels: { app: 'p' } }, template: template({ app: 'p' }) },
      });
      const patch = (contentType: string, body: unknown, fieldValidation: string) =>
        admin.raw<Doc>('PATCH', `${path}/patched`, { query: { fieldValidation }, contentType, body });
      const merge = { spec: { paused: true, replicaz: 2 } };
      const json = [{ op: 'add', path: '/spec/template/spec/containers/0/imagePullPolice', value: 'Always' }];
      for (const [contentType, body, field] of [
        ['application/merge-patch+json', merge, 'spec.replicaz'],
        ['application/strategic-merge-patch+json', merge, 'spec.replicaz'],
        ['application/json-patch+json', json, 'spec.template.spec.containers[0].imagePullPolice'],
      ] as const) {
        const strict = await patch(contentType, body, 'Strict');
        assert.equal(strict.status, 422, `${contentType}: ${JSON.stringify(strict.body)}`);
        assert.equal(strict.body.reason, 'Invalid');
        // the value is the patched object's JSON, as Go writes it (keys sorted), quoted
        const m = /^ "" is invalid: patch: Invalid value: "(.*)": strict decoding error: (.*)$/s.exec(
          strict.body.message,
        );
        assert.ok(m, strict.body.message);
        assert.equal(m[2], `unknown field "${field}"`);
        const patched = JSON.parse(JSON.parse(`"${m[1]}"`));
        assert.equal(patched.metadata.name, 'patched');
        assert.deepEqual(Object.keys(patched), Object.keys(patched).sort());
        assert.deepEqual(strict.body.details.causes, [
          {
            reason: 'FieldValueInvalid',
            message: strict.body.message.slice(' "" is invalid: patch: '.length),
            field: 'patch',
          },
        ]);

        const warned = await patch(contentType, body, 'Warn');
        assert.equal(warned.status, 200, JSON.stringify(warned.body));
        assert.equal(warned.headers.warning, `299 - "unknown field \\"${field}\\""`);
        assert.equal(
          JSON.stringify(warned.body).includes(field.split('.').at(-1)!),
          false,
          'the unknown field is not stored',
        );
      }
      // an unknown directive is an invalid PatchOptions, before the patch is looked at
      assert.equal((await patch('application/merge-patch+json', merge, 'Loud')).status, 422);
    });

    it("a value of the wrong JSON type is refused as Go's decoder refuses it", async () => {
      const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
      const deployment = (spec: Doc) => ({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'typed' },
        spec: { selector: { matchLabels: { app: 'x' } }, template: template({ app: 'x' }), ...spec },
      });
      const refused = async (body: Doc) => {
        const r = await admin.raw<Doc>('POST', path, { body });
        assert.equal(r.status, 400, JSON.stringify(r.body));
        return r.body.message as string;
      };
      const prefix = 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal';
      assert.equal(
        await refused(deployment({ replicas: '3' })),
        `${prefix} string into Go struct field DeploymentSpec.spec.replicas of type int32`,
      );
      assert.equal(
        await refused(deployment({ replicas: 1.5 })),
        `${prefix} number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32`,
      );
      assert.equal(
        await refused(
          deployment({
            template: { metadata: { labels: { app: 'x' } }, spec: { containers: { name: 'c', image: IMAGE } } },
          }),
        ),
        `${prefix} object into Go struct field PodSpec.spec.template.spec.containers of type []v1.Container`,
      );
      assert.equal(
        await refused(
          deployment({
            template: {
              metadata: { labels: { app: 'x' } },
              spec: { containers: [{ name: 'c', image: IMAGE, ports: [{ containerPort: '80' }] }] },
            },
          }),
        ),
        `${prefix} string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32`,
      );
      assert.equal(
        await refused(deployment({ paused: 'yes' })),
        `${prefix} string into Go struct field DeploymentSpec.spec.paused of type bool`,
      );
    });

    it("pod templates need containers with images and a restart policy their owner allows; a CronJob's name leaves room for its Jobs'", async () => {
      assert.equal(
        await refusal(
          create('/apis/apps/v1/namespaces/NS/deployments', {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'never' },
            spec: {
              selector: { matchLabels: { app: 'n' } },
              template: template({ app: 'n' }, { restartPolicy: 'Never' }),
            },
          }),
        ),
        'Deployment.apps "never" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      );
      assert.equal(
        await refusal(
          create('/apis/apps/v1/namespaces/NS/deployments', {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'imageless' },
            spec: {
              selector: { matchLabels: { app: 'i' } },
              template: { metadata: { labels: { app: 'i' } }, spec: { containers: [{ name: 'c' }] } },
            },
          }),
        ),
        'Deployment.apps "imageless" is invalid: spec.template.spec.containers[0].image: Required value',
      );
      const long = `nightly-${'x'.repeat(45)}`;
      assert.equal(
        await refusal(
          create('/apis/batch/v1/namespaces/NS/cronjobs', {
            apiVersion: 'batch/v1',
            kind: 'CronJob',
            metadata: { name: long },
            spec: {
              schedule: '0 3 * * *',
              jobTemplate: { spec: { template: template({}, { restartPolicy: 'OnFailure' }) } },
            },
          }),
        ),
        `CronJob.batch "${long}" is invalid: metadata.name: Invalid value: "${long}": must be no more than 52 characters`,
      );
      assert.equal(
        await refusal(
          create('/apis/batch/v1/namespaces/NS/jobs', {
            apiVersion: 'batch/v1',
            kind: 'Job',
            metadata: { name: 'forever' },
            spec: { template: template({}) },
          }),
        ),
        'Job.batch "forever" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"',
      );
    });
  });
}

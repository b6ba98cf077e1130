// Server-side apply through a view, as kube-apiserver keeps field ownership: an apply through events.k8s.io/v1 or
// autoscaling/v1 is recorded in that version and its fields; a manager of the other version conflicts in its own
// version's fields (the conflict names them so), a forced apply takes them, and a field the applier no longer applies
// goes — also when its last apply was in the other version. Run against the authority
// (test/authority/view-apply.test.ts) and a real kube-apiserver (test/real-api/view-apply.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError, type KubeClient } from '../../packages/ctrlmetrics/src/index.js';

interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  fieldsV1: Record<string, Record<string, unknown>>;
}
interface Obj {
  metadata: { name: string; labels?: Record<string, string>; managedFields?: Entry[] };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

/** Where the suite runs: a cluster-admin client, and how to let go of the server. */
export interface ViewApplyTarget {
  client: KubeClient;
  stop(): Promise<void>;
}

/** Registers the suite; its objects go to namespace `ns`, which it creates. */
export function viewApplySuite(name: string, start: () => Promise<ViewApplyTarget>, ns: string): void {
  describe(name, () => {
    let target: ViewApplyTarget;
    let client: KubeClient;
    const apply = (path: string, body: unknown, fieldManager: string, force = false) =>
      client.request<Obj>('PATCH', path, {
        body,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager, ...(force ? { force: 'true' } : {}) },
      });
    const conflictOf = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof KubeApiError, 'the apply conflicts');
      return [err.status, err.message];
    };
    const entries = (o: Obj) => (o.metadata.managedFields ?? []).map((e) => [e.manager, e.operation, e.apiVersion]);
    const entryOf = (o: Obj, manager: string) => (o.metadata.managedFields ?? []).find((e) => e.manager === manager);

    before(async () => {
      target = await start();
      client = target.client;
      await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      await target?.stop();
    });

    it("an Event applied through events.k8s.io/v1 is owned there; each version's manager conflicts in its own fields", async () => {
      const path = `/apis/events.k8s.io/v1/namespaces/${ns}/events/applied`;
      const config = {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'applied' },
        eventTime: '2026-12-07T08:00:00.000000Z',
        reportingController: 'recorder',
        reportingInstance: 'recorder-host',
        action: 'Reconcile',
        reason: 'Synced',
        regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'subject', namespace: ns },
        note: 'first note',
        type: 'Normal',
      };
      const created = await apply(path, config, 'recorder');
      assert.deepEqual(entries(created), [['recorder', 'Apply', 'events.k8s.io/v1']]);
      assert.deepEqual(Object.keys(entryOf(created, 'recorder')!.fieldsV1).sort(), [
        'f:action',
        'f:eventTime',
        'f:note',
        'f:reason',
        'f:regarding',
        'f:reportingController',
        'f:reportingInstance',
        'f:type',
      ]);
      const core = await client.get<Obj>(`/api/v1/namespaces/${ns}/events/applied`);
      assert.deepEqual(entries(core), [['recorder', 'Apply', 'events.k8s.io/v1']], 'core/v1 reads the same entry');
      // a core/v1 apply of the message conflicts with the recorder's note: compared in the recorder's version
      const legacy = {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'applied' },
        involvedObject: config.regarding,
        message: 'other note',
      };
      assert.deepEqual(await conflictOf(apply(`/api/v1/namespaces/${ns}/events/applied`, legacy, 'legacy')), [
        409,
        'Apply failed with 1 conflict: conflict with "recorder": .note',
      ]);
      // a core/v1 update of the message takes it; the recorder's apply of its note then conflicts with it in v1's fields
      await client.mergePatch(
        `/api/v1/namespaces/${ns}/events/applied`,
        { message: 'second note' },
        { query: { fieldManager: 'editor' } },
      );
      assert.deepEqual(await conflictOf(apply(path, config, 'recorder')), [
        409,
        'Apply failed with 1 conflict: conflict with "editor" using v1: .message',
      ]);
      // the same configuration with the note as it now is applies cleanly and owns it again
      const again = await apply(path, { ...config, note: 'second note' }, 'recorder');
      assert.ok('f:note' in entryOf(again, 'recorder')!.fieldsV1, 'the recorder co-owns the note it applied');
      assert.equal(entryOf(again, 'recorder')!.apiVersion, 'events.k8s.io/v1');
    });

    it("an HPA applied through autoscaling/v1 is owned in v1's fields; a v2 manager conflicts on its metrics until forced", async () => {
      const v1 = `/apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers/scaled`;
      const v2 = `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers/scaled`;
      const config = {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'scaled', labels: { team: 'a', tier: 'web' } },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          minReplicas: 1,
          maxReplicas: 3,
          targetCPUUtilizationPercentage: 70,
        },
      };
      const created = await apply(v1, config, 'scaler');
      assert.deepEqual(entries(created), [['scaler', 'Apply', 'autoscaling/v1']]);
      assert.deepEqual(Object.keys(entryOf(created, 'scaler')!.fieldsV1['f:spec'] ?? {}).sort(), [
        'f:maxReplicas',
        'f:minReplicas',
        'f:scaleTargetRef',
        'f:targetCPUUtilizationPercentage',
      ]);
      assert.deepEqual(
        entries(await client.get<Obj>(v2)),
        [['scaler', 'Apply', 'autoscaling/v1']],
        'v2 reads the same entry',
      );

      // a v2 update of the metric takes v1's target from the scaler
      const metric = (averageUtilization: number) => [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization } } },
      ];
      const tuned = await client.mergePatch<Obj>(
        v2,
        { spec: { metrics: metric(80) } },
        { query: { fieldManager: 'tuner' } },
      );
      assert.deepEqual(Object.keys(entryOf(tuned, 'tuner')!.fieldsV1['f:spec'] ?? {}), ['f:metrics']);
      assert.equal(entryOf(tuned, 'tuner')!.apiVersion, 'autoscaling/v2');
      assert.equal('f:targetCPUUtilizationPercentage' in (entryOf(tuned, 'scaler')!.fieldsV1['f:spec'] ?? {}), false);

      // applying v1's target back conflicts with the tuner's metrics, named in v2's fields
      assert.deepEqual(await conflictOf(apply(v1, config, 'scaler')), [
        409,
        'Apply failed with 1 conflict: conflict with "tuner" using autoscaling/v2: .spec.metrics',
      ]);
      const forced = await apply(v1, config, 'scaler', true);
      assert.deepEqual(
        entries(forced),
        [['scaler', 'Apply', 'autoscaling/v1']],
        "the forced apply took the tuner's only field",
      );
      assert.equal(forced.spec?.targetCPUUtilizationPercentage, 70);

      // the scaler applies in v2 now, without one of its labels: it goes, though its last apply was in v1
      const inV2 = {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'scaled', labels: { team: 'a' } },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          minReplicas: 1,
          maxReplicas: 3,
          metrics: metric(70),
        },
      };
      const moved = await apply(v2, inV2, 'scaler');
      assert.deepEqual(moved.metadata.labels, { team: 'a' });
      assert.deepEqual(entries(moved), [['scaler', 'Apply', 'autoscaling/v2']]);
      assert.deepEqual(Object.keys(entryOf(moved, 'scaler')!.fieldsV1['f:spec'] ?? {}).sort(), [
        'f:maxReplicas',
        'f:metrics',
        'f:minReplicas',
        'f:scaleTargetRef',
      ]);
      const back = await client.get<Obj>(v1);
      assert.equal(back.spec?.targetCPUUtilizationPercentage, 70);
    });
  });
}

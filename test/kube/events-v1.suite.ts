// events.k8s.io/v1 Events: what the EventsV1Broadcaster writes (as client-go's tools/events), repeats as a series
// (count 2 patched at once, later counts written when the series ends, a deleted event made anew with its series),
// the same events read through core/v1, and bad input dropped. Run against the authority
// (test/kube/events-v1.test.ts) and a real kube-apiserver (test/real-api/events-v1.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { KubeClient, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { EventsV1Broadcaster } from '../../packages/ctrlmetrics/src/exports/client.js';
import { ManualClock } from '../helpers/manual-clock.js';

interface EventV1 extends KubeObject {
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: Record<string, string>;
  related?: Record<string, string>;
  note: string;
  type: string;
}

/** Where the suite runs: a cluster-admin client, and how to let go of the server. */
export interface EventsV1Target {
  client: KubeClient;
  stop(): Promise<void>;
}

/** Registers the suite; the events go to namespace `ns`, which it creates. */
export function eventsV1Suite(name: string, start: () => Promise<EventsV1Target>, ns: string): void {
  describe(name, () => {
    let target: EventsV1Target;
    let client: KubeClient;
    let cm: KubeObject;
    let secret: KubeObject;
    const t0 = Date.parse('2026-12-07T08:00:00Z');
    /** The namespace's events that `controller` reported. */
    const eventsOf = async (controller: string) =>
      (await client.get<{ items: EventV1[] }>(`/apis/events.k8s.io/v1/namespaces/${ns}/events`)).items.filter(
        (e) => e.reportingController === controller,
      );

    before(async () => {
      target = await start();
      client = target.client;
      await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      cm = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        ...(await client.create<KubeObject>(`/api/v1/namespaces/${ns}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'subject' },
        })),
      };
      secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        ...(await client.create<KubeObject>(`/api/v1/namespaces/${ns}/secrets`, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'credentials' },
        })),
      };
    });
    after(async () => {
      await target?.stop();
    });

    it('an event names the regarding and related objects, the action, the reporting controller and instance; core/v1 reads it too', async () => {
      const b = new EventsV1Broadcaster(client, { now: () => t0 + 0.5, clock: new ManualClock() });
      b.recorderFor('memcached').event(cm, secret, 'Normal', 'Rotated', 'RotateCredentials', 'rotated the credentials');
      await b.flush();
      const [ev, ...rest] = await eventsOf('memcached');
      assert.equal(rest.length, 0);
      assert.match(ev.metadata?.name ?? '', /^subject\.[0-9a-f]+$/);
      assert.equal(ev.metadata?.namespace, ns);
      assert.deepEqual(ev.regarding, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'subject',
        namespace: ns,
        uid: cm.metadata?.uid,
        resourceVersion: cm.metadata?.resourceVersion,
      });
      assert.deepEqual(ev.related, {
        apiVersion: 'v1',
        kind: 'Secret',
        name: 'credentials',
        namespace: ns,
        uid: secret.metadata?.uid,
        resourceVersion: secret.metadata?.resourceVersion,
      });
      assert.deepEqual(
        [ev.type, ev.reason, ev.action, ev.note, ev.reportingController, ev.reportingInstance, ev.eventTime, ev.series],
        [
          'Normal',
          'Rotated',
          'RotateCredentials',
          'rotated the credentials',
          'memcached',
          `memcached-${hostname()}`,
          '2026-12-07T08:00:00.000500Z',
          undefined,
        ],
      );
      // the same object through the core API, as kubectl get events shows it
      const core = await client.get<{
        involvedObject: { name: string };
        reason: string;
        message: string;
        reportingComponent: string;
        action: string;
      }>(`/api/v1/namespaces/${ns}/events/${ev.metadata.name}`);
      assert.deepEqual(
        [core.involvedObject.name, core.reason, core.message, core.reportingComponent, core.action],
        ['subject', 'Rotated', 'rotated the credentials', 'memcached', 'RotateCredentials'],
      );
    });

    it('repeats are a series: the second patches count 2 at once, later ones are written when the series ends; then a repeat starts a new event', async () => {
      const clock = new ManualClock();
      let wall = t0;
      const b = new EventsV1Broadcaster(client, { now: () => wall, clock, finishMs: 360_000, refreshMs: 1_800_000 });
      const rec = b.recorderFor('series');
      rec.event(cm, undefined, 'Warning', 'BackOff', 'Reconcile', 'attempt 1');
      await b.flush();
      const [first] = await eventsOf('series');
      wall += 10_000;
      await clock.advance(10_000);
      rec.event(cm, undefined, 'Warning', 'BackOff', 'Reconcile', 'attempt 2'); // the note differs: still isomorphic
      await b.flush();
      let [ev, ...rest] = await eventsOf('series');
      assert.equal(rest.length, 0, 'no second event');
      assert.equal(ev.metadata?.name, first.metadata?.name);
      assert.deepEqual(ev.series, { count: 2, lastObservedTime: '2026-12-07T08:00:10.000000Z' });
      assert.equal(ev.note, 'attempt 1', 'the series keeps the first note');
      for (let i = 3; i <= 5; i++) {
        wall += 10_000;
        await clock.advance(10_000);
        rec.event(cm, undefined, 'Warning', 'BackOff', 'Reconcile', `attempt ${i}`);
      }
      await b.flush();
      assert.equal((await eventsOf('series'))[0].series?.count, 2, 'counted in memory only while the series goes on');
      // another action is another event
      rec.event(cm, undefined, 'Warning', 'BackOff', 'Cleanup', 'cleanup failed');
      await b.flush();
      assert.equal((await eventsOf('series')).length, 2);
      // six minutes without a repeat end the series at the next sweep (every six minutes): its count is written
      await clock.advance(2 * 360_000);
      await b.flush();
      [ev] = (await eventsOf('series')).filter((e) => e.action === 'Reconcile');
      assert.deepEqual(ev.series, { count: 5, lastObservedTime: '2026-12-07T08:00:40.000000Z' });
      // the series is over: the next one is a new event
      wall += 400_000;
      rec.event(cm, undefined, 'Warning', 'BackOff', 'Reconcile', 'attempt 6');
      await b.flush();
      assert.equal((await eventsOf('series')).filter((e) => e.action === 'Reconcile').length, 2);
      await b.shutdown();
    });

    it('a series whose event was deleted is written anew with its count; shutdown writes the running counts', async () => {
      const clock = new ManualClock();
      const b = new EventsV1Broadcaster(client, { now: () => t0, clock });
      const rec = b.recorderFor('recreated');
      rec.event(cm, undefined, 'Normal', 'Synced', 'Reconcile', 'synced');
      await b.flush();
      const [first] = await eventsOf('recreated');
      await client.delete(`/apis/events.k8s.io/v1/namespaces/${ns}/events/${first.metadata!.name}`);
      rec.event(cm, undefined, 'Normal', 'Synced', 'Reconcile', 'synced');
      await b.flush();
      let [ev, ...rest] = await eventsOf('recreated');
      assert.equal(rest.length, 0);
      assert.equal(ev.metadata?.name, first.metadata?.name);
      assert.equal(ev.series?.count, 2);
      rec.event(cm, undefined, 'Normal', 'Synced', 'Reconcile', 'synced');
      await b.shutdown();
      [ev] = await eventsOf('recreated');
      assert.equal(ev.series?.count, 3, 'shutdown wrote the running count');
    });

    it('bad input is dropped, never thrown: an unknown type, no action, an object without kind; a long note is cut to 1 KiB', async () => {
      const b = new EventsV1Broadcaster(client, { now: () => t0, clock: new ManualClock() });
      const rec = b.recorderFor('careful');
      rec.event(cm, undefined, 'Error' as 'Warning', 'Broken', 'Reconcile', 'unknown type');
      rec.event(cm, undefined, 'Normal', 'Synced', '', 'no action');
      rec.event({ metadata: { name: 'x' } }, undefined, 'Normal', 'Synced', 'Reconcile', 'no kind');
      rec.event(cm, undefined, 'Normal', 'Long', 'Reconcile', 'é'.repeat(600));
      await b.flush();
      const all = await eventsOf('careful');
      assert.deepEqual(
        all.map((e) => e.reason),
        ['Long'],
      );
      assert.ok(Buffer.byteLength(all[0].note) <= 1024, `${Buffer.byteLength(all[0].note)} bytes`);
      assert.match(all[0].note, /^(é)+\.\.\.$/);
      await b.shutdown();
    });
  });
}

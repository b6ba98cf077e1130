// Events: the EventBroadcaster writes core/v1 Events as client-go's recorder does — involvedObject, source, counts
// bumped for a repeat, the per-object spam filter — and kubectl describe shows them under the object. Run against
// the authority (test/kube/events.test.ts) and a real kube-apiserver (test/real-api/events.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { EventBroadcaster } from '../../packages/ctrlmetrics/src/exports/client.js';
import { run } from '../helpers/process.js';

interface Event extends KubeObject {
  involvedObject: Record<string, string>;
  reason: string;
  message: string;
  type: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string };
}

/** Where the suite runs: a cluster-admin client and kubeconfig, and how to let go of the server. */
export interface EventsTarget {
  client: KubeClient;
  kubeconfig: string;
  stop(): Promise<void>;
}

/** Registers the suite; `start` gets a scratch directory; the events go to namespace `ns` (created unless default). */
export function eventsSuite(name: string, start: (dir: string) => Promise<EventsTarget>, ns = 'default'): void {
  describe(name, () => {
    let target: EventsTarget;
    let client: KubeClient;
    let dir: string;
    let cm: KubeObject;
    let clock = Date.parse('2026-11-27T08:00:00Z');
    const events = async (namespace = ns) =>
      (await client.get<{ items: Event[] }>(`/api/v1/namespaces/${namespace}/events`)).items;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'events-'));
      target = await start(dir);
      client = target.client;
      if (ns !== 'default')
        await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      cm = await client.create<KubeObject>(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'subject' },
      });
      cm = { ...cm, apiVersion: 'v1', kind: 'ConfigMap' };
    });
    after(async () => {
      await target?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('an event names the object, the source and the type; a repeat bumps count and lastTimestamp of the same event', async () => {
      const b = new EventBroadcaster(client, { now: () => clock });
      const rec = b.recorderFor('memcached');
      rec.event(cm, 'Normal', 'Created', 'created the deployment');
      await b.flush();
      const [first, ...rest] = await events();
      assert.equal(rest.length, 0);
      assert.equal(first.metadata?.namespace, ns);
      assert.match(first.metadata?.name ?? '', /^subject\.[0-9a-f]+$/);
      assert.deepEqual(first.involvedObject, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'subject',
        namespace: ns,
        uid: cm.metadata?.uid,
        resourceVersion: cm.metadata?.resourceVersion,
      });
      assert.deepEqual(
        [first.type, first.reason, first.message, first.count, first.source],
        ['Normal', 'Created', 'created the deployment', 1, { component: 'memcached' }],
      );
      assert.equal(first.firstTimestamp, '2026-11-27T08:00:00Z');
      clock += 30_000;
      rec.event(cm, 'Normal', 'Created', 'created the deployment');
      rec.event(cm, 'Warning', 'FailedCleanup', 'could not reach the backup service');
      await b.flush();
      const after = await events();
      assert.equal(after.length, 2);
      const same = after.find((e) => e.metadata?.name === first.metadata?.name)!;
      assert.equal(same.count, 2);
      assert.equal(same.lastTimestamp, '2026-11-27T08:00:30Z');
      assert.equal(same.firstTimestamp, '2026-11-27T08:00:00Z');
      assert.equal(after.find((e) => e.reason === 'FailedCleanup')?.type, 'Warning');
    });

    it('kubectl describe shows the events under the object', async () => {
      const r = await run(
        'kubectl',
        ['--kubeconfig', target.kubeconfig, 'describe', 'configmap', 'subject', '-n', ns],
        { env: { ...process.env, HOME: dir, KUBECACHEDIR: join(dir, 'cache') } },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message/);
      assert.match(r.stdout, /Normal\s+Created\s+.*\s+memcached\s+created the deployment/);
      assert.match(r.stdout, /Warning\s+FailedCleanup\s+.*\s+memcached\s+could not reach the backup service/);
    });

    it('the spam filter: a burst per object, then one event per refill interval; other objects are not held back', async () => {
      const b = new EventBroadcaster(client, { now: () => clock, spamBurst: 3, spamRefillMs: 60_000 });
      const rec = b.recorderFor('spammy');
      const target = (name: string): KubeObject => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: ns, uid: `u-${name}` },
      });
      for (let i = 0; i < 10; i++) rec.event(target('loud'), 'Normal', 'Tick', `tick ${i}`);
      rec.event(target('quiet'), 'Normal', 'Tick', 'tick 0');
      await b.flush();
      const ticks = (await events()).filter((e) => e.reason === 'Tick');
      assert.deepEqual(
        ticks
          .filter((e) => e.involvedObject.name === 'loud')
          .map((e) => e.message)
          .sort(),
        ['tick 0', 'tick 1', 'tick 2'],
      );
      assert.equal(ticks.filter((e) => e.involvedObject.name === 'quiet').length, 1);
      clock += 60_000;
      rec.event(target('loud'), 'Normal', 'Tick', 'tick 10');
      rec.event(target('loud'), 'Normal', 'Tick', 'tick 11');
      await b.flush();
      const loud = (await events()).filter((e) => e.reason === 'Tick' && e.involvedObject.name === 'loud');
      assert.deepEqual(loud.map((e) => e.message).sort(), ['tick 0', 'tick 1', 'tick 10', 'tick 2']);
    });

    it("recording never throws: bad input is dropped, a cluster-scoped object's events go to default, a failed write is logged", async () => {
      const lines: string[] = [];
      const logger = {
        error: (m: string) => lines.push(m),
        warn: (m: string) => lines.push(m),
        debug: () => undefined,
      } as unknown as import('../../packages/ctrlmetrics/src/index.js').Logger;
      const b = new EventBroadcaster(client, { now: () => clock, logger });
      const rec = b.recorderFor('odd');
      rec.event({ metadata: { name: 'x' } }, 'Normal', 'NoType', 'm');
      rec.event(cm, 'Info' as 'Normal', 'BadType', 'm');
      rec.event(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-public', uid: 'u' } },
        'Normal',
        'Seen',
        'a cluster-scoped object',
      );
      rec.event(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'no-such-namespace' } },
        'Normal',
        'Lost',
        'its namespace does not exist',
      );
      await b.flush();
      assert.ok(lines.includes('cannot record an event about an object without apiVersion, kind and metadata.name'));
      assert.ok(lines.includes('unsupported event type: use Normal or Warning'));
      assert.ok(lines.includes('could not write an event'));
      assert.equal((await events('default')).find((e) => e.reason === 'Seen')?.involvedObject.name, 'kube-public');
    });
  });
}

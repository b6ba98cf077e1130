/**
 * Typed objects without a cast: `ObjectClient.get`/`list` of a kind given by apiVersion and kind, or as a constant,
 * answer in the kind's type — kubernetes-types' for Kubernetes' built-in kinds, a project's own by declaration
 * merging of `KnownKinds` — and an explicit type argument still wins. The type assertions are checked when the
 * tests are type-checked (`npm test` runs tsc over them); the calls run against the authority.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import { KubeClient, ObjectClient, type KubeObject, type ObjectMeta } from '../../packages/ctrlmetrics/src/index.js';
import type { ObjectOf } from '../../packages/ctrlmetrics/src/exports/client.js';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';

/** A project's own kind, made known to the library by declaration merging. */
interface Gadget {
  apiVersion: 'gadgets.example.com/v1';
  kind: 'Gadget';
  metadata: ObjectMeta;
  spec?: { size?: number };
}
declare module '../../packages/ctrlmetrics/src/index.js' {
  interface KnownKinds {
    'gadgets.example.com/v1/Gadget': Gadget;
  }
}

/** true when A and B are the same type (a compile-time check). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function sameType<T extends true>(): T | undefined {
  return undefined;
}

describe('typed objects of known kinds', () => {
  let authority: Authority;
  let client: KubeClient;
  let objects: ObjectClient;
  const key = { namespace: 'default', name: 'web' };
  const DEPLOYMENT = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;

  before(async () => {
    authority = await startAuthority({ listen: '127.0.0.1:0' });
    client = new KubeClient(authority.restConfig);
    objects = new ObjectClient(client);
    const labels = { app: 'web' };
    await objects.create<Deployment>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: key,
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.9' }] } },
      },
    });
    await objects.create<ConfigMap>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: 'default', name: 'settings' },
      data: { mode: 'fast' },
    });
  });
  after(async () => {
    client?.close();
    await authority?.stop();
  });

  it("get and list by apiVersion and kind answer kubernetes-types' types", async () => {
    const d = await objects.get('apps/v1', 'Deployment', key);
    sameType<Same<typeof d, Deployment>>();
    assert.equal(d.spec?.replicas, 2);
    assert.equal(d.spec?.template.spec?.containers[0]?.name, 'web');
    const maps = await objects.list('v1', 'ConfigMap', { namespace: 'default' });
    sameType<Same<typeof maps, ConfigMap[]>>();
    assert.equal(maps.find((m) => m.metadata?.name === 'settings')?.data?.mode, 'fast');
  });

  it('a kind constant is typed the same; an explicit type argument still wins', async () => {
    const d = await objects.get(DEPLOYMENT, key);
    sameType<Same<typeof d, Deployment>>();
    assert.equal(d.metadata?.name, 'web');
    const listed = await objects.list(DEPLOYMENT, { namespace: 'default' });
    sameType<Same<typeof listed, Deployment[]>>();
    assert.equal(listed.length, 1);
    const untyped = await objects.get<KubeObject>(DEPLOYMENT, key);
    sameType<Same<typeof untyped, KubeObject>>();
    assert.equal((untyped.spec as { replicas: number }).replicas, 2);
    // a kind merged into KnownKinds is typed; an unknown one, or one known only at run time, is a KubeObject
    sameType<Same<ObjectOf<'gadgets.example.com/v1', 'Gadget'>, Gadget>>();
    sameType<Same<ObjectOf<'gadgets.example.com/v1', 'Widget'>, KubeObject>>();
    sameType<Same<ObjectOf<string, string>, KubeObject>>();
    const apiVersion: string = 'v1';
    const settings = await objects.get(apiVersion, 'ConfigMap', { namespace: 'default', name: 'settings' });
    sameType<Same<typeof settings, KubeObject>>();
    assert.deepEqual(settings.data, { mode: 'fast' });
  });
});

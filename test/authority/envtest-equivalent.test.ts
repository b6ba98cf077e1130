// The "Testing your operator on the authority" example of docs/guides/testing.md, run as written there: the authority
// started from a test with the operator's CRDs applied, a manager on its restConfig running the operator's
// controller, the effect checked through the API, everything stopped at the end — what envtest is to Go.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Controller, KubeClient, Manager, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';

interface Widget extends KubeObject {
  spec: { size: number };
  status?: { observedSize?: number };
}

const CRDS = join(import.meta.dirname, 'fixtures/envtest'); // in your project: 'config/crd/bases'

let authority: Authority;
let client: KubeClient;
const stopManager = new AbortController();
let running: Promise<void>;

before(async () => {
  authority = await startAuthority({ apply: [CRDS] }); // in memory, an ephemeral port on 127.0.0.1
  client = new KubeClient(authority.restConfig); // the admin identity (group system:masters)
  const mgr = new Manager({
    restConfig: authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    healthProbeBindAddress: '0',
  });
  mgr.add(
    new Controller({
      name: 'widget',
      watches: [{ apiVersion: 'example.com/v1', kind: 'Widget' }],
      reconciler: async (req, ctx) => {
        const w = ctx.cache.get<Widget>('Widget', req.namespace, req.name);
        if (!w) return;
        await ctx.client.status().patch(w, { status: { observedSize: w.spec.size } }, { signal: ctx.signal });
      },
    }),
  );
  running = mgr.start(stopManager.signal);
  await mgr.ready();
});

after(async () => {
  stopManager.abort();
  await running;
  client.close();
  await authority.stop();
});

test("the controller reports each widget's size in its status", async () => {
  await client.create('/apis/example.com/v1/namespaces/default/widgets', {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w1' },
    spec: { size: 3 },
  });
  let observed: unknown;
  for (let i = 0; i < 100 && observed === undefined; i++) {
    const w = await client.get<Widget>('/apis/example.com/v1/namespaces/default/widgets/w1');
    observed = w.status?.observedSize;
    if (observed === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(observed, 3);
});

// Events on the embedded authority (the suite is test/kube/events.suite.ts; test/real-api/events.test.ts runs it on
// a real kube-apiserver).
import { join } from 'node:path';
import { startAuthority } from '../../packages/envtest/src/index.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/index.js';
import { eventsSuite } from './events.suite.js';

eventsSuite('EventBroadcaster on the authority', async (dir) => {
  const kubeconfig = join(dir, 'kubeconfig');
  const a = await startAuthority({ listen: '127.0.0.1:0', kubeconfigOut: kubeconfig });
  const client = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
  return {
    client,
    kubeconfig,
    async stop() {
      client.close();
      await a.stop();
    },
  };
});

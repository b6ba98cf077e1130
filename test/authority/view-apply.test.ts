// Server-side apply through a view on the embedded authority (the suite is test/authority/view-apply.suite.ts;
// test/real-api/view-apply.test.ts runs it on a real kube-apiserver).
import { startAuthority } from '../../packages/envtest/src/index.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/index.js';
import { viewApplySuite } from './view-apply.suite.js';

viewApplySuite(
  'server-side apply through a view on the authority',
  async () => {
    const a = await startAuthority({ listen: '127.0.0.1:0' });
    const client = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
    return {
      client,
      async stop() {
        client.close();
        await a.stop();
      },
    };
  },
  'view-apply',
);

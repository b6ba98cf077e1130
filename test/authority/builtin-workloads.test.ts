// Defaults and validation of built-in kinds on the authority (the suite is test/authority/builtin-workloads.suite.ts;
// test/real-api/builtin-workloads.test.ts runs it on a real API server).
import { startAuthority } from '../../packages/envtest/src/index.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/index.js';
import { builtinWorkloadsSuite } from './builtin-workloads.suite.js';

builtinWorkloadsSuite('defaults and validation of built-in kinds on the authority', async () => {
  const a = await startAuthority({ listen: '127.0.0.1:0' });
  const admin = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
  return {
    admin,
    async stop() {
      admin.close();
      await a.stop();
    },
  };
});

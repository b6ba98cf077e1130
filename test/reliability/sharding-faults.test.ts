// Sharding under faults on the embedded authority, with 3,000 objects (the test is
// test/reliability/sharding-faults.suite.ts; it runs on a real kube-apiserver in test/real-api/sharding.test.ts).
import { installWebhooks } from '../../packages/envtest/src/index.js';
import { installCrd, startTestCluster } from '../helpers/cluster.js';
import { shardingFaultsTest } from './sharding-faults.suite.js';

shardingFaultsTest(
  async () => {
    const cluster = await startTestCluster();
    const installed = await installWebhooks(cluster.authority, { manifests: [] });
    return {
      admin: cluster.admin,
      restConfig: cluster.authority.restConfig,
      webhook: installed,
      installCrd: (crd) => installCrd(cluster.admin, crd),
      stop: async () => {
        await installed.uninstall();
        await cluster.stop();
      },
    };
  },
  { objects: 3_000, namespace: 'sharded', ring: 'faults' },
);

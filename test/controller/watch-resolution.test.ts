/**
 * Watches resolved by the API's discovery, on the embedded authority (the suite also runs on a real kube-apiserver:
 * test/real-api/watch-resolution.test.ts).
 */
import { startTestCluster } from '../helpers/cluster.js';
import { watchResolutionSuite } from './watch-resolution.suite.js';

watchResolutionSuite(
  'watches resolved by discovery, on the authority',
  async () => {
    const c = await startTestCluster();
    return { restConfig: c.authority.restConfig, admin: c.admin, stop: () => c.stop() };
  },
  'wr',
  'zoo.example.com',
);

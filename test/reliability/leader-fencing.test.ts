// Fencing on the embedded authority (the test is test/reliability/leader-fencing.suite.ts; it runs on a real
// kube-apiserver in test/real-api/leader-election.test.ts).
import { startTestCluster } from '../helpers/cluster.js';
import { leaderFencingTest } from './leader-fencing.suite.js';

leaderFencingTest(async () => {
  const cluster = await startTestCluster();
  return { admin: cluster.admin, restConfig: cluster.authority.restConfig, stop: () => cluster.stop() };
});

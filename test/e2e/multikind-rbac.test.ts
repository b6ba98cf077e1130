// The role of a project with built-in, third-party and multi-group kinds, on the authority (the suite is
// test/e2e/multikind-rbac.suite.ts; test/real-api/multikind-rbac-live.test.ts runs it on a real kube-apiserver).
import { startTestCluster } from '../helpers/cluster.js';
import { multikindRbacSuite } from './multikind-rbac.suite.js';

multikindRbacSuite(
  'the generated role of a project with every kind of API, on the authority',
  async () => {
    const c = await startTestCluster();
    return { admin: c.admin, kubeconfig: c.kubeconfig, stop: () => c.stop() };
  },
  'local',
);

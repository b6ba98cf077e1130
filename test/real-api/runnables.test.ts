// Runnables and warm replicas on a real kube-apiserver (test/controller/runnables.suite.ts, which also runs on the
// authority): with the Lease held by another replica, what runs on the standby and what waits for the Lease.
import { describe } from 'node:test';
import { REAL_KUBE_SKIP, runName, startRealKube } from '../helpers/real-kube.js';
import { runnablesSuite } from '../controller/runnables.suite.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  runnablesSuite(
    'runnables and warm replicas with a Lease',
    async () => {
      const kube = await startRealKube();
      return { restConfig: kube.adminConfig, admin: kube.admin, stop: () => kube.stop() };
    },
    runName('rn'),
  );
});

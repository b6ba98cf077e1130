// Watches resolved by the API's discovery on a real kube-apiserver (test/controller/watch-resolution.suite.ts, which
// also runs on the authority): Endpoints, Ingress, NetworkPolicy, and a CRD with an irregular plural installed late.
import { describe } from 'node:test';
import { REAL_KUBE_SKIP, runGroup, runName, startRealKube } from '../helpers/real-kube.js';
import { watchResolutionSuite } from '../controller/watch-resolution.suite.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  watchResolutionSuite(
    'watches resolved by discovery',
    async () => {
      const kube = await startRealKube();
      return { restConfig: kube.adminConfig, admin: kube.admin, stop: () => kube.stop() };
    },
    runName('wr'),
    runGroup('zoo.example.com'),
  );
});

// The role `generate rbac` writes for a project with built-in, third-party and multi-group kinds, applied with kubectl
// to a real kube-apiserver and checked with SubjectAccessReviews (test/e2e/multikind-rbac.suite.ts, which also
// runs on the authority). The project's names carry the run's id: its role, binding and namespace go with the run.
import { describe } from 'node:test';
import { REAL_KUBE_SKIP, RUN_ID, startRealKube } from '../helpers/real-kube.js';
import { multikindRbacSuite } from '../e2e/multikind-rbac.suite.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  multikindRbacSuite(
    'the generated role of a project with every kind of API',
    async () => {
      const kube = await startRealKube();
      return { admin: kube.admin, kubeconfig: kube.kubeconfig, stop: () => kube.stop() };
    },
    RUN_ID,
  );
});

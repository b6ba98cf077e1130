// Defaults and validation of built-in kinds (test/authority/builtin-workloads.suite.ts) on a real kube-apiserver:
// what a StatefulSet, Deployment, Job, CronJob, Service, PVC and Ingress gain on create, and the first 422s.
import { describe } from 'node:test';
import { builtinWorkloadsSuite } from '../authority/builtin-workloads.suite.js';
import { REAL_KUBE_SKIP, runName, startRealKube } from '../helpers/real-kube.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  builtinWorkloadsSuite(
    'defaults and validation of built-in kinds',
    async () => {
      const kube = await startRealKube();
      return { admin: kube.admin, stop: () => kube.stop() };
    },
    { namespace: runName('real-builtin-workloads') },
  );
});

// Server-side apply through a view on a real kube-apiserver (test/authority/view-apply.suite.ts): field ownership
// in the request's version, conflicts in each manager's own version.
import { describe } from 'node:test';
import { viewApplySuite } from '../authority/view-apply.suite.js';
import { REAL_KUBE_SKIP, runName, startRealKube } from '../helpers/real-kube.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  viewApplySuite(
    'server-side apply through a view',
    async () => {
      const kube = await startRealKube();
      return { client: kube.admin, stop: () => kube.stop() };
    },
    runName('view-apply'),
  );
});

// Leader election on a real kube-apiserver: two managers in their own processes, a takeover when the leader is
// frozen (SIGSTOP) past its lease, and fencing: continued, the old leader starts no reconcile and exits non-zero
// (test/reliability/leader-fencing.suite.ts, which also runs on the authority).
import { REAL_KUBE_SKIP, runName, startRealKube } from '../helpers/real-kube.js';
import { leaderFencingTest } from '../reliability/leader-fencing.suite.js';

leaderFencingTest(
  async () => {
    const kube = await startRealKube();
    return { admin: kube.admin, restConfig: kube.adminConfig, stop: () => kube.stop() };
  },
  { namespace: runName('real-fencing'), skip: REAL_KUBE_SKIP },
);

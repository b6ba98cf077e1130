// `ctrlmetrics grant`, `token`, `label-namespace` and `monitors` on a real kube-apiserver
// (test/cli/cluster-commands.suite.ts), compared with kubectl against the same server.
import { describe } from 'node:test';
import { clusterCommandsSuite } from '../cli/cluster-commands.suite.js';
import { FRESH_KUBE_SKIP, startRealKube } from '../helpers/real-kube.js';

describe('on a real kube-apiserver', { skip: FRESH_KUBE_SKIP }, () => {
  // a control plane of its own: the suite expects no ServiceMonitor CRD at first and binds fixed cluster-wide names
  // (on an existing cluster it skips; test/cli/cluster-commands.test.ts runs it on the authority)
  clusterCommandsSuite(() => startRealKube({ fresh: true }));
});

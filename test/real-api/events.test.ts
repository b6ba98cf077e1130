// Events on a real kube-apiserver (test/kube/events.suite.ts): what the EventBroadcaster writes, as kubectl
// describe shows it, and the spam filter.
import { describe } from 'node:test';
import { eventsSuite } from '../kube/events.suite.js';
import { REAL_KUBE_SKIP, runName, startRealKube } from '../helpers/real-kube.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  eventsSuite(
    'EventBroadcaster',
    async () => {
      const kube = await startRealKube();
      return { client: kube.admin, kubeconfig: kube.kubeconfig, stop: () => kube.stop() };
    },
    runName('real-events'),
  );
});

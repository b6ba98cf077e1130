// events.k8s.io/v1 Events on a real kube-apiserver (test/kube/events-v1.suite.ts): what the EventsV1Broadcaster
// writes, its series, and the same events through core/v1.
import { describe } from 'node:test';
import { eventsV1Suite } from '../kube/events-v1.suite.js';
import { REAL_KUBE_SKIP, runName, startRealKube } from '../helpers/real-kube.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  eventsV1Suite(
    'EventsV1Broadcaster',
    async () => {
      const kube = await startRealKube();
      return { client: kube.admin, stop: () => kube.stop() };
    },
    runName('events-v1'),
  );
});

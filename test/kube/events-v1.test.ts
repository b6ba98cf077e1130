// events.k8s.io/v1 Events on the embedded authority (the suite is test/kube/events-v1.suite.ts;
// test/real-api/events-v1.test.ts runs it on a real kube-apiserver).
import { startAuthority } from '../../packages/envtest/src/index.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/index.js';
import { eventsV1Suite } from './events-v1.suite.js';

eventsV1Suite(
  'EventsV1Broadcaster on the authority',
  async () => {
    const a = await startAuthority({ listen: '127.0.0.1:0' });
    const client = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
    return {
      client,
      async stop() {
        client.close();
        await a.stop();
      },
    };
  },
  'events-v1',
);

// The object-based client, the REST mapper and the API error helpers against the embedded authority
// (the suite is test/kube/object-client.suite.ts; test/real-api/object-client.test.ts runs it on a real API server).
import { startAuthority } from '../../src/authority/index.js';
import { KubeClient } from '../../src/index.js';
import { objectClientSuite } from './object-client.suite.js';

objectClientSuite('ObjectClient and RESTMapper on the authority', async () => {
  const a = await startAuthority({ listen: '127.0.0.1:0' });
  const admin = new KubeClient({ ...a.restConfig, qps: 1000, burst: 1000 });
  return {
    admin,
    async stop() {
      admin.close();
      await a.stop();
    },
  };
});

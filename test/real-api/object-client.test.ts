// The object-based client, the REST mapper and the API error helpers (test/kube/object-client.suite.ts) against a
// real kube-apiserver: discovery, status subresource, server-side apply conflicts, finalizers, error predicates.
import { describe } from 'node:test';
import { objectClientSuite } from '../kube/object-client.suite.js';
import { REAL_KUBE_SKIP, runGroup, runName, startRealKube } from '../helpers/real-kube.js';

describe('on a real kube-apiserver', { skip: REAL_KUBE_SKIP }, () => {
  objectClientSuite(
    'ObjectClient and RESTMapper',
    async () => {
      const kube = await startRealKube();
      return { admin: kube.admin, stop: () => kube.stop() };
    },
    { group: runGroup('objectclient.example.com'), namespace: runName('real-object-client'), servesEviction: true },
  );
});

// `ctrlmetrics grant`, `token`, `label-namespace` and `monitors` against the embedded authority (the suite is
// test/cli/cluster-commands.suite.ts; test/real-api/cluster-commands.test.ts runs it on a real kube-apiserver).
import { startTestCluster } from '../helpers/cluster.js';
import { clusterCommandsSuite } from './cluster-commands.suite.js';

clusterCommandsSuite(() => startTestCluster());

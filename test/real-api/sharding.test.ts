// Sharding under faults on a real kube-apiserver, with 300 objects: the sharder's webhook on this machine's
// 127.0.0.1 (skipped when the API server cannot reach it), three shard processes, SIGTERM, SIGKILL and SIGSTOP
// (test/reliability/sharding-faults.suite.ts, which also runs on the authority with 3,000).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCA, issueServingCert } from '../helpers/certs.js';
import { freePort } from '../helpers/process.js';
import { installRunCrd, runName, startRealKube, webhooksUnreachable } from '../helpers/real-kube.js';
import { shardingFaultsTest } from '../reliability/sharding-faults.suite.js';

const WEBHOOK_SKIP = await webhooksUnreachable();

shardingFaultsTest(
  async () => {
    const kube = await startRealKube();
    const ca = await generateCA('sharder-ca');
    const serving = await issueServingCert(ca, ['127.0.0.1']);
    const certDir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-sharder-certs-'));
    writeFileSync(join(certDir, 'tls.crt'), serving.certPem);
    writeFileSync(join(certDir, 'tls.key'), serving.keyPem);
    return {
      admin: kube.admin,
      restConfig: kube.adminConfig,
      webhook: { bindAddress: `127.0.0.1:${await freePort()}`, certDir, caPem: ca.certPem },
      installCrd: (crd) => installRunCrd(kube, crd),
      stop: async () => {
        await kube.stop();
        rmSync(certDir, { recursive: true, force: true });
      },
    };
  },
  { objects: 300, namespace: runName('sharded'), ring: runName('faults'), skip: WEBHOOK_SKIP },
);

/**
 * `ctrlmetrics sharder` as a process against the embedded authority: with `--install-crd` it creates the
 * ControllerRing CRD, serves the ring's webhook at `--webhook-url` (its certificate from `--webhook-cert-dir`, the CA
 * written into the ring's MutatingWebhookConfiguration), and a shard in this process gets the ring's new objects;
 * SIGTERM stops it cleanly. Flags that cannot work are refused with what to give instead.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Manager, shardingLabels } from '../../packages/ctrlmetrics/src/manager/index.js';
import { Controller } from '../../packages/ctrlmetrics/src/controller/index.js';
import { installWebhooks, type InstalledWebhooks } from '../../packages/envtest/src/index.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { ProcessGroup, cliArgs, eventually, runCli, within } from '../helpers/process.js';

let cluster: TestCluster;
let installed: InstalledWebhooks;
let work: string;
const procs = new ProcessGroup();

before(async () => {
  cluster = await startTestCluster();
  installed = await installWebhooks(cluster.authority, { manifests: [] });
  work = mkdtempSync(join(tmpdir(), 'ctrlmetrics-sharder-cli-'));
});

after(async () => {
  await procs.stopAll();
  await installed?.uninstall();
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('flags that cannot work are refused, saying what to give', async () => {
  const none = await runCli(['sharder', '--kubeconfig', cluster.kubeconfig]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /give one of --webhook-url .* and --webhook-service/);
  const path = await runCli(['sharder', '--webhook-url', 'https://sharder:9443/mutate']);
  assert.match(path.stderr, /--webhook-url "https:\/\/sharder:9443\/mutate": give https:\/\/host:port, without a path/);
  const service = await runCli(['sharder', '--webhook-service', 'sharder']);
  assert.match(service.stderr, /--webhook-service "sharder": give it as namespace\/name or namespace\/name:port/);
  const noCa = await runCli(['sharder', '--webhook-service', 'ns/sharder', '--webhook-cert-dir', join(work, 'none')]);
  assert.match(noCa.stderr, /cannot read the webhook's CA \(.*tls\.crt\): ENOENT; pass --webhook-ca-file/);
  writeFileSync(join(work, 'bad.crt'), 'not a certificate\n');
  const bad = await runCli(['sharder', '--webhook-service', 'ns/sharder', '--webhook-ca-file', join(work, 'bad.crt')]);
  assert.match(bad.stderr, /holds no PEM certificate/);
  const moves = await runCli([
    'sharder',
    '--webhook-service',
    'ns/sharder',
    '--webhook-ca-file',
    join(installed.certDir, 'tls.crt'),
    '--concurrent-moves',
    '0',
  ]);
  assert.match(moves.stderr, /--concurrent-moves: "0" is not a whole number above 0/);
});

test('runs the sharder: the CRD installed, new objects of a ring assigned to its shard; SIGTERM stops it', async () => {
  const sharder = procs.start('sharder', process.execPath, [
    ...cliArgs(),
    'sharder',
    '--kubeconfig',
    cluster.kubeconfig,
    '--webhook-url',
    `https://${installed.bindAddress}`,
    '--webhook-bind-address',
    installed.bindAddress,
    '--webhook-cert-dir',
    installed.certDir,
    '--webhook-ca-file',
    join(installed.certDir, 'tls.crt'),
    '--metrics-bind-address',
    '0',
    '--health-probe-bind-address',
    '0',
    '--install-crd',
    '--sync-period',
    '2s',
  ]);
  await sharder.waitForOutput(/manager started/, 60_000);
  await cluster.admin.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'cli-ring', labels: { sharded: 'yes' } },
  });
  await cluster.admin.create('/apis/sharding.timebertt.dev/v1alpha1/controllerrings', {
    apiVersion: 'sharding.timebertt.dev/v1alpha1',
    kind: 'ControllerRing',
    metadata: { name: 'cli' },
    spec: { resources: [{ group: '', resource: 'secrets' }], namespaceSelector: { matchLabels: { sharded: 'yes' } } },
  });
  const shard = new Manager({
    restConfig: cluster.authority.restConfig,
    handleSignals: false,
    metrics: { bindAddress: '0' },
    sharding: { ring: 'cli', shardName: 'only-shard', leaseNamespace: 'cli-ring' },
  });
  const seen = new Set<string>();
  shard.add(
    new Controller({
      name: 'secrets',
      watches: [{ apiVersion: 'v1', kind: 'Secret', namespace: 'cli-ring' }],
      reconciler: (req) => {
        seen.add(req.name);
        return Promise.resolve();
      },
    }),
  );
  const stop = new AbortController();
  const running = shard.start(stop.signal);
  try {
    await Promise.race([shard.ready(), running]);
    await eventually(
      async () =>
        (
          await cluster.admin.get<{ status?: { availableShards?: number } }>(
            '/apis/sharding.timebertt.dev/v1alpha1/controllerrings/cli',
          )
        ).status?.availableShards === 1 || undefined,
      'the ring with its shard available',
      20_000,
    );
    await cluster.admin.create('/api/v1/namespaces/cli-ring/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'assigned', namespace: 'cli-ring' },
    });
    const s = await cluster.admin.get<{ metadata: { labels?: Record<string, string> } }>(
      '/api/v1/namespaces/cli-ring/secrets/assigned',
    );
    assert.equal(s.metadata.labels?.[shardingLabels('cli').shard], 'only-shard', 'labelled at creation by the webhook');
    await eventually(() => seen.has('assigned') || undefined, 'the shard reconciling it', 10_000);
  } finally {
    stop.abort();
    await running.catch(() => undefined);
  }
  process.kill(sharder.pid, 'SIGTERM');
  assert.equal(await within(sharder.exited, 30_000, 'the sharder to stop'), 0, sharder.stderr());
});

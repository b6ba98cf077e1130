/** The examples, run as a user would: the custom-metrics script, and the example operator's own entry point. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { startTestCluster } from '../helpers/cluster.js';
import { eventually, parseExposition, value } from './helpers/exposition.js';

const ROOT = new URL('../../', import.meta.url).pathname;

test(
  'examples/custom-metrics.ts: a mustRegister-ed counter and a plain prom-client counter are both exposed',
  { timeout: 60_000 },
  async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ['--conditions=ctrlmetrics-source', '--import', 'tsx', 'examples/custom-metrics.ts'],
        { cwd: ROOT, timeout: 45_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      );
    });
    const f = parseExposition(out);
    assert.equal(f.get('example_goobers_total')?.type, 'counter');
    assert.equal(f.get('example_goobers_total')?.help, 'Number of goobers processed');
    assert.equal(value(f, 'example_goobers_total', { kind: 'configmap' }), 1);
    assert.equal(f.get('example_widgets_total')?.type, 'counter');
    assert.equal(value(f, 'example_widgets_total', {}), 2);
  },
);

test(
  'examples/configmap-operator/main.ts: runs against a kubeconfig with Go-style flags, keeps digests in sync, stops in order on SIGTERM',
  { timeout: 60_000 },
  async () => {
    const cluster = await startTestCluster();
    let child: ChildProcess | undefined;
    try {
      const ns = 'example-op';
      await cluster.admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'src', namespace: ns, labels: { 'ctrlmetrics.dev/managed': 'true' } },
        data: { a: '1' },
      });
      child = spawn(
        process.execPath,
        [
          '--conditions=ctrlmetrics-source',
          '--import',
          'tsx',
          'packages/cli/examples/configmap-operator/main.ts',
          '--kubeconfig',
          cluster.authority.kubeconfig,
          '--namespace',
          ns,
          '--metrics-bind-address',
          '127.0.0.1:0',
          '--health-probe-bind-address',
          '127.0.0.1:0',
          '--metrics-secure=false', // Go flag syntax, as in kubebuilder's manifests
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
      const digest = await eventually(
        async () => {
          try {
            return await cluster.admin.get<{
              data: { digest: string };
              metadata: { ownerReferences: Array<{ name: string; controller: boolean }> };
            }>(`/api/v1/namespaces/${ns}/configmaps/src-digest`);
          } catch {
            return undefined;
          }
        },
        'the derived ConfigMap src-digest',
        30_000,
        100,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\noperator log:\n${err.slice(-1500)}`);
      });
      // the digest is SHA-256 over sorted "key\0value\0" pairs, computed here independently
      assert.equal(digest.data.digest, createHash('sha256').update('a\x001\x00').digest('hex'));
      assert.deepEqual(
        digest.metadata.ownerReferences.map((r) => [r.name, r.controller]),
        [['src', true]],
      );

      // plain HTTP without authentication, as kubebuilder's main.go does with --metrics-secure=false
      const serving = err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; url?: string })
        .find((l) => l.msg === 'metrics server is serving');
      assert.match(serving?.url ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
      const scrape = await fetch(`${serving!.url}/metrics`);
      assert.equal(scrape.status, 200);
      assert.equal(
        value(parseExposition(await scrape.text()), 'controller_runtime_reconcile_total', {
          controller: 'configmap',
          result: 'error',
        }),
        0,
      );

      child.kill('SIGTERM');
      let t: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        exited,
        new Promise<never>(
          (_, rej) => (t = setTimeout(() => rej(new Error('no exit within 20 s of SIGTERM')), 20_000)),
        ),
      ]).finally(() => clearTimeout(t));
      assert.equal(code, 0, err.slice(-2000));
      const msgs = err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
      const order = [
        'signal received: shutting down',
        'Stopping and waiting for controllers',
        'Stopping and waiting for HTTP servers',
        'Wait completed, proceeding to shutdown the manager',
      ];
      const at = order.map((m) => msgs.indexOf(m));
      assert.ok(
        at.every((i) => i >= 0),
        `lifecycle messages logged: ${JSON.stringify(at)}`,
      );
      assert.deepEqual(
        [...at].sort((a, b) => a - b),
        at,
        `in order: ${order.join(' → ')}`,
      );
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await cluster.stop();
    }
  },
);

// `demo --prometheus`, the parts that need no running Prometheus: the scrape job (prometheus-config's
// rendering of the scaffold's ServiceMonitor, with the certificate verified when the demo has its CA), finding the
// binary, and the refusals before anything starts. The running Prometheus is in test/e2e/prometheus.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoScrapeJob, findPrometheus, graphLink } from '../../packages/cli/src/cli/demo/prometheus.js';
import { runDemo, type DemoOptions } from '../../packages/cli/src/cli/demo.js';

const FLAGS: DemoOptions = {
  stateDir: join(tmpdir(), 'ctrlmetrics-demo-never-created'),
  metricsBindAddress: '127.0.0.1:0',
  metricsSecure: true,
  metricsCertName: 'tls.crt',
  metricsCertKey: 'tls.key',
  enableHttp2: false,
  healthProbeBindAddress: '0',
  leaderElect: false,
  duration: 0,
  loadInterval: 3,
  apiListen: '127.0.0.1:0',
  prometheus: true,
  prometheusAddress: '127.0.0.1:0',
};

describe('demo --prometheus', () => {
  it("the job: the scaffold's ServiceMonitor as prometheus-config renders it, verified against the demo's CA", () => {
    const job = demoScrapeJob({
      metricsUrl: 'https://127.0.0.1:8443',
      secure: true,
      tokenFile: '/s/reader.token',
      caFile: '/s/metrics-ca.crt',
      intervalSeconds: 5,
    });
    assert.equal(
      job.job_name,
      'serviceMonitor/ctrlmetrics-demo-system/ctrlmetrics-demo-controller-manager-metrics-monitor/0',
    );
    assert.equal(job.scheme, 'https');
    assert.equal(job.metrics_path, '/metrics');
    assert.equal(job.scrape_interval, '5s');
    assert.deepEqual(job.authorization, { type: 'Bearer', credentials_file: '/s/reader.token' });
    assert.deepEqual(job.tls_config, { ca_file: '/s/metrics-ca.crt' });
    assert.deepEqual((job.static_configs as Array<{ targets: string[] }>)[0].targets, ['127.0.0.1:8443']);
    const plain = demoScrapeJob({ metricsUrl: 'http://127.0.0.1:8080', secure: false, intervalSeconds: 5 });
    assert.equal(plain.scheme, 'http');
    assert.equal(plain.authorization, undefined);
    assert.equal(plain.tls_config, undefined);
    assert.equal(
      graphLink('http://127.0.0.1:9090', 'up{job="a b"}'),
      'http://127.0.0.1:9090/graph?g0.expr=up%7Bjob%3D%22a%20b%22%7D&g0.tab=0&g0.range_input=15m',
    );
  });

  it('finds an executable prometheus on PATH, and nothing where there is none', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fake-prometheus-'));
    try {
      writeFileSync(join(dir, 'prometheus'), '#!/bin/sh\n');
      assert.equal(await findPrometheus(`/nonexistent:${dir}`), undefined, 'not executable');
      chmodSync(join(dir, 'prometheus'), 0o755);
      assert.equal(await findPrometheus(`/nonexistent:${dir}`), join(dir, 'prometheus'));
      assert.equal(await findPrometheus('/nonexistent'), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses, before starting anything, without a binary, without the metrics endpoint, or against a cluster', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await assert.rejects(
        runDemo(FLAGS),
        /^CliError: --prometheus needs a prometheus binary on PATH \(Debian\/Ubuntu: apt-get install prometheus; or a release from prometheus\.io\)$/,
      );
    } finally {
      process.env.PATH = path;
    }
    await assert.rejects(
      runDemo({ ...FLAGS, metricsBindAddress: '0' }),
      /--prometheus needs the metrics endpoint: drop --metrics-bind-address 0/,
    );
    await assert.rejects(
      runDemo({ ...FLAGS, kubeconfig: '/nonexistent/kubeconfig' }),
      /--prometheus runs with the embedded API/,
    );
  });
});

/**
 * No kubeconfig anywhere (no flag, no KUBECONFIG, not in a pod, no ~/.kube/config): every command that talks to
 * the API, a Manager and `loadRestConfig()` say what was looked for and what to pass.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/process.js';
import { loadRestConfig, KubeConfigError } from '../../packages/ctrlmetrics/src/kube/config.js';
import { Manager, ManagerError } from '../../packages/ctrlmetrics/src/manager/index.js';

let home: string;
before(async () => {
  home = await mkdtemp(join(tmpdir(), 'ctrlmetrics-nohome-'));
});
after(() => rm(home, { recursive: true, force: true }));

const expected = (h: string, kubeconfigEnv = 'KUBECONFIG is not set') =>
  `no Kubernetes API configured: no kubeconfig was given, ${kubeconfigEnv}, not in a pod (KUBERNETES_SERVICE_HOST is not set), and ${h}/.kube/config does not exist. ` +
  'Pass a kubeconfig (--kubeconfig FILE on the command line, the kubeconfig option of Manager and loadRestConfig) or set KUBECONFIG; ' +
  'for a local API without a cluster, run `ctrlmetrics authority --kubeconfig-out FILE` and pass that FILE';

function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, HOME: home, ...extra };
  delete e.KUBERNETES_SERVICE_HOST;
  if (!('KUBECONFIG' in extra)) delete e.KUBECONFIG;
  return e;
}

describe('no kubeconfig anywhere', () => {
  for (const args of [
    ['grant', '--serviceaccount', 'monitoring:prometheus'],
    ['token', '-n', 'monitoring', 'prometheus'],
    ['monitors'],
    ['label-namespace', 'monitoring'],
    ['doctor', '-n', 'my-op-system'],
  ]) {
    test(`ctrlmetrics ${args[0]}: one line saying what was looked for, exit 1`, async () => {
      const r = await runCli(args, { env: env(), timeoutMs: 30_000 });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `error: ${expected(home)}\n`);
    });
  }

  test('KUBECONFIG naming only missing files says so', async () => {
    const r = await runCli(['token', '-n', 'monitoring', 'prometheus'], {
      env: env({ KUBECONFIG: '/nonexistent/a:/nonexistent/b' }),
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `error: ${expected(home, 'KUBECONFIG names no existing file (/nonexistent/a:/nonexistent/b)')}\n`,
    );
  });

  test('loadRestConfig() and Manager.start() give the same message', async () => {
    const saved = {
      HOME: process.env.HOME,
      KUBECONFIG: process.env.KUBECONFIG,
      KUBERNETES_SERVICE_HOST: process.env.KUBERNETES_SERVICE_HOST,
    };
    process.env.HOME = home;
    delete process.env.KUBECONFIG;
    delete process.env.KUBERNETES_SERVICE_HOST;
    try {
      await assert.rejects(
        loadRestConfig(),
        (err: Error) => err instanceof KubeConfigError && err.message === expected(home),
      );
      const mgr = new Manager({ handleSignals: false, metrics: { bindAddress: '0' } });
      await assert.rejects(
        mgr.start(),
        (err: Error) =>
          err instanceof ManagerError &&
          err.message === `cannot load the Kubernetes API configuration: ${expected(home)}`,
      );
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});

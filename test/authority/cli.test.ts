// `ctrlmetrics authority` as a process: one ready line, --apply of files and kustomize directories, kubectl through the
// written kubeconfig, clean exit on SIGTERM/SIGINT, state reused on restart, one-line errors, and no token in the logs.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { ProcessGroup, freePort, run, runCli, within } from '../helpers/process.js';

describe('ctrlmetrics authority (CLI)', () => {
  const procs = new ProcessGroup();
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'authority-cli-'));
    env = { ...process.env, KUBECACHEDIR: join(dir, 'kcache'), KUBECONFIG: '' };
    writeFileSync(
      join(dir, 'objects.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\n  namespace: applied\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: applied\n',
    );
    const k = join(dir, 'overlay');
    mkdirSync(k);
    writeFileSync(join(k, 'kustomization.yaml'), 'namespace: applied\nnamePrefix: demo-\nresources:\n- sa.yaml\n');
    writeFileSync(join(k, 'sa.yaml'), 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: controller-manager\n');
  });
  after(async () => {
    await procs.stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const kubectl = (kubeconfig: string, ...args: string[]) =>
    run('kubectl', ['--kubeconfig', kubeconfig, ...args], { env, timeoutMs: 30_000 });

  it('runs until SIGTERM, says once that it is ready, applies --apply inputs, and never logs the admin token', async () => {
    const stateDir = join(dir, 'state');
    const kubeconfig = join(dir, 'kubeconfig');
    const p = procs.startCli('authority', [
      'authority',
      '--listen',
      '127.0.0.1:0',
      '--state-dir',
      stateDir,
      '--kubeconfig-out',
      kubeconfig,
      '--apply',
      join(dir, 'objects.yaml'),
      join(dir, 'overlay'),
    ]);
    const m = await p.waitForOutput(/"msg":"authority ready".*"url":"(https:\/\/127\.0\.0\.1:\d+)"/, 30_000);
    const cm = await kubectl(kubeconfig, 'get', 'configmap', 'from-file', '-n', 'applied', '-o', 'name');
    assert.equal(cm.stdout.trim(), 'configmap/from-file', cm.stderr);
    const sa = await kubectl(
      kubeconfig,
      'get',
      'serviceaccount',
      'demo-controller-manager',
      '-n',
      'applied',
      '-o',
      'name',
    );
    assert.equal(sa.stdout.trim(), 'serviceaccount/demo-controller-manager', sa.stderr);
    assert.match(readFileSync(kubeconfig, 'utf8'), new RegExp(`server: ${m[1].replace(/\./g, '\\.')}`));

    assert.equal(await within(procs.stop(p), 15_000, 'authority exit after SIGTERM'), 0);
    const out = p.stdout() + p.stderr();
    assert.equal(out.match(/authority ready/g)?.length, 1, 'exactly one ready line');
    assert.match(out, /authority stopping/);
    const token = readFileSync(join(stateDir, 'admin.token'), 'utf8').trim();
    assert.ok(token.length >= 32);
    assert.equal(out.includes(token), false, 'the admin token is never logged');
    assert.equal(/PRIVATE KEY/.test(out), false);
  });

  it('restarts on the same state dir and port: the old kubeconfig keeps working; SIGINT stops it', async () => {
    const stateDir = join(dir, 'state-port');
    const kubeconfig = join(dir, 'kubeconfig-port');
    const port = await freePort();
    const args = [
      'authority',
      '--listen',
      `127.0.0.1:${port}`,
      '--state-dir',
      stateDir,
      '--kubeconfig-out',
      kubeconfig,
    ];
    const first = procs.startCli('authority-1', args);
    await first.waitForOutput(/authority ready/, 30_000);
    assert.equal((await kubectl(kubeconfig, 'create', 'namespace', 'survivor')).code, 0);
    const rival = await runCli(['authority', '--listen', '127.0.0.1:0', '--state-dir', stateDir]);
    assert.notEqual(rival.code, 0);
    assert.match(
      rival.stderr,
      new RegExp(
        `^error: another authority \\(pid ${first.pid}\\) is using the state directory .*state-port: stop it, or use another --state-dir$`,
        'm',
      ),
    );
    const saved = readFileSync(kubeconfig, 'utf8');
    assert.equal(await within(procs.stop(first), 15_000, 'first exit'), 0);

    const second = procs.startCli('authority-2', args);
    await second.waitForOutput(/authority ready/, 30_000);
    assert.equal(readFileSync(kubeconfig, 'utf8'), saved, 'same CA, token and address: the same kubeconfig');
    const ns = await kubectl(kubeconfig, 'get', 'namespace', 'survivor', '-o', 'name');
    assert.equal(ns.stdout.trim(), 'namespace/survivor', ns.stderr);
    process.kill(second.pid, 'SIGINT');
    assert.equal(await within(second.exited, 15_000, 'exit after SIGINT'), 0);
  });

  it('fails with one line when the address is taken, the listen address is malformed, or --apply does not exist', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as net.AddressInfo).port;
    let results;
    try {
      // the three runs are independent: run them side by side to keep the file fast
      results = await Promise.all([
        runCli(['authority', '--listen', `127.0.0.1:${port}`]),
        runCli(['authority', '--listen', 'nonsense']),
        runCli(['authority', '--listen', '127.0.0.1:0', '--apply', join(dir, 'nope.yaml')]),
      ]);
    } finally {
      blocker.close();
    }
    const [taken, bad, missing] = results;
    assert.notEqual(taken.code, 0);
    assert.match(
      taken.stderr,
      new RegExp(
        `^error: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use \\(pick another --listen port\\)$`,
        'm',
      ),
    );
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      /^error: invalid listen address "nonsense": expected host:port, e\.g\. 127\.0\.0\.1:6443$/m,
    );
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /^error: --apply .*nope\.yaml: no such file or directory$/m);
    for (const r of [bad, missing]) assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });

  it('exits non-zero with one line naming the file when the state file is empty; the file is left untouched', async () => {
    const stateDir = join(dir, 'empty-state');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'state.json'), '');
    const r = await runCli(['authority', '--listen', '127.0.0.1:0', '--state-dir', stateDir]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /^error: .*state file .*empty-state\/state\.json is corrupt \(it is empty \(0 bytes\)\); it was left as it is: move it away to start fresh$/m,
    );
    assert.equal(readFileSync(join(stateDir, 'state.json'), 'utf8'), '');
  });

  it('exits non-zero with one line naming the log and the line when a log line is corrupt; the log is left untouched', async () => {
    const stateDir = join(dir, 'bad-log');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'state.json'), '{"resourceVersion":0,"objects":{}}');
    const log =
      '{"rv":1,"key":"namespaces","object":{"metadata":{"name":"a"}}}\n{"rv":2,"key":"namespaces"\n{"rv":3,"key":"namespaces","object":{"metadata":{"name":"b"}}}\n';
    writeFileSync(join(stateDir, 'state.1.log'), log);
    const r = await runCli(['authority', '--listen', '127.0.0.1:0', '--state-dir', stateDir]);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /^error: the authority state log .*bad-log\/state\.1\.log is corrupt at line 2 \(.*\); it was left as it is: move the state directory away to start fresh$/m,
    );
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(readFileSync(join(stateDir, 'state.1.log'), 'utf8'), log);
  });
});

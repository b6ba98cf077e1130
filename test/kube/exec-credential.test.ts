/**
 * Kubeconfig exec credential plugins, run as client-go runs them, against the embedded authority: the plugin is a
 * real program (a Node script) that records how it was called and answers an ExecCredential; the client uses
 * the token it prints for real API calls, runs it again when the token expires and after a 401, takes a client
 * certificate from it, and turns each way a plugin can fail into one clear error. Never through
 * @kubernetes/client-node (a child process that forbids importing it loads such a kubeconfig).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { KubeClient, KubeApiError, loadRestConfig } from '../../packages/ctrlmetrics/src/index.js';
import { KubeConfigError } from '../../packages/ctrlmetrics/src/exports/config.js';
import { ExecCredentialPlugin } from '../../packages/ctrlmetrics/src/kube/exec-credential.js';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { generateCA, issueClientCert, issueServingCert } from '../helpers/certs.js';

const run = promisify(execFile);
let cluster: TestCluster;
let dir: string;
let goodToken: string;
before(async () => {
  cluster = await startTestCluster();
  dir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-exec-'));
  goodToken = (await cluster.managerConfig()).token!;
});
after(async () => {
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;

/**
 * A plugin script: each run appends {args, env, info} to `calls`, then prints the answer for its run (the last
 * answer repeats). An answer is a status object, or { exit, stderr } to fail, or { raw } to print as is.
 */
async function plugin(
  answers: unknown[],
  apiVersion = 'client.authentication.k8s.io/v1',
): Promise<{
  script: string;
  calls: () => Promise<Array<{ args: string[]; env: Record<string, string>; info: Record<string, unknown> }>>;
}> {
  const id = ++n;
  const script = join(dir, `plugin-${id}.mjs`);
  const callsFile = join(dir, `calls-${id}.jsonl`);
  await writeFile(
    script,
    `import { appendFileSync, readFileSync, existsSync } from 'node:fs';
const answers = ${JSON.stringify(answers)};
const done = existsSync(${JSON.stringify(callsFile)}) ? readFileSync(${JSON.stringify(callsFile)}, 'utf8').split('\\n').filter(Boolean).length : 0;
appendFileSync(${JSON.stringify(callsFile)}, JSON.stringify({ args: process.argv.slice(2), env: { PLUGIN_REGION: process.env.PLUGIN_REGION ?? '' }, info: JSON.parse(process.env.KUBERNETES_EXEC_INFO ?? 'null') }) + '\\n');
const a = answers[Math.min(done, answers.length - 1)];
if (a.exit !== undefined) { process.stderr.write(a.stderr ?? ''); process.exit(a.exit); }
if (a.raw !== undefined) { process.stdout.write(a.raw); process.exit(0); }
process.stdout.write(JSON.stringify({ apiVersion: ${JSON.stringify(apiVersion)}, kind: 'ExecCredential', status: a }));
`,
  );
  return {
    script,
    calls: async () =>
      (await readFile(callsFile, 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { args: string[]; env: Record<string, string>; info: Record<string, unknown> }),
  };
}

/** A kubeconfig whose user runs `exec`, for the authority (or the server and CA given in `clusterExtra`). */
async function kubeconfigWith(
  exec: Record<string, unknown>,
  clusterExtra: Record<string, unknown> = {},
): Promise<string> {
  const file = join(dir, `kubeconfig-${++n}`);
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: {
            server: cluster.url,
            'certificate-authority-data': Buffer.from(cluster.caPem).toString('base64'),
            ...clusterExtra,
          },
        },
      ],
      users: [{ name: 'u', user: { exec } }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'ctx',
    }),
  );
  return file;
}

const execOf = (script: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'client.authentication.k8s.io/v1',
  command: process.execPath,
  args: [script, '--region', 'eu-1'],
  env: [{ name: 'PLUGIN_REGION', value: 'eu-1' }],
  interactiveMode: 'Never',
  ...extra,
});

describe('a token from an exec plugin', () => {
  test('is used for API calls; the plugin gets its args, env and ExecCredential (with the cluster when asked)', async () => {
    const p = await plugin([{ token: goodToken }]);
    const file = await kubeconfigWith(execOf(p.script, { provideClusterInfo: true }), {
      extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { audience: 'ctrlmetrics' } }],
    });
    const config = await loadRestConfig({ kubeconfig: file });
    assert.equal(config.token, goodToken);
    const client = new KubeClient(config);
    try {
      const review = await client.create<{ status: { allowed: boolean } }>(
        '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' } },
        },
      );
      assert.equal(review.status.allowed, true, "the call was made as the identity of the plugin's token");
    } finally {
      client.close();
    }
    const [call, ...more] = await p.calls();
    assert.equal(more.length, 0, 'one run while the token lasts');
    assert.deepEqual(call.args, ['--region', 'eu-1']);
    assert.equal(call.env.PLUGIN_REGION, 'eu-1');
    assert.deepEqual(call.info, {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: {
        interactive: false,
        cluster: {
          server: cluster.url,
          'certificate-authority-data': Buffer.from(cluster.caPem).toString('base64'),
          config: { audience: 'ctrlmetrics' },
        },
      },
    });
  });

  test('without provideClusterInfo the plugin is not told the cluster; v1beta1 works too', async () => {
    const p = await plugin([{ token: goodToken }], 'client.authentication.k8s.io/v1beta1');
    const file = await kubeconfigWith({
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: process.execPath,
      args: [p.script],
    });
    await loadRestConfig({ kubeconfig: file });
    assert.deepEqual((await p.calls())[0].info, {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });
  });

  test('a refused token is renewed: after a 401 the plugin runs again and the next call succeeds', async () => {
    const p = await plugin([{ token: 'not-a-token' }, { token: goodToken }]);
    const config = await loadRestConfig({ kubeconfig: await kubeconfigWith(execOf(p.script)) });
    const client = new KubeClient(config);
    try {
      const review = () =>
        client.create('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb: 'get', resource: 'pods' } },
        });
      const first = await review().then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(first instanceof KubeApiError && first.status === 401, 'the first token is refused');
      await review();
      assert.equal((await p.calls()).length, 2);
    } finally {
      client.close();
    }
  });

  test('an expired token is renewed before it is used; one that has not expired is not', async () => {
    const p = await plugin([
      { token: 'first', expirationTimestamp: '2026-12-07T10:00:00Z' },
      { token: 'second', expirationTimestamp: '2026-12-07T11:00:00Z' },
    ]);
    let now = Date.parse('2026-12-07T09:00:00Z');
    const exec = new ExecCredentialPlugin(execOf(p.script), { server: cluster.url }, dir, 'test', {
      now: () => now,
      stdinIsTerminal: false,
    });
    assert.deepEqual(await exec.headers(), { Authorization: 'Bearer first' });
    now = Date.parse('2026-12-07T09:59:59Z');
    assert.deepEqual(await exec.headers(), { Authorization: 'Bearer first' });
    now = Date.parse('2026-12-07T10:00:01Z');
    assert.deepEqual(await exec.headers(), { Authorization: 'Bearer second' });
    assert.equal((await p.calls()).length, 2);
  });

  test('callers waiting at once share one run; a 401 on credentials already renewed runs nothing more', async () => {
    const p = await plugin([{ token: 'a' }, { token: 'b' }, { token: 'c' }]);
    const exec = new ExecCredentialPlugin(execOf(p.script), { server: cluster.url }, dir, 'test', {
      stdinIsTerminal: false,
    });
    const [x, y] = await Promise.all([exec.credentials(), exec.credentials()]);
    assert.equal(x, y);
    const renewed = await exec.refused(x);
    assert.equal(renewed.token, 'b');
    assert.equal((await exec.refused(x)).token, 'b', 'the refusal of old credentials: already renewed');
    assert.equal((await p.calls()).length, 2);
  });

  test("a relative command is found from the kubeconfig's folder", async () => {
    const p = await plugin([{ token: goodToken }]);
    const wrapper = join(dir, `run-${++n}.sh`);
    await writeFile(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${p.script}" "$@"\n`, { mode: 0o755 });
    const file = await kubeconfigWith({
      apiVersion: 'client.authentication.k8s.io/v1',
      command: `./${wrapper.slice(dir.length + 1)}`,
      interactiveMode: 'Never',
    });
    assert.equal((await loadRestConfig({ kubeconfig: file })).token, goodToken);
  });
});

test('a client certificate from an exec plugin is what the client presents', async () => {
  // the authority authenticates tokens only: a TLS server that requires client certificates tells what is presented
  const ca = await generateCA('exec-test-ca');
  const serving = await issueServingCert(ca, ['127.0.0.1']);
  const client = await issueClientCert(ca, 'exec-user', ['exec-group']);
  const server = https.createServer(
    { key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ subject: peer.subject?.CN }));
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const p = await plugin([{ clientCertificateData: client.certPem, clientKeyData: client.keyPem }]);
    const file = await kubeconfigWith(execOf(p.script), {
      server: url,
      'certificate-authority-data': Buffer.from(ca.certPem).toString('base64'),
    });
    const config = await loadRestConfig({ kubeconfig: file });
    assert.equal(config.token, undefined);
    const kc = new KubeClient(config);
    try {
      assert.deepEqual(await kc.get('/whoami'), { subject: 'exec-user' });
    } finally {
      kc.close();
    }
  } finally {
    server.close();
  }
});

describe('a plugin that fails is one clear error at load', () => {
  const cases: Array<[string, unknown[] | undefined, Record<string, unknown>, RegExp]> = [
    [
      'a command that is not installed, with its install hint',
      undefined,
      { command: 'ctrlmetrics-no-such-plugin', args: [], installHint: 'install it with: brew install no-such-plugin' },
      /getting credentials: exec: executable ctrlmetrics-no-such-plugin not found\n\nIt looks like you are trying to use a client-go credential plugin that is not installed\.[\s\S]*\n\ninstall it with: brew install no-such-plugin$/,
    ],
    [
      'a non-zero exit',
      [{ exit: 3, stderr: 'please log in\n' }],
      {},
      /getting credentials: exec: executable .* failed with exit code 3$/,
    ],
    [
      'output that is not JSON',
      [{ raw: 'hello' }],
      {},
      /decoding stdout: the plugin did not print an ExecCredential as JSON/,
    ],
    [
      'another apiVersion than configured',
      [{ token: 't' }],
      { apiVersion: 'client.authentication.k8s.io/v1beta1' },
      /exec plugin is configured to use API version client\.authentication\.k8s\.io\/v1beta1, plugin returned version client\.authentication\.k8s\.io\/v1$/,
    ],
    ['no token and no certificate', [{}], {}, /exec plugin didn't return a token or a cert\/key pair/],
    [
      'a certificate without its key',
      [{ clientCertificateData: 'x' }],
      {},
      /exec plugin returned only certificate or key, not both/,
    ],
    [
      'a bad expirationTimestamp',
      [{ token: 't', expirationTimestamp: 'tomorrow' }],
      {},
      /expirationTimestamp that is not an RFC 3339 time: "tomorrow"/,
    ],
    [
      'v1alpha1, which Kubernetes removed',
      [{ token: 't' }],
      { apiVersion: 'client.authentication.k8s.io/v1alpha1' },
      /exec plugin: invalid apiVersion "client\.authentication\.k8s\.io\/v1alpha1"/,
    ],
    [
      'v1 without interactiveMode',
      [{ token: 't' }],
      { interactiveMode: undefined },
      /interactiveMode must be specified for client\.authentication\.k8s\.io\/v1/,
    ],
    [
      'interactiveMode Always without a terminal',
      [{ token: 't' }],
      { interactiveMode: 'Always' },
      /exec plugin cannot support interactive mode: standard input is not a terminal/,
    ],
  ];
  for (const [name, answers, extra, expected] of cases) {
    test(name, async () => {
      const script = answers ? (await plugin(answers)).script : '';
      const exec = { ...execOf(script), ...(answers ? {} : { args: [] }), ...extra };
      for (const [k, v] of Object.entries(exec)) if (v === undefined) delete (exec as Record<string, unknown>)[k];
      const file = await kubeconfigWith(exec);
      // a child with no terminal on stdin, as an operator in a pod
      const { stdout } = await run(
        process.execPath,
        [
          '--conditions=ctrlmetrics-source',
          '--import',
          'tsx',
          join(import.meta.dirname, 'fixtures', 'load-config.ts'),
          file,
        ],
        { timeout: 60_000 },
      );
      assert.match(stdout.trim(), /^ERROR /);
      assert.match(stdout.trim().slice('ERROR '.length), expected);
    });
  }

  test('the error of a failed load is a KubeConfigError that never carries the token', async () => {
    const p = await plugin([{ token: 'SECRET-FROM-PLUGIN', expirationTimestamp: 'never' }]);
    await assert.rejects(
      loadRestConfig({ kubeconfig: await kubeconfigWith(execOf(p.script)) }),
      (e: Error) => e instanceof KubeConfigError && !e.message.includes('SECRET-FROM-PLUGIN'),
    );
  });
});

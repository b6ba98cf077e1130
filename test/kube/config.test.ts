/**
 * Loading the API configuration (`loadRestConfig`): kubeconfigs with static identities are read without
 * `@kubernetes/client-node` and give what client-node's `KubeConfig` gives for the same file (client-node is the
 * reference here); exec plugins run without it (exec-credential.test.ts); auth providers go through it; in-cluster tokens rotate; bad files are one clear
 * error each.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeConfigError, loadRestConfig, type RestConfig } from '../../packages/ctrlmetrics/src/kube/config.js';
import { inClusterConfig } from '../../packages/ctrlmetrics/src/kube/kubeconfig.js';

const run = promisify(execFile);
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ctrlmetrics-kubeconfig-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const CA = '-----BEGIN CERTIFICATE-----\nY2E=\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nY2VydA==\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\na2V5\n-----END PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

let n = 0;
async function kubeconfig(doc: Record<string, unknown> | string): Promise<string> {
  const file = join(dir, `config-${++n}`);
  await writeFile(file, typeof doc === 'string' ? doc : stringify(doc));
  return file;
}

function doc(
  cluster: Record<string, unknown>,
  user: Record<string, unknown> | undefined,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c1', cluster }],
    users: user ? [{ name: 'u1', user }] : [],
    contexts: [{ name: 'ctx', context: { cluster: 'c1', ...(user ? { user: 'u1' } : {}) } }],
    'current-context': 'ctx',
    ...extra,
  };
}

/** What client-node makes of the file: the fields a RestConfig carries. */
async function reference(file: string, context?: string): Promise<Record<string, unknown>> {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  if (context) kc.setCurrentContext(context);
  const o: RequestOptions = {};
  await kc.applyToHTTPSOptions(o);
  const auth = (o.headers as Record<string, string> | undefined)?.Authorization;
  return {
    server: kc.getCurrentCluster()!.server,
    ca: o.ca?.toString(),
    cert: o.cert?.toString(),
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a PEM string or Buffer here
    key: o.key?.toString(),
    token: auth?.startsWith('Bearer ') ? auth.slice(7) : undefined,
    insecure: o.rejectUnauthorized === false || kc.getCurrentCluster()!.skipTLSVerify,
  };
}

function fields(c: RestConfig): Record<string, unknown> {
  return {
    server: c.server,
    ca: c.ca?.toString(),
    cert: c.cert?.toString(),
    key: c.key?.toString(),
    token: c.token,
    insecure: c.insecureSkipTLSVerify === true,
  };
}

describe('static identities: the same answer as client-node, without loading it', () => {
  const cases: Array<[string, () => Promise<Record<string, unknown> | string>]> = [
    [
      'a token and CA data',
      async () => doc({ server: 'https://10.0.0.1:6443', 'certificate-authority-data': b64(CA) }, { token: 'tok-1' }),
    ],
    [
      'client certificate and key data',
      async () =>
        doc(
          { server: 'https://api.example:443/', 'certificate-authority-data': b64(CA) },
          { 'client-certificate-data': b64(CERT), 'client-key-data': b64(KEY) },
        ),
    ],
    [
      'certificate, key and CA files relative to the kubeconfig',
      async () => {
        await writeFile(join(dir, 'ca.crt'), CA);
        await writeFile(join(dir, 'client.crt'), CERT);
        await writeFile(join(dir, 'client.key'), KEY);
        return doc(
          { server: 'https://10.0.0.2:6443', 'certificate-authority': 'ca.crt' },
          { 'client-certificate': 'client.crt', 'client-key': 'client.key' },
        );
      },
    ],
    [
      'an absolute token file',
      async () => {
        await writeFile(join(dir, 'token-abs'), 'tok-from-file\n');
        return doc({ server: 'https://10.0.0.3:6443' }, { 'token-file': join(dir, 'token-abs') });
      },
    ],
    [
      'insecure-skip-tls-verify',
      async () => doc({ server: 'https://10.0.0.4:6443', 'insecure-skip-tls-verify': true }, { token: 'tok-2' }),
    ],
    ['no user', async () => doc({ server: 'https://10.0.0.5:6443' }, undefined)],
    // written as text: YAML 1.1 merge keys and aliases, which kubectl's parser and client-node's (js-yaml) resolve
    [
      'anchors, aliases and a merge key',
      async () =>
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: c1',
          '  cluster: &base',
          '    server: https://10.0.0.6:6443',
          `    certificate-authority-data: ${b64(CA)}`,
          '- name: c2',
          '  cluster:',
          '    <<: *base',
          '    server: https://10.0.0.7:6443',
          'users:',
          '- name: u1',
          '  user: {token: tok-3}',
          'contexts:',
          '- {name: ctx, context: {cluster: c2, user: u1}}',
          'current-context: ctx',
          '',
        ].join('\n'),
    ],
    [
      'a JSON kubeconfig',
      async () =>
        JSON.stringify(
          doc({ server: 'https://10.0.0.8:6443', 'certificate-authority-data': b64(CA) }, { token: 'tok-4' }),
        ),
    ],
  ];
  for (const [name, make] of cases) {
    test(name, async () => {
      const file = await kubeconfig(await make());
      const ours = fields(await loadRestConfig({ kubeconfig: file }));
      const ref = await reference(file);
      // client-node keeps a token file's trailing newline in the header; the API server trims it, as we do
      if (typeof ref.token === 'string') ref.token = ref.token.trim();
      assert.deepEqual(ours, ref);
    });
  }

  test('--context picks another context', async () => {
    const file = await kubeconfig({
      clusters: [
        { name: 'a', cluster: { server: 'https://a.example:6443' } },
        { name: 'b', cluster: { server: 'https://b.example:6443' } },
      ],
      users: [
        { name: 'ua', user: { token: 'ta' } },
        { name: 'ub', user: { token: 'tb' } },
      ],
      contexts: [
        { name: 'ca', context: { cluster: 'a', user: 'ua' } },
        { name: 'cb', context: { cluster: 'b', user: 'ub' } },
      ],
      'current-context': 'ca',
    });
    assert.deepEqual(fields(await loadRestConfig({ kubeconfig: file, context: 'cb' })), await reference(file, 'cb'));
    assert.equal((await loadRestConfig({ kubeconfig: file })).server, 'https://a.example:6443');
  });

  test('a relative token file is read from the kubeconfig folder and re-read on rotation; impersonation is kept', async () => {
    await writeFile(join(dir, 'token-rel'), 'first\n');
    const file = await kubeconfig(
      doc({ server: 'https://10.0.0.6:6443' }, { 'token-file': 'token-rel', as: 'jane', 'as-groups': ['devs'] }),
    );
    const c = await loadRestConfig({ kubeconfig: file });
    assert.equal(c.token, 'first');
    assert.equal(c.impersonateUser, 'jane');
    assert.deepEqual(c.impersonateGroups, ['devs']);
    await writeFile(join(dir, 'token-rel'), 'second\n');
    assert.deepEqual(await c.authHeaders!(), { Authorization: 'Bearer second' });
  });

  test('a manager-style load of a static kubeconfig or an exec plugin never imports @kubernetes/client-node or the yaml package; an auth-provider loads client-node', async () => {
    const fixture = join(import.meta.dirname, 'fixtures', 'load-config.ts');
    const child = (file: string) =>
      run(process.execPath, ['--conditions=ctrlmetrics-source', '--import', 'tsx', fixture, file], { timeout: 60_000 });
    const token = await kubeconfig(doc({ server: 'https://10.0.0.7:6443' }, { token: 'static' }));
    assert.equal((await child(token)).stdout.trim(), 'SERVER https://10.0.0.7:6443 TOKEN static');
    const script = join(dir, 'plugin-static.mjs');
    await writeFile(
      script,
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-plugin' } }));\n`,
    );
    const exec = await kubeconfig(
      doc(
        { server: 'https://10.0.0.8:6443' },
        {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: process.execPath,
            args: [script],
            interactiveMode: 'Never',
          },
        },
      ),
    );
    assert.equal((await child(exec)).stdout.trim(), 'SERVER https://10.0.0.8:6443 TOKEN from-plugin');
    // positive control: the hook does catch client-node when the path needs it
    const provider = await kubeconfig(
      doc({ server: 'https://10.0.0.8:6443' }, { 'auth-provider': { name: 'oidc', config: { 'id-token': 'x' } } }),
    );
    assert.match((await child(provider)).stdout, /FORBIDDEN_IMPORT @kubernetes\/client-node/);
  });

  test('an auth-provider without the optional @kubernetes/client-node installed says what to install or use instead', async () => {
    const fixture = join(import.meta.dirname, 'fixtures', 'load-config.ts');
    const provider = await kubeconfig(
      doc({ server: 'https://10.0.0.8:6443' }, { 'auth-provider': { name: 'oidc', config: { 'id-token': 'x' } } }),
    );
    const { stdout } = await run(
      process.execPath,
      ['--conditions=ctrlmetrics-source', '--import', 'tsx', fixture, provider],
      {
        timeout: 60_000,
        env: { ...process.env, HIDE_CLIENT_NODE: '1' },
      },
    );
    assert.match(
      stdout.trim(),
      /^ERROR kubeconfig .*: its user authenticates with an auth-provider, which needs the optional package @kubernetes\/client-node: install it \(npm install @kubernetes\/client-node\), or use an exec credential plugin/,
    );
  });
});

describe('exec credential plugins (more in exec-credential.test.ts)', () => {
  test('the token the plugin prints is used, and asked again for fresh headers', async () => {
    const script = join(dir, 'plugin.mjs');
    await writeFile(
      script,
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-plugin' } }));\n`,
    );
    const file = await kubeconfig(
      doc(
        { server: 'https://10.0.0.9:6443' },
        {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: process.execPath,
            args: [script],
            interactiveMode: 'Never',
          },
        },
      ),
    );
    const c = await loadRestConfig({ kubeconfig: file });
    assert.equal(c.server, 'https://10.0.0.9:6443');
    assert.equal(c.token, 'from-plugin');
    assert.deepEqual(await c.authHeaders!(), { Authorization: 'Bearer from-plugin' });
  });
});

describe('in-cluster', () => {
  test('server from the service env, CA and a token that rotates', async () => {
    const sa = await mkdtemp(join(dir, 'sa-'));
    await writeFile(join(sa, 'token'), 'sa-1');
    await writeFile(join(sa, 'ca.crt'), CA);
    const c = inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    assert.equal(c.server, 'https://10.96.0.1:443');
    assert.equal(c.ca?.toString(), CA);
    assert.equal(c.token, 'sa-1');
    await writeFile(join(sa, 'token'), 'sa-2');
    assert.deepEqual(await c.authHeaders!(), { Authorization: 'Bearer sa-2' });
    assert.equal(
      inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, sa).server,
      'https://[fd00::1]:6443',
    );
  });
});

describe('bad kubeconfigs are one clear error each', () => {
  const cases: Array<[string, Record<string, unknown> | string, RegExp]> = [
    [
      'malformed YAML',
      'clusters: [\n  - name: x\n    cluster: {server: "unterminated',
      /^cannot load kubeconfig .*config-\d+: [^\n]+$/,
    ],
    [
      'a context that is not in the file',
      doc({ server: 'https://x:1' }, { token: 't' }, { 'current-context': 'nope' }),
      /^context "nope" is not in kubeconfig .* \(it has: ctx\)$/,
    ],
    [
      'no current-context',
      doc({ server: 'https://x:1' }, { token: 't' }, { 'current-context': '' }),
      /has no current-context: pass --context NAME/,
    ],
    [
      'a context naming a missing user',
      {
        ...doc({ server: 'https://x:1' }, undefined),
        contexts: [{ name: 'ctx', context: { cluster: 'c1', user: 'ghost' } }],
      },
      /names user "ghost", which is not in the file/,
    ],
    [
      'basic auth',
      doc({ server: 'https://x:1' }, { username: 'admin', password: 'secret' }),
      /basic authentication \(username\/password\) was removed from Kubernetes in 1\.19/,
    ],
    [
      'a certificate without a key',
      doc({ server: 'https://x:1' }, { 'client-certificate-data': b64(CERT) }),
      /client certificate without a key/,
    ],
    [
      'a missing CA file',
      doc({ server: 'https://x:1', 'certificate-authority': 'missing-ca.crt' }, { token: 't' }),
      /cannot read the certificate authority .*missing-ca\.crt: ENOENT/,
    ],
    ['a cluster without a server', doc({}, { token: 't' }), /has no server/],
    ['clusters that are not a list', { clusters: { name: 'x' } }, /clusters must be a list/],
  ];
  for (const [name, content, expected] of cases) {
    test(name, async () => {
      const file = join(dir, `config-${++n}`);
      await writeFile(file, typeof content === 'string' ? content : stringify(content));
      await assert.rejects(
        loadRestConfig({ kubeconfig: file }),
        (e: Error) => e instanceof KubeConfigError && expected.test(e.message),
      );
    });
  }
  test('a token never appears in an error', async () => {
    const file = await kubeconfig(
      doc({ server: 'https://x:1' }, { token: 'SECRET-TOKEN-VALUE' }, { 'current-context': 'nope' }),
    );
    await assert.rejects(loadRestConfig({ kubeconfig: file }), (e: Error) => !e.message.includes('SECRET-TOKEN-VALUE'));
  });
});

/**
 * The service-account issuer's discovery documents on a real kube-apiserver and on the authority, side by side:
 * the same requests (Accept headers, methods, identities) must get the same status, content type and caching
 * headers from both; and the metrics filter's key reader (IssuerKeys) must read the keys from both as a manager's
 * service account would. A real server answers `/openid/v1/jwks` to `Accept: application/json` with 406, which
 * once kept the filter's `signed` admission lane shut on every real cluster.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import { IssuerKeys } from '../../packages/ctrlmetrics/src/metrics/filters/issuer-keys.js';
import { createLogger } from '../../packages/ctrlmetrics/src/util/log.js';
import { startTestCluster, type ApiCluster, type TestCluster } from '../helpers/cluster.js';
import { LogCapture } from '../helpers/log-capture.js';
import { REAL_KUBE_SKIP, runName, startRealKube, type RealKube } from '../helpers/real-kube.js';

interface Answer {
  status: number;
  contentType: string | undefined;
  cacheControl: string | undefined;
  body: string;
}

function get(
  c: ApiCluster,
  path: string,
  opts: { token?: string; accept?: string; method?: string; admin?: RealKube },
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (opts.accept !== undefined) headers.Accept = opts.accept;
  if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
  return new Promise((resolve, reject) => {
    const req = request(`${c.url}${path}`, { method: opts.method ?? 'GET', ca: c.caPem, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          contentType: res.headers['content-type'],
          cacheControl: res.headers['cache-control'],
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const NS = runName('issuer-discovery');
const JWKS = '/openid/v1/jwks';
const CONFIG = '/.well-known/openid-configuration';
/**
 * [path, Accept (undefined: none), method]. The trailing-slash paths are left out: 1.25's bootstrap role lets
 * service accounts get only the paths without the slash, 1.32's (which the authority emulates) both.
 */
const CASES: Array<[string, string | undefined, string]> = [
  [JWKS, 'application/json', 'GET'],
  [JWKS, 'application/jwk-set+json', 'GET'],
  [JWKS, 'application/json, */*', 'GET'],
  [JWKS, 'application/jwk-set+json, application/json;q=0.9', 'GET'],
  [JWKS, '*/*', 'GET'],
  [JWKS, undefined, 'GET'],
  [JWKS, 'application/*', 'GET'],
  [JWKS, 'text/plain', 'GET'],
  [JWKS, 'application/jwk-set+json; charset=utf-8', 'GET'],
  [JWKS, undefined, 'HEAD'],
  [JWKS, undefined, 'POST'],
  [CONFIG, 'application/json', 'GET'],
  [CONFIG, undefined, 'GET'],
  [CONFIG, 'application/jwk-set+json', 'GET'],
  [CONFIG, 'application/*', 'GET'],
  [CONFIG, undefined, 'HEAD'],
];

describe('issuer discovery: a real kube-apiserver and the authority answer alike', { skip: REAL_KUBE_SKIP }, () => {
  let kube: RealKube;
  let authority: TestCluster;
  const tokens = new Map<ApiCluster, string>();
  const logs = new LogCapture();

  before(async () => {
    [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
    for (const c of [kube, authority]) tokens.set(c, await c.serviceAccountToken(NS, 'reader'));
  });
  after(async () => {
    logs.restore();
    await Promise.all([kube?.stop(), authority?.stop()]);
  });

  test('status, content type and caching per Accept and method', async () => {
    const rows: string[] = [];
    for (const [path, accept, method] of CASES) {
      const [real, ours] = await Promise.all(
        [kube, authority].map((c) => get(c, path, { token: tokens.get(c), accept, method })),
      );
      const show = (a: Answer) => `${a.status} ${a.contentType} ${a.cacheControl}`;
      rows.push(`${method} ${path} Accept=${accept ?? '(none)'}: real ${show(real)} | authority ${show(ours)}`);
      assert.equal(show(ours), show(real), rows.at(-1));
      if (real.status === 406) assert.equal(JSON.parse(ours.body).message, JSON.parse(real.body).message);
    }
    // the answers that matter to clients, as the real server gave them when this test was written
    assert.match(rows[0], /^GET \/openid\/v1\/jwks Accept=application\/json: real 406 /);
    assert.match(rows[1], /real 200 application\/jwk-set\+json public, max-age=3600/);
  });

  test('anonymous requests are refused (403) by both', async () => {
    for (const c of [kube, authority])
      assert.equal((await get(c, JWKS, { accept: 'application/jwk-set+json' })).status, 403);
  });

  test("the metrics filter's key reader reads the keys of both as a manager's service account", async () => {
    for (const c of [kube, authority]) {
      const cfg = await c.managerConfig(NS, 'manager');
      const client = new KubeClient(cfg);
      try {
        const keys = new IssuerKeys(client, undefined, undefined, createLogger('issuer-keys-test'));
        await keys.load();
        assert.equal(
          keys.ready,
          true,
          `keys read from ${c === kube ? 'the real server' : 'the authority'}: ${logs.lines.join('\n')}`,
        );
        assert.equal(await keys.signedByCluster(tokens.get(c)!), true);
        assert.equal(await keys.signedByCluster('garbage'), false);
      } finally {
        client.close();
      }
    }
  });
});

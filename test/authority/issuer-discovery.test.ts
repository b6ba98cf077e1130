/**
 * The authority's service-account issuer discovery documents answer as kube-apiserver v1.25.9 answered the same
 * requests (status, content type, Cache-Control), written down here so a clone without a real control plane still
 * checks them; test/real-api/issuer-discovery.test.ts compares the two servers live.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { admits } from '../../packages/envtest/src/issuer-discovery.js';

let cluster: TestCluster;
let token: string;
before(async () => {
  cluster = await startTestCluster();
  token = await cluster.serviceAccountToken('discovery', 'reader');
});
after(() => cluster?.stop());

function get(
  path: string,
  accept: string | undefined,
  method = 'GET',
  asAdmin = false,
): Promise<{ line: string; body: string }> {
  const admin = cluster.authority.restConfig;
  const headers: Record<string, string> = {};
  const bearer = asAdmin ? admin.token : token;
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const identity = asAdmin ? { cert: admin.cert, key: admin.key } : {};
  if (accept !== undefined) headers.Accept = accept;
  return new Promise((resolve, reject) => {
    request(`${cluster.url}${path}`, { method, ca: cluster.caPem, headers, ...identity }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString('utf8')));
      res.on('end', () =>
        resolve({ line: `${res.statusCode} ${res.headers['content-type']} ${res.headers['cache-control']}`, body }),
      );
    })
      .on('error', reject)
      .end();
  });
}

const OK_JWKS = '200 application/jwk-set+json public, max-age=3600';
const OK_CONFIG = '200 application/json public, max-age=3600';
const REFUSED = '406 application/json no-cache, private';
const NOT_ALLOWED = '405 application/json no-cache, private';

describe('issuer discovery documents (as kube-apiserver answers them)', () => {
  test('/openid/v1/jwks is application/jwk-set+json only', async () => {
    const cases: Array<[string | undefined, string]> = [
      ['application/json', REFUSED],
      ['application/*', REFUSED],
      ['text/plain', REFUSED],
      ['application/jwk-set+json', OK_JWKS],
      ['application/json, */*', OK_JWKS],
      ['application/jwk-set+json; charset=utf-8', OK_JWKS],
      ['*/*', OK_JWKS],
      [undefined, OK_JWKS],
    ];
    for (const [accept, want] of cases)
      assert.equal((await get('/openid/v1/jwks', accept)).line, want, `Accept: ${accept}`);
    const refused = JSON.parse((await get('/openid/v1/jwks', 'application/json')).body);
    assert.equal(refused.reason, 'NotAcceptable');
    assert.equal(refused.message, '406: Not Acceptable\n\nAvailable representations: application/jwk-set+json');
    const set = JSON.parse((await get('/openid/v1/jwks', undefined)).body);
    assert.equal(set.keys.length, 1);
    assert.equal(set.keys[0].use, 'sig');
  });

  test('/.well-known/openid-configuration is application/json only', async () => {
    assert.equal((await get('/.well-known/openid-configuration', 'application/json')).line, OK_CONFIG);
    assert.equal((await get('/.well-known/openid-configuration', undefined)).line, OK_CONFIG);
    assert.equal((await get('/.well-known/openid-configuration', 'application/jwk-set+json')).line, REFUSED);
    const doc = JSON.parse((await get('/.well-known/openid-configuration', undefined)).body);
    assert.equal(doc.jwks_uri, `${cluster.url}/openid/v1/jwks`);
  });

  test('GET only: HEAD and POST get 405 (a service account is not even authorized for them: 403)', async () => {
    for (const p of ['/openid/v1/jwks', '/.well-known/openid-configuration']) {
      for (const method of ['HEAD', 'POST']) {
        assert.equal((await get(p, undefined, method, true)).line, NOT_ALLOWED, `${method} ${p} as admin`);
        assert.equal(
          (await get(p, undefined, method)).line.split(' ')[0],
          '403',
          `${method} ${p} as a service account`,
        );
      }
    }
  });

  test('Accept matching: whole types or */*, parameters ignored', () => {
    assert.equal(admits(undefined, 'application/json'), true);
    assert.equal(admits('  ', 'application/json'), true);
    assert.equal(admits('APPLICATION/JSON;q=0.5', 'application/json'), true);
    assert.equal(admits('application/*', 'application/json'), false);
    assert.equal(admits('text/html, */*;q=0.1', 'application/json'), true);
  });
});

// Property: whatever method, path, query and body a client sends (as admin, as a service account, anonymously),
// the authority answers with a Kubernetes status code below 500 and a JSON body, and keeps serving.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import net from 'node:net';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call } from './https.js';
import { propertyParams } from '../helpers/property.js';

const SEGMENTS = [
  'api',
  'apis',
  'v1',
  'v2',
  'namespaces',
  'default',
  'kube-system',
  'nope',
  'configmaps',
  'secrets',
  'serviceaccounts',
  'token',
  'services',
  'status',
  'scale',
  'apps',
  'deployments',
  'rbac.authorization.k8s.io',
  'clusterroles',
  'rolebindings',
  'admin',
  'authentication.k8s.io',
  'tokenreviews',
  'authorization.k8s.io',
  'subjectaccessreviews',
  'selfsubjectrulesreviews',
  'version',
  'openapi',
  'healthz',
  '..',
  '.',
  '%2F',
  '%zz',
  'x'.repeat(300),
  'Upper_Case',
  'events',
  'apiextensions.k8s.io',
  'customresourcedefinitions',
];
const QUERIES = [
  '',
  '?labelSelector=a%3Db',
  '?labelSelector=a%20in%20(',
  '?fieldSelector=metadata.name%3Dx',
  '?fieldSelector=bad',
  '?dryRun=All',
  '?fieldValidation=Strict',
  '?fieldValidation=Nope',
  '?fieldManager=fuzz',
  '?resourceVersion=abc',
];
const CONTENT_TYPES = [
  'application/json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
  'application/yaml',
  'text/plain',
  'application/vnd.kubernetes.protobuf',
];

describe('authority HTTP robustness', () => {
  let a: Authority;
  let saToken: string;

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    await call(a.url, a.caPem, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
      token: a.adminToken,
      body: { metadata: { name: 'fuzzer' } },
    });
    saToken = (
      await call(a.url, a.caPem, 'POST', '/api/v1/namespaces/default/serviceaccounts/fuzzer/token', {
        token: a.adminToken,
        body: {},
      })
    ).body.status.token;
  });
  after(async () => {
    await a?.stop();
  });

  it('never answers 5xx and always answers JSON, for random requests', async () => {
    const who = fc.constantFrom<'admin' | 'sa' | 'anonymous'>('admin', 'sa', 'anonymous');
    const body = fc.oneof(
      fc.constant(undefined),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record({
          apiVersion: fc.constantFrom('v1', 'apps/v1', 'x/y'),
          kind: fc.constantFrom('ConfigMap', 'Secret', 'Namespace', 'TokenReview', 'Nope'),
          metadata: fc.jsonValue({ maxDepth: 2 }),
          spec: fc.jsonValue({ maxDepth: 2 }),
          data: fc.jsonValue({ maxDepth: 1 }),
        })
        .map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 40 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
        fc.array(fc.constantFrom(...SEGMENTS), { minLength: 0, maxLength: 7 }),
        fc.constantFrom(...QUERIES),
        fc.constantFrom(...CONTENT_TYPES),
        body,
        who,
        async (method, segs, query, contentType, raw, as) => {
          const token = as === 'admin' ? a.adminToken : as === 'sa' ? saToken : undefined;
          const r = await call(a.url, a.caPem, method, `/${segs.join('/')}${query}`, {
            token,
            raw,
            contentType,
            timeoutMs: 10_000,
          });
          assert.ok(
            r.status >= 200 && r.status < 500,
            `${method} /${segs.join('/')}${query} (${as}) → ${r.status} ${r.text.slice(0, 300)}`,
          );
          // kube answers "ok" as text there; the path as the server resolves it (`/./healthz` is `/healthz`)
          const plainText = /^\/(healthz|livez|readyz)$/.test(
            new URL(`/${segs.join('/')}`, 'https://authority.invalid').pathname,
          );
          if (method !== 'HEAD' && r.text && !plainText) {
            assert.doesNotThrow(
              () => JSON.parse(r.text),
              `${method} /${segs.join('/')}${query}: not JSON: ${r.text.slice(0, 200)}`,
            );
          }
        },
      ),
      propertyParams(400),
    );
    assert.equal((await call(a.url, a.caPem, 'GET', '/version')).status, 200, 'still serving');
  });

  it('never answers 5xx for random bodies sent to real object endpoints', async () => {
    const endpoints = [
      '/api/v1/namespaces',
      '/api/v1/namespaces/default/configmaps',
      '/api/v1/namespaces/default/configmaps/c',
      '/api/v1/namespaces/default/secrets/s',
      '/api/v1/namespaces/default/serviceaccounts/fuzzer/token',
      '/api/v1/namespaces/default/services/svc',
      '/apis/apps/v1/namespaces/default/deployments/d',
      '/apis/apps/v1/namespaces/default/deployments/d/scale',
      '/apis/apps/v1/namespaces/default/deployments/d/status',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/r',
      '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings/b',
      '/apis/authentication.k8s.io/v1/tokenreviews',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com',
    ];
    const value = fc.jsonValue({ maxDepth: 4 });
    const objectBody = fc.record(
      {
        apiVersion: fc.string(),
        kind: fc.string(),
        metadata: fc.oneof(
          value,
          fc.record(
            {
              name: fc.oneof(fc.constantFrom('c', 's', 'svc', 'd', 'r', 'b'), value),
              labels: value,
              annotations: value,
            },
            { requiredKeys: [] },
          ),
        ),
        spec: value,
        data: value,
        rules: value,
        subjects: value,
        roleRef: value,
        status: value,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('POST', 'PUT', 'PATCH', 'GET', 'DELETE'),
        fc.constantFrom(...endpoints),
        fc.constantFrom(...CONTENT_TYPES.filter((c) => !c.includes('protobuf'))),
        fc.oneof(
          objectBody,
          fc.array(
            fc.record(
              {
                op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', 'x'),
                path: fc.constantFrom('', '/', '/data', '/metadata/name', '/spec/replicas', '/a~1b', 'x'),
                value,
                from: fc.constantFrom('/data', '/nope'),
              },
              { requiredKeys: ['op'] },
            ),
            { maxLength: 3 },
          ),
          value,
        ),
        async (method, path, contentType, b) => {
          const r = await call(a.url, a.caPem, method, path, {
            token: a.adminToken,
            raw: JSON.stringify(b),
            contentType,
            timeoutMs: 10_000,
          });
          assert.ok(
            r.status < 500,
            `${method} ${path} ${contentType} ${JSON.stringify(b).slice(0, 300)} → ${r.status} ${r.text.slice(0, 300)}`,
          );
        },
      ),
      propertyParams(400),
    );
    assert.equal((await call(a.url, a.caPem, 'GET', '/version')).status, 200, 'still serving');
  });

  it("takes keys named as Object.prototype's members for unknown fields of built-in objects, never a 500", async () => {
    const sneaky = { valueOf: false, constructor: { name: 1 }, toString: 'x' };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['/api/v1/namespaces', { metadata: { name: 'proto-ns' }, spec: sneaky }],
      ['/api/v1/namespaces/default/configmaps', { metadata: { name: 'proto-cm' }, ...sneaky }],
      [
        '/apis/apps/v1/namespaces/default/deployments',
        {
          metadata: { name: 'proto-d' },
          spec: {
            selector: { matchLabels: { a: 'b' } },
            template: {
              metadata: { labels: { a: 'b' } },
              spec: { containers: [{ name: 'c', image: 'i', ...sneaky }] },
            },
            ...sneaky,
          },
        },
      ],
    ];
    for (const [path, body] of cases) {
      // a `__proto__` key too: JSON.parse makes it an own key, as the request body arrives
      const raw = JSON.stringify(body).replaceAll('{"valueOf"', '{"__proto__":{"a":1},"valueOf"');
      const r = await call(a.url, a.caPem, 'POST', path, { token: a.adminToken, raw, contentType: 'application/json' });
      assert.equal(r.status, 201, `${path}: ${r.text.slice(0, 300)}`);
      assert.match(String(r.headers.warning), /unknown field \\"(spec\.)?valueOf\\"/, path);
      for (const key of ['valueOf', 'toString', 'constructor', '__proto__'])
        assert.ok(!JSON.stringify(r.body).includes(`"${key}"`), `${path}: ${key} stored: ${r.text.slice(0, 300)}`);
    }
  });

  it("answers a plain-HTTP request with kube-apiserver's (Go's) 400, word for word, and keeps serving HTTPS", async () => {
    const { hostname, port } = new URL(a.url);
    const got = await new Promise<string>((resolve, reject) => {
      const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) }, () =>
        socket.write('GET /api HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      let out = '';
      socket.setEncoding('latin1').on('data', (d: string) => (out += d));
      socket.setTimeout(10_000, () => socket.destroy(new Error('no close within 10 s')));
      socket.on('error', reject);
      socket.on('close', () => resolve(out));
    });
    assert.equal(got, 'HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n');
    assert.equal((await call(a.url, a.caPem, 'GET', '/api', { token: a.adminToken })).status, 200);
  });
});

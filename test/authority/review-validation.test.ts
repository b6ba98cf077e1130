// Invalid access reviews answered as kube-apiserver 1.32 answers them: every spec problem in one 422
// whose message names no kind (`.authorization.k8s.io "" is invalid: …`), the value of the both-attributes error as
// Go prints the internal struct. Expected texts from ../shared/reference/kube-apiserver-rules.md §6, not this code.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call, type CallOptions } from './https.js';

const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const SELF = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const LOCAL = '/apis/authorization.k8s.io/v1/namespaces/rev/localsubjectaccessreviews';

describe('access review validation', () => {
  let a: Authority;
  let admin: (method: string, path: string, o?: CallOptions) => ReturnType<typeof call>;
  const review = (path: string, spec: unknown) =>
    admin('POST', path, { body: { apiVersion: 'authorization.k8s.io/v1', spec } });

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    admin = (method, path, o = {}) => call(a.url, a.caPem, method, path, { token: a.adminToken, ...o });
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'rev' } } })).status, 201);
  });
  after(async () => {
    await a?.stop();
  });

  it('no user and no groups', async () => {
    const r = await review(SAR, { nonResourceAttributes: { path: '/metrics', verb: 'get' } });
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(
      r.body.message,
      '.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified',
    );
    assert.deepEqual(r.body.details, {
      group: 'authorization.k8s.io',
      causes: [
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "": at least one of user or group must be specified',
          field: 'spec.user',
        },
      ],
    });
  });

  it('both attribute blocks: the error is on nonResourceAttributes, with the struct as Go prints it', async () => {
    const r = await review(SAR, {
      user: 'u',
      nonResourceAttributes: { path: '/x', verb: 'get' },
      resourceAttributes: { verb: 'get', resource: 'pods' },
    });
    assert.equal(r.status, 422);
    assert.equal(
      r.body.message,
      '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes',
    );
  });

  it('neither block and no user: both problems, aggregated', async () => {
    const r = await review(SAR, {});
    assert.equal(r.status, 422);
    assert.equal(
      r.body.message,
      '.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
    );
    assert.equal(r.body.details.causes.length, 2);
  });

  it('a self review needs no user; a local one refuses another namespace and non-resource attributes', async () => {
    const self = await review(SELF, {});
    assert.equal(
      self.body.message,
      '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
    );
    assert.equal((await review(SELF, { nonResourceAttributes: { path: '/metrics', verb: 'get' } })).status, 201);
    const other = await review(LOCAL, {
      user: 'u',
      resourceAttributes: { namespace: 'elsewhere', verb: 'get', resource: 'pods' },
    });
    assert.equal(
      other.body.message,
      '.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "elsewhere": must match metadata.namespace',
    );
    const nonResource = await review(LOCAL, { user: 'u', nonResourceAttributes: { path: '/metrics', verb: 'get' } });
    assert.equal(
      nonResource.body.message,
      '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/metrics", Verb:"get"}: disallowed on this kind of request',
    );
    const ok = await review(LOCAL, {
      user: 'u',
      resourceAttributes: { namespace: 'rev', verb: 'get', resource: 'pods' },
    });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.status.allowed, false);
  });
});

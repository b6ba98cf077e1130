// Static tokens from a kube-apiserver style --token-auth-file (token,user,uid,"group1,group2"): TokenReview answers,
// requests made with them, audience handling (valid only for the API audiences), and a malformed file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call } from './https.js';

describe('static token file', () => {
  let dir: string;
  let a: Authority;
  const review = (token: string, audiences?: string[]) =>
    call(a.url, a.caPem, 'POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      token: a.adminToken,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: audiences ? { token, audiences } : { token },
      },
    });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authority-token-file-'));
    const file = join(dir, 'tokens.csv');
    writeFileSync(
      file,
      '# static users\nop-token-1234,operator,u-1,"system:masters,ops"\n\nscraper-token-5678,prometheus,u-2\n',
    );
    a = await startAuthority({ listen: '127.0.0.1:0', tokenAuthFile: file });
  });
  after(async () => {
    await a?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('TokenReview answers the user, uid and groups of the file, plus system:authenticated', async () => {
    const r = await review('op-token-1234');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status.authenticated, true);
    assert.deepEqual(r.body.status.user, {
      username: 'operator',
      uid: 'u-1',
      groups: ['system:masters', 'ops', 'system:authenticated'],
    });
    const noGroups = await review('scraper-token-5678');
    assert.deepEqual(noGroups.body.status.user.groups, ['system:authenticated']);
  });

  it('requests with a static token are authorized by RBAC for that user', async () => {
    assert.equal(
      (await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', { token: 'op-token-1234' })).status,
      200,
      'operator is in system:masters',
    );
    const denied = await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', { token: 'scraper-token-5678' });
    assert.equal(denied.status, 403);
    assert.match(denied.body.message, /User "prometheus" cannot list resource "namespaces"/);
    assert.equal(
      (await call(a.url, a.caPem, 'GET', '/api/v1/namespaces', { token: 'scraper-token-567' })).status,
      401,
      'a prefix is not the token',
    );
  });

  it('static tokens are valid only for the API audiences', async () => {
    const other = await review('op-token-1234', ['some-other-audience']);
    assert.equal(other.body.status.authenticated, undefined);
    assert.ok(other.body.status.error);
    const api = await review('op-token-1234', ['https://kubernetes.default.svc.cluster.local', 'x']);
    assert.equal(api.body.status.authenticated, true);
    assert.deepEqual(api.body.status.audiences, ['https://kubernetes.default.svc.cluster.local']);
  });

  it('a malformed file stops the start with the line number', async () => {
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'good,user,uid\nonly-two,fields\n');
    await assert.rejects(
      () => startAuthority({ listen: '127.0.0.1:0', tokenAuthFile: bad }),
      /bad\.csv:2: expected token,user,uid/,
    );
  });
});

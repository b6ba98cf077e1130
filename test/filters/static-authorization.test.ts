// Static authorization: a rule allows a user (by name or group) a verb on a path without a
// SubjectAccessReview — counted where the API server is reached (a counting proxy in front of the authority); what
// no rule matches is reviewed as before; half-written rules and kube-rbac-proxy files with resource fields are refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { scrape, startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';
import {
  StaticAuthorizationError,
  loadStaticAuthorizationFile,
  validateStaticRules,
} from '../../packages/ctrlmetrics/src/metrics/filters/index.js';

describe('static authorization', () => {
  let cluster: TestCluster;
  let proxy: FaultProxy;
  let ep: SecureEndpoint;
  let dir: string;
  let byName: string;
  let byGroup: string;
  let other: string;
  const sars = () => proxy.count('/subjectaccessreviews');
  const tokenReviews = () => proxy.count('/tokenreviews');

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'static-authz-'));
    cluster = await startTestCluster();
    proxy = new FaultProxy(cluster.authority.url, cluster.authority.caPem);
    await proxy.start();
    const cfg = await cluster.managerConfig();
    // none of these service accounts is bound to the metrics-reader role: only the rules can let them in
    byName = await cluster.serviceAccountToken('monitoring', 'static-by-name');
    byGroup = await cluster.serviceAccountToken('sidecars', 'static-by-group');
    other = await cluster.serviceAccountToken('monitoring', 'not-in-any-rule');
    const file = join(dir, 'static.yaml');
    writeFileSync(
      file,
      [
        '# kube-rbac-proxy layout',
        'authorization:',
        '  static:',
        '  - user: {name: "system:serviceaccount:monitoring:static-by-name"}',
        '    path: /metrics',
        '    verb: get',
        '    resourceRequest: false',
        '  - user: {groups: ["system:serviceaccounts:sidecars"]}',
        '    path: /metrics*',
        '',
      ].join('\n'),
    );
    ep = await startSecureEndpoint(
      { server: proxy.url, ca: proxy.caPem, token: cfg.token },
      { filter: { staticAuthorization: loadStaticAuthorizationFile(file) } },
    );
  });
  after(async () => {
    await ep?.stop();
    await proxy?.stop();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a rule allows its user by name or group without a SubjectAccessReview; the token is still reviewed', async () => {
    const [s0, t0] = [sars(), tokenReviews()];
    assert.equal((await scrape(ep.port, { token: byName })).status, 200);
    assert.equal((await scrape(ep.port, { token: byGroup })).status, 200);
    assert.equal(sars(), s0, 'no SubjectAccessReview reached the API server');
    assert.equal(tokenReviews(), t0 + 2, 'each token was authenticated');
  });

  it('what no rule matches is reviewed: another user, another verb', async () => {
    const s0 = sars();
    assert.equal((await scrape(ep.port, { token: other })).status, 403);
    assert.equal((await scrape(ep.port, { token: byName, method: 'POST' })).status, 403, 'the rule names get only');
    assert.equal(sars(), s0 + 2);
    assert.equal(
      (await scrape(ep.port, { token: byName, path: '/metrics/extra' })).status,
      404,
      'paths nothing serves are answered before any authorization',
    );
    assert.equal((await scrape(ep.port, { token: 'not-a-token-at-all' })).status, 401, 'authentication comes first');
  });

  it('half-written rules and resource rules are refused with what to fix', () => {
    assert.throws(
      () => validateStaticRules([{ user: {}, path: '/metrics' }]),
      (e: Error) =>
        e instanceof StaticAuthorizationError &&
        /staticAuthorization\[0\]: name the user \(user\.name\) or groups \(user\.groups\)/.test(e.message),
    );
    assert.throws(
      () => validateStaticRules([{ user: { name: 'u' } }]),
      /path must be a non-resource path starting with "\/"/,
    );
    assert.throws(
      () => validateStaticRules([{ user: { name: 'u' }, path: '/metrics', verb: 'GET' }]),
      /verb must be a lower-case HTTP method/,
    );
    assert.throws(
      () => validateStaticRules([{ user: { name: 'u' }, path: '/metrics', resourceRequest: true }]),
      /resourceRequest rules are not supported/,
    );
    assert.throws(() => validateStaticRules({}), /expected a list of rules/);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'authorization:\n  rules: []\n');
    assert.throws(() => loadStaticAuthorizationFile(bad), /expected authorization\.static: \[rules\]/);
    assert.throws(
      () => loadStaticAuthorizationFile(join(dir, 'missing.yaml')),
      /cannot read the static authorization file/,
    );
    const malformed = join(dir, 'malformed.yaml');
    writeFileSync(malformed, 'authorization:\n  static: [{user: {name: u}, path: /metrics\n');
    assert.throws(
      () => loadStaticAuthorizationFile(malformed),
      /^StaticAuthorizationError: cannot read the static authorization file .*malformed\.yaml: [^\n]*\(\d+:\d+\)$/,
      'one line: what and where',
    );
    assert.deepEqual(
      validateStaticRules([{ user: { groups: ['g'] }, path: '/metrics' }]),
      [{ user: { groups: ['g'] }, path: '/metrics', verb: 'get' }],
      'verb defaults to get',
    );
  });
});

/**
 * kube-apiserver's rule matching for admission webhooks (operations, groups, versions, resources with their
 * wildcards, scope) and `matchPolicy: Equivalent`, on attribute sets written out by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  matchedVersion,
  objectSelectorMatches,
  ruleMatches,
  type AdmissionAttributes,
} from '../../packages/envtest/src/webhook-match.js';

const attrs = (o: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE',
  group: 'cache.example.com',
  version: 'v1alpha1',
  resource: 'memcacheds',
  subresource: '',
  namespace: 'default',
  object: { metadata: { labels: { app: 'a' } } },
  oldObject: null,
  ...o,
});
const rule = (resources: string[], o: Record<string, unknown> = {}) => ({
  operations: ['*'],
  apiGroups: ['*'],
  apiVersions: ['*'],
  resources,
  scope: '*',
  ...o,
});

test('resources: a name matches itself only; * every resource but no subresource; x/* and */* include the resource; */y one subresource everywhere', () => {
  const main = attrs();
  const status = attrs({ subresource: 'status' });
  const table: Array<[string, boolean, boolean]> = [
    ['memcacheds', true, false],
    ['memcacheds/status', false, true],
    ['memcacheds/*', true, true],
    ['*', true, false],
    ['*/*', true, true],
    ['*/status', false, true],
    ['*/scale', false, false],
    ['pods', false, false],
  ];
  for (const [entry, onMain, onStatus] of table) {
    assert.equal(ruleMatches(rule([entry]), main), onMain, `${entry} on memcacheds`);
    assert.equal(ruleMatches(rule([entry]), status), onStatus, `${entry} on memcacheds/status`);
  }
});

test('operations, groups and versions: listed or *; the core group is ""', () => {
  assert.equal(ruleMatches(rule(['*'], { operations: ['UPDATE'] }), attrs()), false);
  assert.equal(ruleMatches(rule(['*'], { operations: ['CREATE', 'UPDATE'] }), attrs()), true);
  assert.equal(ruleMatches(rule(['*'], { apiGroups: [''] }), attrs()), false);
  assert.equal(
    ruleMatches(rule(['*'], { apiGroups: [''] }), attrs({ group: '', version: 'v1', resource: 'configmaps' })),
    true,
  );
  assert.equal(ruleMatches(rule(['*'], { apiVersions: ['v1'] }), attrs()), false);
});

test('scope: Namespaced needs a namespace and is never the Namespace object; Cluster is the reverse', () => {
  const ns = attrs({ group: '', version: 'v1', resource: 'namespaces', namespace: 'team-a' });
  const clusterScoped = attrs({ namespace: '' });
  assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), attrs()), true);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), ns), false);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), clusterScoped), false);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), ns), true);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), clusterScoped), true);
  assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), attrs()), false);
});

test('matchPolicy: Exact wants the request version; Equivalent takes another served version of the resource', () => {
  const hook = { rules: [rule(['memcacheds'], { apiVersions: ['v1'] })] };
  assert.equal(matchedVersion({ ...hook, matchPolicy: 'Exact' }, attrs(), ['v1alpha1', 'v1']), undefined);
  assert.equal(matchedVersion({ ...hook, matchPolicy: 'Equivalent' }, attrs(), ['v1alpha1', 'v1']), 'v1');
  assert.equal(matchedVersion({ ...hook, matchPolicy: 'Equivalent' }, attrs(), ['v1alpha1']), undefined);
  assert.equal(matchedVersion({ rules: [rule(['memcacheds'])] }, attrs(), ['v1alpha1', 'v1']), 'v1alpha1');
});

test('object selector: the object or the old object; no object never matches a non-empty selector, no labels is the empty set', () => {
  const sel = { matchLabels: { app: 'a' } };
  assert.equal(objectSelectorMatches(sel, attrs()), true);
  assert.equal(
    objectSelectorMatches(sel, attrs({ object: null, oldObject: { metadata: { labels: { app: 'a' } } } })),
    true,
  );
  assert.equal(objectSelectorMatches(sel, attrs({ object: { metadata: {} } })), false);
  assert.equal(
    objectSelectorMatches(
      { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      attrs({ object: { metadata: {} } }),
    ),
    true,
  );
  assert.equal(
    objectSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, attrs({ object: null })),
    false,
  );
  assert.equal(objectSelectorMatches({}, attrs({ object: null })), true);
});

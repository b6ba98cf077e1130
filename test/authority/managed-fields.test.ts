// Server-side apply field sets (FieldsV1 shapes) and the removal of fields a manager no longer applies, following the
// Kubernetes server-side apply documentation: a field is removed when its only applier stops applying it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appliedFields, removeUnapplied } from '../../src/authority/managed-fields.js';

describe('server-side apply field sets', () => {
  it('uses f: keys for fields, k: keys for list elements merged by key, and treats other lists as atomic', () => {
    const set = appliedFields({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', namespace: 'n', labels: { app: 'd' } },
      spec: { replicas: 2, template: { spec: { containers: [{ name: 'a', image: 'x', args: ['--v=1'] }] } } },
      status: { replicas: 1 },
    });
    assert.deepEqual(set, {
      'f:spec': {
        'f:replicas': {},
        'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"a"}': { 'f:name': {}, 'f:image': {}, 'f:args': {} } } } },
      },
      'f:metadata': { 'f:labels': { 'f:app': {} } },
    });
  });

  it('removes what the manager applied before and applies no more, keeping what another manager applies', () => {
    const obj = { data: { a: '1', b: '2', c: '3' }, spec: { containers: [{ name: 'x', image: 'i' }, { name: 'y', image: 'j' }] } };
    const before = appliedFields({ data: { a: '1', b: '2', c: '3' }, spec: { containers: [{ name: 'x', image: 'i' }, { name: 'y', image: 'j' }] } });
    const after = appliedFields({ data: { a: '1' }, spec: { containers: [{ name: 'x', image: 'i' }] } });
    const other = appliedFields({ data: { c: '3' } });
    removeUnapplied(obj, before, after, [other]);
    assert.deepEqual(obj, { data: { a: '1', c: '3' }, spec: { containers: [{ name: 'x', image: 'i' }] } });
  });

  it('a list element the manager stops applying goes whole, even with fields the server defaulted in it', () => {
    const obj = { spec: { containers: [{ name: 'x', image: 'i' }, { name: 'y', image: 'j', imagePullPolicy: 'IfNotPresent' }] } };
    const before = appliedFields({ spec: { containers: [{ name: 'x', image: 'i' }, { name: 'y', image: 'j' }] } });
    removeUnapplied(obj, before, appliedFields({ spec: { containers: [{ name: 'x', image: 'i' }] } }), []);
    assert.deepEqual(obj, { spec: { containers: [{ name: 'x', image: 'i' }] } });
  });

  it('leaves fields nobody applied (set by updates) alone', () => {
    const obj = { metadata: { labels: { mine: '1', edited: '2' } } };
    removeUnapplied(obj, appliedFields({ metadata: { labels: { mine: '1' } } }), appliedFields({}), []);
    assert.deepEqual(obj, { metadata: { labels: { edited: '2' } } });
  });
});

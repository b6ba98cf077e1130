// semanticEqual, apimachinery's equality.Semantic.DeepEqual on JSON: key order, nil-versus-empty and quantities.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { semanticEqual } from '../../packages/ctrlmetrics/src/exports/client.js';

describe('semanticEqual', () => {
  it('ignores the order of object keys at every depth, not the order of list items', () => {
    assert.ok(
      semanticEqual(
        { data: { b: '2', a: '1' }, metadata: { name: 'x' } },
        { metadata: { name: 'x' }, data: { a: '1', b: '2' } },
      ),
    );
    assert.ok(!semanticEqual({ items: ['a', 'b'] }, { items: ['b', 'a'] }));
    assert.ok(!semanticEqual({ data: { a: '1' } }, { data: { a: '1', b: '2' } }));
    assert.ok(!semanticEqual({ data: { a: '1' } }, { data: { a: 1 } }));
    assert.ok(!semanticEqual({ spec: { paused: false } }, { spec: {} }), 'a false is not a missing field');
  });

  it('a missing, null, empty map or empty list field equals another of those, as Go nil and empty values', () => {
    assert.ok(semanticEqual({ metadata: { name: 'x', labels: {} } }, { metadata: { name: 'x' } }));
    assert.ok(semanticEqual({ spec: { finalizers: [] } }, { spec: { finalizers: null } }));
    assert.ok(!semanticEqual({ metadata: { labels: { a: '' } } }, { metadata: {} }));
  });

  it('compares resource quantities by value where the built-in types hold them', () => {
    const pod = (cpu: string, memory: string) => ({
      spec: { containers: [{ name: 'c', resources: { limits: { cpu, memory }, requests: { cpu } } }] },
    });
    assert.ok(semanticEqual(pod('500m', '1Gi'), pod('0.5', '1024Mi')));
    assert.ok(semanticEqual(pod('1', '1Ki'), pod('1000m', '1024')));
    assert.ok(semanticEqual(pod('1k', '1.5Gi'), pod('1e3', '1536Mi')));
    assert.ok(!semanticEqual(pod('1', '128Mi'), pod('1', '128M')), '128Mi is 134217728, 128M is 128000000');
    assert.ok(!semanticEqual(pod('100m', '1Gi'), pod('101m', '1Gi')));
    assert.ok(semanticEqual({ emptyDir: { sizeLimit: '1Gi' } }, { emptyDir: { sizeLimit: '1073741824' } }));
    assert.ok(
      semanticEqual(
        { spec: { hard: { 'requests.storage': '10Gi' } } },
        { spec: { hard: { 'requests.storage': '10240Mi' } } },
      ),
    );
  });

  it('compares strings elsewhere as written, even those that read as quantities', () => {
    assert.ok(!semanticEqual({ data: { replicas: '1' } }, { data: { replicas: '1.0' } }));
    assert.ok(!semanticEqual({ env: [{ name: 'N', value: '1k' }] }, { env: [{ name: 'N', value: '1000' }] }));
  });

  it('compares values that do not parse as quantities as written', () => {
    assert.ok(semanticEqual({ limits: { cpu: 'lots' } }, { limits: { cpu: 'lots' } }));
    assert.ok(!semanticEqual({ limits: { cpu: 'lots' } }, { limits: { cpu: 'many' } }));
    assert.ok(!semanticEqual({ limits: { cpu: '1e99999' } }, { limits: { cpu: '1e99998' } }));
  });
});

// Built-in objects in the key order kube-apiserver writes them (Go's encoding/json: a struct's fields in the type's
// order, a map's keys sorted), held to two independent sources: every built-in object a real kube-apiserver v1.25.9
// answered in the recorded traces (../shared/reference/kube-traces), and kubectl's own Go encoding of typed objects
// (`kubectl set env --local -o json` decodes a workload into its Go type and prints it), for a workload of each kind
// with every field of its type filled in. Each object is given with its keys reversed at every depth, so nothing of
// the order it was written in survives.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { kubeEncoded } from '../../packages/envtest/src/encoding.js';
import { builtinTypes, type FieldShape } from '../../packages/envtest/src/builtin-openapi.js';
import type { KubeObject, ResourceType } from '../../packages/envtest/src/types.js';

const run = promisify(execFile);
const TRACES = resolve(import.meta.dirname, '..', '..', '..', 'shared', 'reference', 'kube-traces');
const NO_TRACES = existsSync(TRACES)
  ? false
  : `the recorded traces are not at ${TRACES} (CI has ../shared beside the checkout)`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `v` with every object's keys in reverse order, at every depth. */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .reverse()
      .map((k) => [k, reversed(v[k])]),
  );
}

/** The resource type `kubeEncoded` needs for a built-in `apiVersion`/`kind`. */
function typeOf(apiVersion: string, kind: string): ResourceType {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return {
    group: group,
    version: version,
    kind,
    listKind: `${kind}List`,
    resource: `${kind.toLowerCase()}s`,
    singular: kind.toLowerCase(),
    namespaced: true,
    verbs: [],
    nameRule: 'subdomain',
  };
}

/** The built-in type of `apiVersion`/`kind`, if the recorded documents have it. */
function builtinType(apiVersion: string, kind: string): string | undefined {
  const gv = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return builtinTypes().kinds[`${gv}/${kind}`];
}

/** Every type reachable from `type` (itself included). */
function reachable(type: string, seen = new Set<string>()): Set<string> {
  if (seen.has(type)) return seen;
  seen.add(type);
  const visit = (shape: FieldShape): void => {
    if (Array.isArray(shape)) visit(shape[0]);
    else if (typeof shape === 'object') visit(shape['']);
    else if (builtinTypes().types[shape] !== undefined) reachable(shape, seen);
  };
  const fields = builtinTypes().types[type];
  if (fields !== undefined) {
    if (typeof fields === 'object' && !Array.isArray(fields) && !('' in fields)) Object.values(fields).forEach(visit);
    else visit(fields as FieldShape);
  }
  return seen;
}

/**
 * Where `a`'s keys are in another order than `b`'s (the first such object's path and both orders), if anywhere.
 * `sharedOnly`: only the keys both have are compared — kubectl's Go encoding adds the empty structs and null
 * timestamps Go writes for fields without `omitempty`, and drops fields newer versions removed.
 */
function orderDifference(a: unknown, b: unknown, sharedOnly = false, path = ''): string | undefined {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = orderDifference(a[i], b[i], sharedOnly, `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (!isObject(a) || !isObject(b)) return undefined;
  const ka = Object.keys(a).filter((k) => !sharedOnly || Object.hasOwn(b, k));
  const kb = Object.keys(b).filter((k) => !sharedOnly || Object.hasOwn(a, k));
  if (ka.join() !== kb.join()) return `${path || '.'}: ${ka.join(', ')} instead of ${kb.join(', ')}`;
  for (const k of ka) {
    const d = orderDifference(a[k], b[k], sharedOnly, `${path}.${k}`);
    if (d) return d;
  }
  return undefined;
}

describe('built-in objects in kube-apiserver key order', () => {
  it(
    'writes every built-in object a real kube-apiserver answered in the order it wrote it',
    { skip: NO_TRACES },
    () => {
      const unordered = new Set(builtinTypes().unordered);
      const bodies = new Set<string>();
      for (const file of readdirSync(TRACES).filter((f) => f.endsWith('.jsonl')))
        for (const line of readFileSync(join(TRACES, file), 'utf8').split('\n')) {
          if (!line) continue;
          const exchange = JSON.parse(line) as { res?: { body?: { text?: string }; chunks?: Array<{ text: string }> } };
          const text = exchange.res?.body?.text;
          if (text?.startsWith('{')) bodies.add(text.trim());
          // a watch's events, one JSON object a line
          for (const chunk of exchange.res?.chunks ?? [])
            for (const event of chunk.text.split('\n')) if (event.startsWith('{')) bodies.add(event);
        }
      const checked = new Map<string, number>();
      const leftOut = new Set<string>();
      for (const text of bodies) {
        let doc: unknown;
        try {
          doc = JSON.parse(text);
        } catch {
          continue; // a watch chunk split mid-object
        }
        // a watch event's object
        const objects = isObject(doc) && doc.type && isObject(doc.object) ? [doc.object] : [doc];
        for (const o of objects) {
          if (!isObject(o) || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') continue;
          const type = builtinType(o.apiVersion, o.kind);
          if (!type) continue;
          if ([...reachable(type)].some((t) => unordered.has(t))) {
            leftOut.add(`${o.apiVersion}/${o.kind}`);
            continue;
          }
          const encoded = kubeEncoded(typeOf(o.apiVersion, o.kind), reversed(o) as KubeObject);
          assert.equal(
            orderDifference(encoded, o),
            undefined,
            `${o.apiVersion} ${o.kind} ${JSON.stringify(isObject(o.metadata) ? o.metadata.name : '')}`,
          );
          checked.set(`${o.apiVersion}/${o.kind}`, (checked.get(`${o.apiVersion}/${o.kind}`) ?? 0) + 1);
        }
      }
      // the traces' built-in kinds, at least these; none reaches a type whose Go field order the authority lacks
      for (const kind of [
        'apiextensions.k8s.io/v1/CustomResourceDefinition',
        'apiextensions.k8s.io/v1/CustomResourceDefinitionList',
        'v1/ConfigMap',
        'v1/ConfigMapList',
        'v1/Namespace',
        'v1/ServiceAccount',
        'v1/Secret',
        'v1/Service',
        'v1/Event',
        'v1/PodList',
        'apps/v1/Deployment',
        'coordination.k8s.io/v1/Lease',
        'rbac.authorization.k8s.io/v1/ClusterRole',
        'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
        'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
        'authentication.k8s.io/v1/TokenReview',
      ])
        assert.ok(checked.has(kind), `${kind} checked (checked: ${[...checked.keys()].join(', ')})`);
      assert.deepEqual([...leftOut], []);
    },
  );

  it('keeps a field named __proto__ as a field, in a custom resource and in a built-in map', () => {
    const cr = JSON.parse(
      '{"apiVersion":"example.com/v1","kind":"Widget","spec":{"b":1,"__proto__":{"x":1}}}',
    ) as KubeObject;
    const encoded = kubeEncoded({ ...typeOf('example.com/v1', 'Widget'), crd: 'widgets.example.com' }, cr);
    assert.equal(
      JSON.stringify(encoded),
      '{"apiVersion":"example.com/v1","kind":"Widget","spec":{"__proto__":{"x":1},"b":1}}',
    );
    const cm = JSON.parse('{"kind":"ConfigMap","apiVersion":"v1","data":{"z":"1","__proto__":"2"}}') as KubeObject;
    assert.equal(
      JSON.stringify(kubeEncoded(typeOf('v1', 'ConfigMap'), cm)),
      '{"kind":"ConfigMap","apiVersion":"v1","data":{"__proto__":"2","z":"1"}}',
    );
  });

  it('writes a workload of every kind, every field filled in, in the order kubectl encodes its Go type', async () => {
    for (const [apiVersion, kind] of WORKLOADS) {
      const type = builtinType(apiVersion, kind);
      assert.ok(type, `${apiVersion} ${kind} has a type`);
      const full = { ...(filled(type) as Record<string, unknown>), apiVersion, kind };
      const dir = await mkdtemp(join(tmpdir(), 'field-order-'));
      try {
        await writeFile(join(dir, 'object.json'), JSON.stringify(full));
        // kubectl decodes the object into its Go type, sets an env variable and prints the object with Go's encoding
        const { stdout } = await run(
          'kubectl',
          ['set', 'env', '--local', '-f', join(dir, 'object.json'), '-e', 'ORDER_CHECK=1', '-o', 'json'],
          { maxBuffer: 16 * 1024 * 1024 },
        );
        const theirs = JSON.parse(stdout) as unknown;
        const ours = kubeEncoded(typeOf(apiVersion, kind), reversed(full) as KubeObject);
        assert.equal(orderDifference(ours, theirs, true), undefined, `${apiVersion} ${kind}`);
        assert.ok(fieldCount(ours) > 300, `${kind}: a full object (${fieldCount(ours)} fields)`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });
});

/** The workload kinds `kubectl set env` takes. */
const WORKLOADS = [
  ['v1', 'Pod'],
  ['v1', 'ReplicationController'],
  ['apps/v1', 'Deployment'],
  ['apps/v1', 'StatefulSet'],
  ['apps/v1', 'DaemonSet'],
  ['apps/v1', 'ReplicaSet'],
  ['batch/v1', 'Job'],
  ['batch/v1', 'CronJob'],
] as const;

/** A value of `shape` with every field filled in (a type met again inside itself is left out). */
function filled(shape: FieldShape, inside: readonly string[] = []): unknown {
  if (Array.isArray(shape)) return [filled(shape[0], inside)];
  if (typeof shape === 'object') return { b: filled(shape[''], inside), a: filled(shape[''], inside) };
  switch (shape) {
    case 's':
      return 'x';
    case 'i32':
    case 'i64':
      return 1;
    case 'f64':
      return 1.5;
    case 'b':
      return true;
    case 'q':
      return '1';
    case '*':
    case 'o':
      return { b: 'x', a: 'x' };
    case 'io.k8s.apimachinery.pkg.apis.meta.v1.Time':
      return '2024-01-02T03:04:05Z';
    case 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime':
      return '2024-01-02T03:04:05.000000Z';
    // Go keeps a field set's bytes as they came (kubectl prints them so); a server writes the sets it makes sorted
    case 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1':
      return { 'f:a': {} };
  }
  const type = builtinTypes().types[shape];
  if (type === undefined || inside.includes(shape)) return undefined;
  if (typeof type !== 'object' || Array.isArray(type) || '' in type) return filled(type as FieldShape, inside);
  return Object.fromEntries(
    Object.entries(type)
      .map(([k, field]) => [k, filled(field, [...inside, shape])] as const)
      .filter(([, v]) => v !== undefined),
  );
}

/** How many fields `v` has, at every depth. */
function fieldCount(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + fieldCount(x), 0);
  if (!isObject(v)) return 0;
  return Object.values(v).reduce((n: number, x) => n + 1 + fieldCount(x), 0);
}

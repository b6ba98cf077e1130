// Custom resources against their CRD's structural schema: each validation keyword's error, pruning under
// fieldValidation Strict/Warn/Ignore, nulls, defaulting, list types, int-or-string, embedded resources, ratcheting,
// the status subresource and server-side apply of keyed lists. Expected texts are kube-apiserver 1.32's, written down
// from ../shared/reference/kube-apiserver-rules.md §1-2 (kube-openapi's and apiextensions-apiserver's messages), not
// taken from this code.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call, type CallOptions, type Obj } from './https.js';

const str = { type: 'string' };
const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['mode'],
      properties: {
        mode: { type: 'string', enum: ['a', 'b'] },
        replicas: { type: 'integer', minimum: 1, maximum: 10, default: 1 },
        ratio: {
          type: 'number',
          minimum: 1,
          exclusiveMinimum: true,
          maximum: 10,
          exclusiveMaximum: true,
          multipleOf: 0.5,
        },
        step: { type: 'integer', multipleOf: 5 },
        name: { type: 'string', pattern: '^[a-z]+$', minLength: 1, maxLength: 5 },
        ip: { type: 'string', format: 'ipv4' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', items: str, maxItems: 3, minItems: 1, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: str, port: { type: 'integer' } } },
        },
        labels: { type: 'object', additionalProperties: str, maxProperties: 2 },
        note: { type: 'string', nullable: true },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { n: { type: 'integer' } } },
        limits: { type: 'object', default: {}, properties: { cpu: { type: 'string', default: '100m' } } },
        probe: { type: 'object', properties: { period: { type: 'integer', default: 10 } } },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'integer' } } },
  },
};
const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    names: { kind: 'Widget', plural: 'widgets' },
    scope: 'Namespaced',
    versions: [
      { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: SCHEMA } },
    ],
  },
};

describe('custom resources against their structural schema', () => {
  let a: Authority;
  let admin: (method: string, path: string, o?: CallOptions) => ReturnType<typeof call>;
  const widgets = '/apis/example.com/v1/namespaces/w/widgets';
  const widget = (name: string, spec: Obj) => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name },
    spec,
  });
  const invalid = async (spec: Obj, name = 'bad') => {
    const r = await admin('POST', widgets, { body: widget(name, spec) });
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(r.body.details.kind, 'Widget');
    assert.equal(r.body.details.group, 'example.com');
    return r.body;
  };

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    admin = (method, path, o = {}) => call(a.url, a.caPem, method, path, { token: a.adminToken, ...o });
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'w' } } })).status, 201);
    assert.equal(
      (await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: CRD })).status,
      201,
    );
  });
  after(async () => {
    await a?.stop();
  });

  it("type, required and enum, with kube-openapi's texts, reasons and paths without a leading dot", async () => {
    const b = await invalid({ replicas: 'three', mode: 'c' });
    assert.deepEqual(
      new Set(b.details.causes.map((c: Obj) => `${c.reason} ${c.field}: ${c.message}`)),
      new Set([
        'FieldValueTypeInvalid spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        'FieldValueNotSupported spec.mode: Unsupported value: "c": supported values: "a", "b"',
      ]),
    );
    assert.match(b.message, /^Widget\.example\.com "bad" is invalid: \[/);
    const req = await invalid({});
    assert.equal(req.message, 'Widget.example.com "bad" is invalid: spec.mode: Required value');
    assert.equal(req.details.causes[0].reason, 'FieldValueRequired');
  });

  it('numbers: minimum, maximum, exclusive bounds, multipleOf', async () => {
    const cases: Array<[Obj, string]> = [
      [{ replicas: 0 }, 'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1'],
      [{ replicas: 11 }, 'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10'],
      [{ ratio: 1 }, 'spec.ratio: Invalid value: 1: spec.ratio in body should be greater than 1'],
      [{ ratio: 10 }, 'spec.ratio: Invalid value: 10: spec.ratio in body should be less than 10'],
      [{ step: 7 }, 'spec.step: Invalid value: 7: spec.step in body should be a multiple of 5'],
    ];
    for (const [spec, want] of cases)
      assert.equal((await invalid({ mode: 'a', ...spec })).message, `Widget.example.com "bad" is invalid: ${want}`);
  });

  it('strings: pattern, lengths, format; int-or-string', async () => {
    const cases: Array<[Obj, string]> = [
      [{ name: 'ABC' }, `spec.name: Invalid value: "ABC": spec.name in body should match '^[a-z]+$'`],
      [{ name: 'abcdef' }, 'spec.name: Too long: may not be more than 5 bytes'],
      [{ ip: 'x' }, 'spec.ip: Invalid value: "x": spec.ip in body must be of type ipv4: "x"'],
      [
        { port: true },
        'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      ],
    ];
    for (const [spec, want] of cases)
      assert.equal((await invalid({ mode: 'a', ...spec })).message, `Widget.example.com "bad" is invalid: ${want}`);
    const min = await invalid({ mode: 'a', name: '' });
    // the empty name also fails the pattern: both errors are reported
    assert.ok(
      min.message.includes('spec.name: Invalid value: "": spec.name in body should be at least 1 chars long'),
      min.message,
    );
    for (const port of [8443, 'https'])
      assert.equal(
        (await admin('POST', widgets, { body: widget(`port-${typeof port}`, { mode: 'a', port }) })).status,
        201,
      );
  });

  it('lists and maps: items bounds, set and map list types, maxProperties, null items', async () => {
    const cases: Array<[Obj, string]> = [
      [{ tags: ['a', 'b', 'c', 'd'] }, 'spec.tags: Too many: 4: must have at most 3 items'],
      [{ tags: [] }, 'spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items'],
      [{ tags: ['a', 'b', 'a'] }, 'spec.tags[2]: Duplicate value: "a"'],
      [
        { ports: [{ name: 'a' }, { name: 'a', port: 1 }] },
        'spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a"}',
      ],
      [{ labels: { a: '1', b: '2', c: '3' } }, 'spec.labels: Too many: 3: must have at most 2 items'],
      [{ tags: [null] }, 'spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"'],
    ];
    for (const [spec, want] of cases)
      assert.equal((await invalid({ mode: 'a', ...spec })).message, `Widget.example.com "bad" is invalid: ${want}`);
  });

  it("embedded resources need apiVersion and kind, and their metadata follows ObjectMeta's label rules", async () => {
    const b = await invalid({ mode: 'a', template: { metadata: { name: 'x' } } });
    assert.equal(
      b.message,
      'Widget.example.com "bad" is invalid: [spec.template.apiVersion: Required value: must not be empty, spec.template.kind: Required value: must not be empty]',
    );
    const labels = await invalid({
      mode: 'a',
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { ok: 'not ok!' } } },
    });
    assert.match(
      labels.message,
      /^Widget\.example\.com "bad" is invalid: spec\.template\.metadata\.labels: Invalid value: "not ok!": a valid label must be an empty string/,
    );
  });

  it("unknown fields: 400 under Strict (kubectl's default), a warning each under Warn (the default), silence under Ignore; pruned always", async () => {
    const body = widget('prune', {
      mode: 'a',
      foo: 1,
      ports: [{ name: 'p', bar: 2 }],
      extra: { kept: true, n: 1 },
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} },
    });
    const strict = await admin('POST', `${widgets}?fieldValidation=Strict`, { body });
    assert.equal(strict.status, 400);
    assert.equal(
      strict.body.message,
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.foo", unknown field "spec.ports[0].bar"',
    );
    const warned = await admin('POST', widgets, { body });
    assert.equal(warned.status, 201, warned.text);
    assert.equal(
      warned.headers.warning,
      '299 - "unknown field \\"spec.foo\\"", 299 - "unknown field \\"spec.ports[0].bar\\""',
    );
    const got = (await admin('GET', `${widgets}/prune`)).body;
    assert.deepEqual(got.spec.ports, [{ name: 'p' }]);
    assert.equal(got.spec.foo, undefined);
    assert.deepEqual(
      got.spec.extra,
      { kept: true, n: 1 },
      'x-kubernetes-preserve-unknown-fields keeps what is below it',
    );
    assert.deepEqual(got.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} });
    const ignored = await admin('POST', `${widgets}?fieldValidation=Ignore`, {
      body: { ...body, metadata: { name: 'prune2' } },
    });
    assert.equal(ignored.status, 201);
    assert.equal(ignored.headers.warning, undefined);
  });

  it("fields named as Object.prototype's members (constructor, toString, valueOf) are unknown fields like any other", async () => {
    const body = widget('proto', {
      mode: 'a',
      constructor: 1,
      toString: { a: 1 },
      valueOf: false,
      hasOwnProperty: 'x',
    });
    const warned = await admin('POST', widgets, { body });
    assert.equal(warned.status, 201, warned.text);
    assert.equal(
      warned.headers.warning,
      ['constructor', 'hasOwnProperty', 'toString', 'valueOf']
        .map((f) => `299 - "unknown field \\"spec.${f}\\""`)
        .join(', '),
    );
    const got = (await admin('GET', `${widgets}/proto`)).body;
    for (const f of ['constructor', 'hasOwnProperty', 'toString', 'valueOf'])
      assert.ok(!Object.hasOwn(got.spec, f), `spec.${f} was stored`);
    assert.equal(got.spec.mode, 'a');
  });

  it('a strict merge patch with an unknown field is a 422 naming the patched object', async () => {
    await admin('POST', widgets, { body: widget('patched', { mode: 'a' }) });
    const r = await admin('PATCH', `${widgets}/patched?fieldValidation=Strict`, {
      body: { spec: { foo: 1 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(r.status, 422);
    assert.match(
      r.body.message,
      /^ "" is invalid: patch: Invalid value: "\{.*\\"foo\\":1.*\}": strict decoding error: unknown field "spec\.foo"$/,
    );
  });

  it('nulls: kept under nullable, dropped elsewhere; defaults fill absent fields in objects that exist, and non-nullable nulls', async () => {
    const r = await admin('POST', widgets, {
      body: widget('defaults', { mode: 'a', note: null, name: null, replicas: null, probe: {} }),
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, {
      mode: 'a',
      note: null,
      replicas: 1,
      probe: { period: 10 },
      limits: { cpu: '100m' },
    });
    const bare = await admin('POST', widgets, { body: widget('bare', { mode: 'b' }) });
    assert.equal(bare.body.spec.probe, undefined, 'no default below an absent parent without its own default');
  });

  it('ratcheting: an update keeps an invalid value it did not change, and fails on one it changes', async () => {
    // the schema tightens after an object was stored: the stored value stays acceptable until it is changed
    await admin('POST', widgets, { body: widget('ratchet', { mode: 'a', name: 'abc' }) });
    const tightened = structuredClone(CRD);
    (tightened.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.name as Obj).maxLength = 2;
    const crd = (await admin('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com'))
      .body;
    assert.equal(
      (
        await admin('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', {
          body: { ...tightened, metadata: crd.metadata },
        })
      ).status,
      200,
    );
    try {
      const same = await admin('PATCH', `${widgets}/ratchet`, {
        body: { spec: { replicas: 2 } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(same.status, 200, same.text);
      const changed = await admin('PATCH', `${widgets}/ratchet`, {
        body: { spec: { name: 'abcd' } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(changed.status, 422);
      assert.equal(
        changed.body.message,
        'Widget.example.com "ratchet" is invalid: spec.name: Too long: may not be more than 2 bytes',
      );
    } finally {
      const now = (await admin('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com'))
        .body;
      await admin('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', {
        body: { ...CRD, metadata: now.metadata },
      });
    }
  });

  it('reads decode as writes do: a schema changed after a write prunes and defaults the stored object on the way out', async () => {
    await admin('POST', widgets, { body: widget('reread', { mode: 'a', note: 'kept until the schema drops it' }) });
    const changed = structuredClone(CRD) as Obj;
    const props = changed.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    delete props.note;
    props.color = { type: 'string', default: 'blue' };
    const crd = (await admin('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com'))
      .body;
    assert.equal(
      (
        await admin('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', {
          body: { ...changed, metadata: crd.metadata },
        })
      ).status,
      200,
    );
    try {
      const got = (await admin('GET', `${widgets}/reread`)).body;
      assert.equal(got.spec.color, 'blue');
      assert.equal(got.spec.note, undefined);
      const listed = (await admin('GET', widgets)).body.items.find((o: Obj) => o.metadata.name === 'reread');
      assert.deepEqual(listed.spec, got.spec);
    } finally {
      const now = (await admin('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com'))
        .body;
      await admin('PUT', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com', {
        body: { ...CRD, metadata: now.metadata },
      });
    }
  });

  it('status subresource: create drops status, main writes keep it, /status writes only it; both validated', async () => {
    const c = await admin('POST', widgets, { body: { ...widget('st', { mode: 'a' }), status: { ready: 1 } } });
    assert.equal(c.body.status, undefined);
    const s = await admin('PATCH', `${widgets}/st/status`, {
      body: { status: { ready: 2 }, spec: { mode: 'b' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(s.status, 200, s.text);
    assert.deepEqual([s.body.spec.mode, s.body.status.ready], ['a', 2]);
    const bad = await admin('PATCH', `${widgets}/st/status`, {
      body: { status: { ready: 'x' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(bad.status, 422);
    // the status schema is validated alone: the field is status.ready, the text's path relative to status
    assert.equal(
      bad.body.message,
      'Widget.example.com "st" is invalid: status.ready: Invalid value: "string": ready in body must be of type integer: "string"',
    );
  });

  it('CEL rules (x-kubernetes-validations): message, reason, fieldPath, messageExpression, transition rules, root rules', async () => {
    const gadgets = '/apis/example.com/v1/namespaces/w/gadgets';
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Gadget', plural: 'gadgets' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                'x-kubernetes-validations': [
                  { rule: "self.metadata.name.startsWith('g')", message: 'names start with g' },
                ],
                properties: {
                  spec: {
                    type: 'object',
                    'x-kubernetes-validations': [
                      { rule: 'self.minReplicas <= self.maxReplicas' },
                      {
                        rule: 'self.maxReplicas <= 100',
                        reason: 'FieldValueForbidden',
                        fieldPath: '.maxReplicas',
                        message: 'at most 100',
                      },
                      {
                        rule: "!has(self.label) || self.label.matches('^[a-z]+$')",
                        messageExpression: "'label ' + self.label + ' is not lower case'",
                      },
                    ],
                    properties: {
                      minReplicas: { type: 'integer' },
                      maxReplicas: { type: 'integer' },
                      label: { type: 'string' },
                      mode: { type: 'string', enum: ['a'] },
                      class: {
                        type: 'string',
                        'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'class is immutable' }],
                      },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    assert.equal(
      (await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd })).status,
      201,
    );
    const gadget = (name: string, spec: Obj) => ({
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name },
      spec,
    });
    const refused = async (name: string, spec: Obj) => {
      const r = await admin('POST', gadgets, { body: gadget(name, spec) });
      assert.equal(r.status, 422, r.text);
      return r.body.message as string;
    };
    assert.equal(
      await refused('g1', { minReplicas: 3, maxReplicas: 2 }),
      'Gadget.example.com "g1" is invalid: spec: Invalid value: "object": failed rule: self.minReplicas <= self.maxReplicas',
    );
    assert.equal(
      await refused('g2', { minReplicas: 1, maxReplicas: 200 }),
      'Gadget.example.com "g2" is invalid: spec.maxReplicas: Forbidden: at most 100',
    );
    assert.equal(
      await refused('g3', { minReplicas: 1, maxReplicas: 2, label: 'ABC' }),
      'Gadget.example.com "g3" is invalid: spec: Invalid value: "object": label ABC is not lower case',
    );
    assert.equal(
      await refused('x1', { minReplicas: 1, maxReplicas: 2 }),
      'Gadget.example.com "x1" is invalid: <nil>: Invalid value: "object": names start with g',
    );
    // a structural error first: the rules are not evaluated, and kube says so
    assert.equal(
      await refused('g4', { minReplicas: 3, maxReplicas: 2, mode: 'b' }),
      'Gadget.example.com "g4" is invalid: [spec.mode: Unsupported value: "b": supported values: "a", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
    // a transition rule: nothing to compare on create, enforced on update
    assert.equal(
      (await admin('POST', gadgets, { body: gadget('g5', { minReplicas: 1, maxReplicas: 2, class: 'gold' }) })).status,
      201,
    );
    const changed = await admin('PATCH', `${gadgets}/g5`, {
      body: { spec: { class: 'silver' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(changed.status, 422);
    assert.equal(
      changed.body.message,
      'Gadget.example.com "g5" is invalid: spec.class: Invalid value: "string": class is immutable',
    );
    assert.equal(
      (
        await admin('PATCH', `${gadgets}/g5`, {
          body: { spec: { maxReplicas: 3 } },
          contentType: 'application/merge-patch+json',
        })
      ).status,
      200,
    );
  });

  it('metadata.generation: 1 on create, +1 on content changes; status counts only without a status subresource', async () => {
    const plain = structuredClone(CRD) as Obj;
    plain.metadata.name = 'plains.example.com';
    plain.spec.names = { kind: 'Plain', plural: 'plains' };
    delete plain.spec.versions[0].subresources;
    assert.equal(
      (await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: plain })).status,
      201,
    );
    const plains = '/apis/example.com/v1/namespaces/w/plains';
    const c = await admin('POST', plains, {
      body: {
        apiVersion: 'example.com/v1',
        kind: 'Plain',
        metadata: { name: 'p' },
        spec: { mode: 'a' },
        status: { ready: 1 },
      },
    });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(
      [c.body.metadata.generation, c.body.status],
      [1, { ready: 1 }],
      'without a status subresource, create keeps the status',
    );
    const merge = (path: string, body: Obj) =>
      admin('PATCH', path, { body, contentType: 'application/merge-patch+json' });
    assert.equal((await merge(`${plains}/p`, { status: { ready: 2 } })).body.metadata.generation, 2);
    assert.equal(
      (await merge(`${plains}/p`, { metadata: { labels: { a: 'b' } } })).body.metadata.generation,
      2,
      'metadata changes do not count',
    );
    // with a status subresource (widgets), /status writes do not count, spec writes do
    await admin('POST', widgets, { body: widget('gen', { mode: 'a' }) });
    assert.equal((await merge(`${widgets}/gen/status`, { status: { ready: 3 } })).body.metadata.generation, 1);
    assert.equal((await merge(`${widgets}/gen`, { spec: { mode: 'b' } })).body.metadata.generation, 2);
  });

  it("a CRD whose schema is not structural is refused, with kube's paths and texts", async () => {
    const bad = structuredClone(CRD) as Obj;
    bad.metadata.name = 'things.example.com';
    bad.spec.names = { kind: 'Thing', plural: 'things' };
    bad.spec.versions[0].schema.openAPIV3Schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { values: { description: 'no type' }, list: { type: 'array', items: {}, uniqueItems: true } },
        },
        mixed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
        embedded: { type: 'string', 'x-kubernetes-embedded-resource': true },
      },
    };
    const r = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: bad });
    assert.equal(r.status, 422);
    // a v1 CRD whose versions share one schema has it checked as the internal type's spec.validation, as a real
    // server names it ("spec.validation.openAPIV3Schema.properties[spec]...type: Required value: must not be empty
    // for specified object fields" is what apiextensions.k8s.io/v1 CRDs get from a cluster)
    const at = 'spec.validation.openAPIV3Schema';
    assert.deepEqual(
      new Set(r.body.details.causes.map((c: Obj) => `${c.field}: ${c.message}`)),
      new Set([
        `${at}.properties[spec].properties[values].type: Required value: must not be empty for specified object fields`,
        `${at}.properties[spec].properties[list].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
        `${at}.properties[spec].properties[list].items.type: Required value: must not be empty for specified array items`,
        `${at}.properties[mixed].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
        `${at}.properties[embedded].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
      ]),
    );
    bad.spec.versions[0].schema.openAPIV3Schema = { type: 'string' };
    const root = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: bad });
    assert.equal(
      root.body.message,
      `CustomResourceDefinition.apiextensions.k8s.io "things.example.com" is invalid: ${at}.type: Invalid value: "string": must be object at the root`,
    );
  });

  it('a CRD whose defaults do not hold against their own schema is refused; versions with different schemas are named each', async () => {
    const crd = (name: string, propsOf: (version: string) => Obj, versions = ['v1']) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${name}s.example.com` },
      spec: {
        group: 'example.com',
        names: { kind: name[0].toUpperCase() + name.slice(1), plural: `${name}s` },
        scope: 'Namespaced',
        versions: versions.map((v, i) => ({
          name: v,
          served: true,
          storage: i === 0,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: propsOf(v) } } },
          },
        })),
      },
    });
    const at = 'spec.validation.openAPIV3Schema.properties[spec]';
    const bad = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd('retention', () => ({
        retentionDays: { type: 'integer', minimum: 1, default: 0 },
        replicas: { type: 'integer', default: 'seven' },
        mode: { type: 'string', enum: ['a', 'b'], default: 'c' },
        tier: { type: 'object', properties: { name: str }, default: { name: 'x', extra: true } },
        ports: {
          type: 'array',
          items: { type: 'object', properties: { port: { type: 'integer', maximum: 10, default: 11 } } },
        },
      })),
    });
    assert.equal(bad.status, 422, bad.text);
    const causes = bad.body.details.causes.map((c: Obj) => `${c.field}: ${c.message}`) as string[];
    const find = (field: string) => causes.find((c) => c.startsWith(`${field}: `));
    // the parts a real server's message carries: the path, the value, the rule
    assert.match(
      find(`${at}.properties[retentionDays].default`) ?? causes.join('\n'),
      /: Invalid value: 0: .*should be greater than or equal to 1$/,
    );
    assert.match(
      find(`${at}.properties[replicas].default`) ?? causes.join('\n'),
      /: Invalid value: "string": .*must be of type integer: "string"$/,
    );
    assert.match(
      find(`${at}.properties[mode].default`) ?? causes.join('\n'),
      /: Unsupported value: "c": supported values: "a", "b"$/,
    );
    assert.match(
      find(`${at}.properties[tier].default`) ?? causes.join('\n'),
      /: Invalid value: .*must not have unknown fields$/,
    );
    assert.match(
      find(`${at}.properties[ports].items.properties[port].default`) ?? causes.join('\n'),
      /: Invalid value: 11: .*should be less than or equal to 10$/,
    );
    assert.equal(causes.length, 5, causes.join('\n'));
    // versions whose schemas differ are checked one by one, under their own paths
    const perVersion = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd('split', (v) => ({ size: { type: 'integer', minimum: 1, default: v === 'v1' ? 1 : 0 } }), ['v1', 'v2']),
    });
    assert.equal(perVersion.status, 422, perVersion.text);
    assert.deepEqual(
      perVersion.body.details.causes.map((c: Obj) => c.field),
      ['spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[size].default'],
    );
    // defaults that hold are accepted and applied
    const good = await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd('keeper', () => ({ retentionDays: { type: 'integer', minimum: 1, default: 7 } })),
    });
    assert.equal(good.status, 201, good.text);
  });

  it("server-side apply: keyed list elements are owned per key; an undeclared field fails as kube's typed conversion does", async () => {
    const applyAs = (manager: string, spec: Obj, force = false) =>
      admin('PATCH', `${widgets}/ssa?fieldManager=${manager}${force ? '&force=true' : ''}`, {
        raw: JSON.stringify(widget('ssa', spec)),
        contentType: 'application/apply-patch+yaml',
      });
    assert.equal((await applyAs('one', { mode: 'a', ports: [{ name: 'http', port: 80 }] })).status, 201);
    // another manager adds its own element: no conflict, both stay
    const two = await applyAs('two', { mode: 'a', ports: [{ name: 'https', port: 443 }] });
    assert.equal(two.status, 200, two.text);
    assert.deepEqual(two.body.spec.ports, [
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ]);
    const clash = await applyAs('two', {
      mode: 'a',
      ports: [
        { name: 'https', port: 443 },
        { name: 'http', port: 8080 },
      ],
    });
    assert.equal(clash.status, 409);
    assert.equal(
      clash.body.message,
      'Apply failed with 1 conflict: conflict with "one": .spec.ports[name="http"].port',
    );
    assert.deepEqual(clash.body.details, {
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "one"', field: '.spec.ports[name="http"].port' },
      ],
    });
    const undeclared = await applyAs('one', { mode: 'a', foo: 1 });
    assert.equal(undeclared.status, 500);
    assert.equal(undeclared.body.reason, undefined);
    assert.equal(
      undeclared.body.message,
      'failed to create typed patch object (w/ssa; example.com/v1, Kind=Widget): .spec.foo: field not declared in schema',
    );
  });
});

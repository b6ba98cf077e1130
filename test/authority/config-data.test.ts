// ConfigMap and Secret data rules of kube-apiserver 1.32: config key syntax, the 1 MiB total,
// `immutable: true`, a Secret's fixed type. Expected messages are the real server's, written down from
// ../shared/reference/kube-apiserver-rules.md §3 and the recorded answers (K53, K75), not taken from this code.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call, type CallOptions } from './https.js';

const KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const IMMUTABLE = 'Forbidden: field is immutable when `immutable` is set';

describe('ConfigMap and Secret data rules', () => {
  let a: Authority;
  let admin: (method: string, path: string, o?: CallOptions) => ReturnType<typeof call>;
  const cms = '/api/v1/namespaces/data/configmaps';
  const secrets = '/api/v1/namespaces/data/secrets';

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    admin = (method, path, o = {}) => call(a.url, a.caPem, method, path, { token: a.adminToken, ...o });
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'data' } } })).status, 201);
  });
  after(async () => {
    await a?.stop();
  });

  it("a key outside [-._a-zA-Z0-9]+ is refused with the real server's text (K53)", async () => {
    const r = await admin('POST', cms, { body: { metadata: { name: 'badkey' }, data: { 'a b': '1' } } });
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(r.body.message, `ConfigMap "badkey" is invalid: data[a b]: Invalid value: "a b": ${KEY_MESSAGE}`);
    assert.deepEqual(r.body.details.causes, [
      { reason: 'FieldValueInvalid', message: `Invalid value: "a b": ${KEY_MESSAGE}`, field: 'data[a b]' },
    ]);
  });

  it('keys ".", "..", "..x", longer than 253, in both data and binaryData', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ data: { '.': '1' } }, `data[.]: Invalid value: ".": must not be '.'`],
      [{ data: { '..': '1' } }, `data[..]: Invalid value: "..": must not be '..'`],
      [{ data: { '..x': '1' } }, `data[..x]: Invalid value: "..x": must not start with '..'`],
      [
        { data: { ['k'.repeat(254)]: '1' } },
        `data[${'k'.repeat(254)}]: Invalid value: "${'k'.repeat(254)}": must be no more than 253 characters`,
      ],
      [
        { data: { k: '1' }, binaryData: { k: 'MQ==' } },
        `data[k]: Invalid value: "k": duplicate of key present in binaryData`,
      ],
      [{ binaryData: { 'x/y': 'MQ==' } }, `binaryData[x/y]: Invalid value: "x/y": ${KEY_MESSAGE}`],
    ];
    for (const [fields, want] of cases) {
      const r = await admin('POST', cms, { body: { metadata: { name: 'keys' }, ...fields } });
      assert.equal(r.status, 422, JSON.stringify(fields).slice(0, 80));
      assert.equal(r.body.message, `ConfigMap "keys" is invalid: ${want}`);
    }
    const ok = await admin('POST', cms, {
      body: { metadata: { name: 'keys' }, data: { 'key.name': '1', KEY_NAME: '2', 'key-name': '3', '.hidden': '4' } },
    });
    assert.equal(ok.status, 201, ok.text);
  });

  it('more than 1 MiB of values: ConfigMap at field [], Secret at data', async () => {
    const big = 'x'.repeat(1024 * 1024);
    const cm = await admin('POST', cms, { body: { metadata: { name: 'big' }, data: { a: big, b: 'y' } } });
    assert.equal(cm.status, 422);
    assert.equal(cm.body.message, 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes');
    assert.equal(cm.body.details.causes[0].reason, 'FieldValueTooLong');
    assert.equal((await admin('POST', cms, { body: { metadata: { name: 'fits' }, data: { a: big } } })).status, 201);
    const s = await admin('POST', secrets, { body: { metadata: { name: 'big' }, stringData: { a: big, b: 'y' } } });
    assert.equal(s.status, 422);
    assert.equal(s.body.message, 'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes');
  });

  it('immutable: true fixes data, binaryData and the flag itself; labels stay mutable (K75)', async () => {
    assert.equal(
      (await admin('POST', cms, { body: { metadata: { name: 'imm' }, immutable: true, data: { a: '1' } } })).status,
      201,
    );
    const merge = { contentType: 'application/merge-patch+json' };
    const patched = await admin('PATCH', `${cms}/imm`, { ...merge, body: { data: { a: '2' } } });
    assert.equal(patched.status, 422);
    assert.equal(patched.body.message, `ConfigMap "imm" is invalid: data: ${IMMUTABLE}`);
    assert.deepEqual(patched.body.details.causes, [
      { reason: 'FieldValueForbidden', message: IMMUTABLE, field: 'data' },
    ]);
    const both = await admin('PATCH', `${cms}/imm`, {
      ...merge,
      body: { immutable: false, binaryData: { b: 'MQ==' } },
    });
    assert.equal(both.body.message, `ConfigMap "imm" is invalid: [immutable: ${IMMUTABLE}, binaryData: ${IMMUTABLE}]`);
    const labelled = await admin('PATCH', `${cms}/imm`, { ...merge, body: { metadata: { labels: { a: 'b' } } } });
    assert.equal(labelled.status, 200, labelled.text);
    assert.deepEqual((await admin('GET', `${cms}/imm`)).body.data, { a: '1' });
    // false → true is allowed
    assert.equal((await admin('POST', cms, { body: { metadata: { name: 'later' }, data: { a: '1' } } })).status, 201);
    assert.equal((await admin('PATCH', `${cms}/later`, { ...merge, body: { immutable: true } })).status, 200);
  });

  it('a Secret: immutable data (stringData counts), and its type never changes', async () => {
    assert.equal(
      (await admin('POST', secrets, { body: { metadata: { name: 'imm' }, immutable: true, stringData: { a: '1' } } }))
        .status,
      201,
    );
    const merge = { contentType: 'application/merge-patch+json' };
    const r = await admin('PATCH', `${secrets}/imm`, { ...merge, body: { stringData: { a: '2' } } });
    assert.equal(r.status, 422);
    assert.equal(r.body.message, `Secret "imm" is invalid: data: ${IMMUTABLE}`);
    assert.equal(
      (await admin('POST', secrets, { body: { metadata: { name: 'typed' }, type: 'Opaque', data: {} } })).status,
      201,
    );
    const t = await admin('PATCH', `${secrets}/typed`, {
      ...merge,
      body: { type: 'kubernetes.io/basic-auth', data: { username: 'dQ==', password: 'cA==' } },
    });
    assert.equal(t.status, 422);
    assert.equal(
      t.body.message,
      'Secret "typed" is invalid: type: Invalid value: "kubernetes.io/basic-auth": field is immutable',
    );
  });
});

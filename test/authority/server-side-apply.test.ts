// Server-side apply and field ownership over HTTPS: write options validated as kube-apiserver 1.32 does,
// apply bodies naming the wrong type, Update managers named after the User-Agent, and the cap on Update entries.
// Expected texts are kube's, from ../shared/reference/kube-apiserver-rules.md §0-1 and apimachinery's option
// validation (ValidatePatchOptions / ValidateFieldManager), not taken from this code.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { call, type CallOptions, type Obj } from './https.js';

describe('server-side apply and managed fields over HTTPS', () => {
  let a: Authority;
  let admin: (method: string, path: string, o?: CallOptions) => ReturnType<typeof call>;
  const cms = '/api/v1/namespaces/ssa/configmaps';
  const applyBody = (name: string, data: Obj, extra: Obj = {}) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data, ...extra });
  const apply = (path: string, raw: string) =>
    admin('PATCH', path, { raw, contentType: 'application/apply-patch+yaml' });

  before(async () => {
    a = await startAuthority({ listen: '127.0.0.1:0' });
    admin = (method, path, o = {}) => call(a.url, a.caPem, method, path, { token: a.adminToken, ...o });
    assert.equal((await admin('POST', '/api/v1/namespaces', { body: { metadata: { name: 'ssa' } } })).status, 201);
  });
  after(async () => {
    await a?.stop();
  });

  it("an apply without fieldManager is kube's 422 on PatchOptions", async () => {
    const r = await apply(`${cms}/x`, applyBody('x', { a: '1' }));
    assert.equal(r.status, 422);
    assert.equal(
      r.body.message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    assert.deepEqual(r.body.details, {
      group: 'meta.k8s.io',
      kind: 'PatchOptions',
      causes: [
        { reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' },
      ],
    });
  });

  it('write options: force outside apply, an unknown fieldValidation, a fieldManager above 128 bytes or not printable', async () => {
    await admin('POST', cms, { body: { metadata: { name: 'opts' }, data: { a: '1' } } });
    const force = await admin('PATCH', `${cms}/opts?force=true`, {
      body: { data: { a: '2' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(force.status, 422);
    assert.equal(
      force.body.message,
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
    const fv = await admin('POST', `${cms}?fieldValidation=Loose`, { body: { metadata: { name: 'fv' } } });
    assert.equal(fv.status, 422);
    assert.equal(
      fv.body.message,
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
    );
    const long = await admin('PUT', `${cms}/opts?fieldManager=${'m'.repeat(129)}`, {
      body: { metadata: { name: 'opts' }, data: { a: '3' } },
    });
    assert.equal(long.status, 422);
    assert.equal(
      long.body.message,
      'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes',
    );
    const ctrl = await admin('PUT', `${cms}/opts?fieldManager=a%0Ab`, {
      body: { metadata: { name: 'opts' }, data: { a: '3' } },
    });
    assert.equal(ctrl.status, 422);
    assert.equal(
      ctrl.body.message,
      'UpdateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\nb": invalid character U+000A (at position 1)',
    );
    // an empty fieldValidation is the default (Warn)
    assert.equal(
      (await admin('POST', `${cms}?fieldValidation=`, { body: { metadata: { name: 'fv-empty' } } })).status,
      201,
    );
  });

  it("an apply body must name the endpoint's version and kind, and carry no managedFields", async () => {
    const version = await apply(
      `${cms}/v?fieldManager=me`,
      JSON.stringify({ apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'v' } }),
    );
    assert.equal(version.status, 400);
    assert.equal(
      version.body.message,
      'Incorrect version specified in apply patch. Specified patch version: v2, expected: v1',
    );
    const kind = await apply(
      `${cms}/v?fieldManager=me`,
      JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'v' } }),
    );
    assert.equal(kind.status, 400);
    assert.equal(kind.body.message, 'invalid object type: /v1, Kind=Secret');
    const mf = await apply(
      `${cms}/v?fieldManager=me`,
      applyBody('v', { a: '1' }, { metadata: { name: 'v', managedFields: [{ manager: 'x' }] } }),
    );
    assert.equal(mf.status, 400);
    assert.equal(mf.body.message, 'metadata.managedFields must be nil');
  });

  it('a write without fieldManager is recorded under its User-Agent up to the first "/"', async () => {
    const r = await admin('POST', cms, {
      body: { metadata: { name: 'ua' }, data: { a: '1' } },
      headers: { 'User-Agent': 'my-controller/v1.2.3 (linux/amd64)' },
    });
    assert.equal(r.status, 201);
    const [entry] = r.body.metadata.managedFields as Obj[];
    // the data map the create added is owned as such too, as kube records `kubectl create configmap`
    assert.deepEqual(
      { ...entry, time: undefined },
      {
        manager: 'my-controller',
        operation: 'Update',
        apiVersion: 'v1',
        time: undefined,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } },
      },
    );
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('at most 10 Update entries: the oldest are merged into ancient-changes', async () => {
    await admin('POST', cms, { body: { metadata: { name: 'many' } }, headers: { 'User-Agent': 'creator' } });
    for (let i = 1; i <= 11; i++) {
      const r = await admin('PATCH', `${cms}/many?fieldManager=m${i}`, {
        body: { data: { [`k${i}`]: 'v' } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(r.status, 200, r.text);
    }
    const entries = (await admin('GET', `${cms}/many`)).body.metadata.managedFields as Obj[];
    assert.equal(entries.length, 10);
    const ancient = entries.filter((e) => e.manager === 'ancient-changes');
    assert.equal(ancient.length, 1);
    // every key is still owned by someone: the merged managers' keys are in ancient-changes
    const owned = new Set(entries.flatMap((e) => Object.keys(e.fieldsV1?.['f:data'] ?? {})));
    for (let i = 1; i <= 11; i++) assert.ok(owned.has(`f:k${i}`), `k${i}`);
  });
});

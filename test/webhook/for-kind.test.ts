/**
 * Defaulting and validation webhooks for a kind (src/webhook/for-kind.ts), served by the webhook server over real
 * HTTPS: controller-runtime's paths, the JSON Patch from the object sent to the defaulted one, warnings, and how
 * each kind of thrown error is answered (a status it carries, 403 for another Error, a recovered panic for an
 * engine bug).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionDeniedError,
  Webhook,
  WebhookServer,
  webhookPath,
} from '../../packages/ctrlmetrics/src/webhook/index.js';
import { generateCA, issueServingCert, type CertKeyPair } from '../helpers/certs.js';
import { admit } from '../helpers/admission.js';

interface Memcached {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: { image?: string; size?: number };
}

const MEMCACHED = { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached' };
const m = (spec: Memcached['spec'], name = 'm1'): Memcached => ({
  ...MEMCACHED,
  metadata: { name, namespace: 'default' },
  spec,
});

describe("controller-runtime's paths for a kind", () => {
  test('group dots become dashes, the kind is lower-cased, the core group leaves a double dash', () => {
    assert.equal(
      webhookPath('mutate', 'cache.example.com/v1alpha1', 'Memcached'),
      '/mutate-cache-example-com-v1alpha1-memcached',
    );
    assert.equal(
      webhookPath('validate', 'batch.tutorial.kubebuilder.io/v1', 'CronJob'),
      '/validate-batch-tutorial-kubebuilder-io-v1-cronjob',
    );
    assert.equal(webhookPath('mutate', 'v1', 'Pod'), '/mutate--v1-pod');
    assert.equal(webhookPath('validate', 'apps/v1', 'Deployment'), '/validate-apps-v1-deployment');
    const w = new Webhook({ for: MEMCACHED, validator: {} });
    assert.equal(w.defaultingPath, undefined);
    assert.equal(w.validatingPath, '/validate-cache-example-com-v1alpha1-memcached');
    assert.throws(() => new Webhook({ for: MEMCACHED }), /needs a defaulter, a validator or both/);
  });
});

describe('a defaulter and a validator for Memcached', () => {
  let dir: string;
  let ca: CertKeyPair;
  let server: WebhookServer;
  const calls: string[] = [];
  const mutate = webhookPath('mutate', MEMCACHED.apiVersion, MEMCACHED.kind);
  const validate = webhookPath('validate', MEMCACHED.apiVersion, MEMCACHED.kind);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webhook-kind-'));
    ca = await generateCA('webhook-kind-ca');
    const pair = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.crt'), pair.certPem);
    await writeFile(join(dir, 'tls.key'), pair.keyPem);
    server = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir });
    const hook = new Webhook<Memcached>({
      for: MEMCACHED,
      defaulter: {
        default(obj) {
          if (obj.metadata.name === 'boom') (undefined as unknown as { x: number }).x = 1;
          if (obj.metadata.name === 'refuse') throw new Error('defaulting is switched off for this one');
          if (obj.metadata.name === 'proto')
            calls.push(
              `proto: ${Object.getPrototypeOf(obj) === Object.prototype} ${(obj as { polluted?: unknown }).polluted} ${Object.keys(obj).includes('__proto__')}`,
            );
          obj.spec.image ??= 'memcached:1.6.26-alpine3.19';
          obj.spec.size ??= 1;
        },
      },
      validator: {
        validateCreate(obj) {
          calls.push(`create ${obj.metadata.name}`);
          if (obj.spec.image && !obj.spec.image.includes(':')) {
            throw AdmissionDeniedError.invalid({ group: 'cache.example.com', kind: 'Memcached' }, obj.metadata.name, [
              { field: 'spec.image', message: `Invalid value: "${obj.spec.image}": must name a tag` },
            ]);
          }
          return obj.spec.size === 3 ? ['spec.size is at its maximum (3)'] : undefined;
        },
        validateUpdate(oldObj, obj) {
          calls.push(`update ${oldObj.spec.size}→${obj.spec.size}`);
          if ((obj.spec.size ?? 0) < (oldObj.spec.size ?? 0))
            throw Object.assign(new Error('scaling down is not allowed'), { warnings: ['ask the owner'] });
        },
        validateDelete(obj) {
          calls.push(`delete ${obj.metadata.name}`);
        },
      },
    });
    for (const [path, handler] of hook.handlers()) server.register(path, handler);
    // the same rules answered later: a defaulter and a validator that return promises
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const later = new Webhook<Memcached>({
      for: MEMCACHED,
      defaultingPath: '/later-mutate',
      validatingPath: '/later-validate',
      defaulter: {
        async default(obj) {
          await tick();
          if (obj.metadata.name === 'boom') (undefined as unknown as { x: number }).x = 1;
          if (obj.metadata.name === 'refuse') throw new Error('defaulting is switched off for this one');
          obj.spec.image ??= 'memcached:1.6.26-alpine3.19';
        },
      },
      validator: {
        async validateCreate(obj) {
          await tick();
          if (obj.spec.image && !obj.spec.image.includes(':'))
            throw AdmissionDeniedError.invalid({ group: 'cache.example.com', kind: 'Memcached' }, obj.metadata.name, [
              { field: 'spec.image', message: `Invalid value: "${obj.spec.image}": must name a tag` },
            ]);
          return obj.spec.size === 3 ? ['spec.size is at its maximum (3)'] : undefined;
        },
      },
    });
    for (const [path, handler] of later.handlers()) server.register(path, handler);
    await server.start();
  });

  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the defaulter: a JSON Patch of the fields it set; nothing set, no patch; DELETE untouched', async () => {
    const set = await admit(server.url, mutate, { object: m({}) }, ca.certPem);
    assert.equal(set.allowed, true);
    const ops = (set.patch as Array<{ op: string; path: string; value: unknown }>)
      .map((o) => `${o.op} ${o.path} ${JSON.stringify(o.value)}`)
      .sort();
    assert.deepEqual(ops, ['add /spec/image "memcached:1.6.26-alpine3.19"', 'add /spec/size 1']);
    const same = await admit(server.url, mutate, { object: m({ image: 'memcached:1.6', size: 2 }) }, ca.certPem);
    assert.deepEqual([same.allowed, same.patch, same.status], [true, undefined, { metadata: {}, code: 200 }]);
    const del = await admit(server.url, mutate, { operation: 'DELETE', object: null, oldObject: m({}) }, ca.certPem);
    assert.deepEqual([del.allowed, del.patch], [true, undefined]);
    const none = await admit(server.url, mutate, { object: null }, ca.certPem);
    assert.deepEqual(none.status, { metadata: {}, message: 'there is no content to decode', code: 400 });
  });

  test('the defaulter gets a copy in which a key named __proto__ is a plain field, not the prototype', async () => {
    // JSON.parse keeps "__proto__" as an own property; the copy handed to the defaulter must too
    const object = JSON.parse(
      `{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","metadata":{"name":"proto","namespace":"default"},"spec":{},"__proto__":{"polluted":"yes"}}`,
    ) as Record<string, unknown>;
    const answer = await admit(server.url, mutate, { object }, ca.certPem);
    assert.equal(answer.allowed, true);
    assert.deepEqual(calls.at(-1), 'proto: true undefined true');
    const ops = (answer.patch as Array<{ op: string; path: string }>).map((o) => `${o.op} ${o.path}`).sort();
    assert.deepEqual(ops, ['add /spec/image', 'add /spec/size'], 'no operation on the __proto__ field');
  });

  test('the defaulter throwing: an Error denies with 403 and its message; an engine bug is a recovered panic (500)', async () => {
    const refused = await admit(server.url, mutate, { object: m({}, 'refuse') }, ca.certPem);
    assert.deepEqual(refused.status, {
      metadata: {},
      message: 'defaulting is switched off for this one',
      reason: 'Forbidden',
      code: 403,
    });
    const boom = await admit(server.url, mutate, { object: m({}, 'boom') }, ca.certPem);
    assert.equal(boom.allowed, false);
    assert.equal(boom.uid, 'u-1');
    assert.deepEqual(boom.status, {
      metadata: {},
      message: "panic: Cannot set properties of undefined (setting 'x') [recovered]",
      code: 500,
    });
  });

  test('a defaulter and a validator that answer later: the same answers as synchronous ones', async () => {
    const set = await admit(server.url, '/later-mutate', { object: m({ size: 1 }) }, ca.certPem);
    assert.equal(set.allowed, true);
    assert.deepEqual(set.patch, [{ op: 'add', path: '/spec/image', value: 'memcached:1.6.26-alpine3.19' }]);
    const refused = await admit(server.url, '/later-mutate', { object: m({}, 'refuse') }, ca.certPem);
    assert.deepEqual(refused.status, {
      metadata: {},
      message: 'defaulting is switched off for this one',
      reason: 'Forbidden',
      code: 403,
    });
    const boom = await admit(server.url, '/later-mutate', { object: m({}, 'boom') }, ca.certPem);
    assert.deepEqual(boom.status, {
      metadata: {},
      message: "panic: Cannot set properties of undefined (setting 'x') [recovered]",
      code: 500,
    });
    const warned = await admit(
      server.url,
      '/later-validate',
      { object: m({ image: 'memcached:1.6', size: 3 }) },
      ca.certPem,
    );
    assert.equal(warned.allowed, true);
    assert.deepEqual(warned.warnings, ['spec.size is at its maximum (3)']);
    const invalid = await admit(server.url, '/later-validate', { object: m({ image: 'memcached' }) }, ca.certPem);
    assert.equal(invalid.allowed, false);
    assert.equal(invalid.status?.code, 422);
    assert.equal(invalid.status?.reason, 'Invalid');
  });

  test('the validator: create with and without warnings; a 422 with the invalid field; update sees the old object first; delete sees oldObject', async () => {
    const ok = await admit(server.url, validate, { object: m({ image: 'memcached:1.6', size: 2 }) }, ca.certPem);
    assert.deepEqual([ok.allowed, ok.warnings], [true, undefined]);
    const warned = await admit(server.url, validate, { object: m({ image: 'memcached:1.6', size: 3 }) }, ca.certPem);
    assert.deepEqual([warned.allowed, warned.warnings], [true, ['spec.size is at its maximum (3)']]);
    const invalid = await admit(server.url, validate, { object: m({ image: 'memcached' }) }, ca.certPem);
    assert.equal(invalid.allowed, false);
    assert.deepEqual(invalid.status, {
      metadata: {},
      status: 'Failure',
      message: 'Memcached.cache.example.com "m1" is invalid: spec.image: Invalid value: "memcached": must name a tag',
      reason: 'Invalid',
      details: {
        name: 'm1',
        group: 'cache.example.com',
        kind: 'Memcached',
        causes: [
          { reason: 'FieldValueInvalid', message: 'Invalid value: "memcached": must name a tag', field: 'spec.image' },
        ],
      },
      code: 422,
    });
    const down = await admit(
      server.url,
      validate,
      { operation: 'UPDATE', oldObject: m({ size: 3 }), object: m({ size: 1 }) },
      ca.certPem,
    );
    assert.deepEqual(
      [down.allowed, down.status.code, down.status.reason, down.status.message, down.warnings],
      [false, 403, 'Forbidden', 'scaling down is not allowed', ['ask the owner']],
    );
    await admit(server.url, validate, { operation: 'DELETE', object: null, oldObject: m({}, 'gone') }, ca.certPem);
    assert.deepEqual(calls.slice(-2), ['update 3→1', 'delete gone']);
    const connect = await admit(server.url, validate, { operation: 'CONNECT', object: {} }, ca.certPem);
    assert.equal(connect.allowed, true);
    const odd = await admit(server.url, validate, { operation: 'PATCH' }, ca.certPem);
    assert.deepEqual(odd.status, { metadata: {}, message: 'unknown operation "PATCH"', code: 400 });
  });
});

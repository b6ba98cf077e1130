/**
 * Conversion webhooks over real HTTPS on 127.0.0.1: ConversionReview in and out as controller-runtime's `/convert`
 * answers it — spoke to hub, hub to spoke, spoke to spoke through the hub, several objects at once, the review's
 * apiVersion/kind echoed and `request` dropped; a converter's error, the same version, another group, an unknown
 * kind or version as `result.status: Failure` (HTTP 200, no objects); an undecodable body or no request as 400 with
 * an empty body; the webhook metrics for `/convert`; the manager serving every kind's conversions at one path.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConversionRegistry, ConversionWebhook, WebhookServer } from '../../packages/ctrlmetrics/src/webhook/index.js';
import { Manager } from '../../packages/ctrlmetrics/src/index.js';
import { ManagerError } from '../../packages/ctrlmetrics/src/exports/manager.js';
import { registry as metricsRegistry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { generateCA, issueServingCert, type CertKeyPair } from '../helpers/certs.js';

interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
}

function post(url: string, body: string, ca: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/convert`,
      {
        method: 'POST',
        ca,
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'],
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const UID = '0b5a3e62-8b1f-4d3e-9f8a-2c6f1a7e5d10';
const review = (desiredAPIVersion: string, objects: unknown[]) =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    request: { uid: UID, desiredAPIVersion, objects },
  });

/** A CronJob whose v1alpha1 has one schedule string, v1 (the hub) a list of them, and v2 a single `cron` field. */
const cronJobConversions = () =>
  new ConversionWebhook({
    group: 'batch.example.com',
    kind: 'CronJob',
    hub: 'v1',
    spokes: {
      v1alpha1: {
        toHub: (o: { metadata: unknown; spec: { schedule: string } }) => ({
          metadata: o.metadata,
          spec: { schedules: [o.spec.schedule] },
        }),
        fromHub: (h: { spec: { schedules: string[] } }) => {
          if (h.spec.schedules.length !== 1)
            throw new Error(`v1alpha1 holds one schedule; this CronJob has ${h.spec.schedules.length}`);
          // no metadata returned: the source's is kept
          return { spec: { schedule: h.spec.schedules[0] } };
        },
      },
      v2: {
        toHub: (o: { metadata: unknown; spec: { cron: string } }) => ({
          metadata: o.metadata,
          spec: { schedules: [o.spec.cron] },
        }),
        fromHub: (h: { metadata: unknown; spec: { schedules: string[] } }) => ({
          metadata: h.metadata,
          spec: { cron: h.spec.schedules.join(';') },
        }),
      },
      v3: {
        toHub: () => {
          throw new TypeError("Cannot read properties of undefined (reading 'spec')");
        },
        fromHub: (h: object) => h,
      },
    },
  });

const meta = {
  name: 'nightly',
  namespace: 'default',
  uid: '7d5f1c1e-0000-4000-8000-000000000001',
  resourceVersion: '42',
  labels: { app: 'batch' },
};
const alpha = {
  apiVersion: 'batch.example.com/v1alpha1',
  kind: 'CronJob',
  metadata: meta,
  spec: { schedule: '0 3 * * *' },
};
const hub = {
  apiVersion: 'batch.example.com/v1',
  kind: 'CronJob',
  metadata: meta,
  spec: { schedules: ['0 3 * * *', '0 4 * * *'] },
};

describe('the /convert handler', () => {
  let dir: string;
  let ca: CertKeyPair;
  let server: WebhookServer;
  let url: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'conversion-certs-'));
    ca = await generateCA('conversion-test-ca');
    const serving = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    const conversions = new ConversionRegistry();
    conversions.add(cronJobConversions());
    server = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir, shutdownTimeoutMs: 5_000 });
    server.registerConversion('/convert', conversions);
    await server.start();
    url = server.url;
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('spoke to hub: the converted object in the desired version, uid echoed, Success, the review head echoed and request dropped', async () => {
    const r = await post(url, review('batch.example.com/v1', [alpha]), ca.certPem);
    assert.equal(r.status, 200);
    assert.equal(r.contentType, 'application/json');
    assert.deepStrictEqual(JSON.parse(r.text), {
      kind: 'ConversionReview',
      apiVersion: 'apiextensions.k8s.io/v1',
      response: {
        uid: UID,
        convertedObjects: [
          { apiVersion: 'batch.example.com/v1', kind: 'CronJob', metadata: meta, spec: { schedules: ['0 3 * * *'] } },
        ],
        result: { metadata: {}, status: 'Success' },
      },
    });
  });

  test('hub to spoke keeps the metadata when the converter returns none; spoke to spoke goes through the hub; several objects in order', async () => {
    const single = { ...hub, spec: { schedules: ['0 3 * * *'] } };
    const r = JSON.parse((await post(url, review('batch.example.com/v1alpha1', [single]), ca.certPem)).text);
    assert.deepStrictEqual(r.response.convertedObjects, [alpha]);
    const two = JSON.parse((await post(url, review('batch.example.com/v2', [alpha, hub]), ca.certPem)).text);
    assert.deepStrictEqual(
      two.response.convertedObjects.map((o: { apiVersion: string; spec: unknown }) => [o.apiVersion, o.spec]),
      [
        ['batch.example.com/v2', { cron: '0 3 * * *' }],
        ['batch.example.com/v2', { cron: '0 3 * * *;0 4 * * *' }],
      ],
    );
  });

  const failures: Array<[string, string, unknown[], string]> = [
    [
      'a converter that refuses',
      'batch.example.com/v1alpha1',
      [hub],
      'v1alpha1 holds one schedule; this CronJob has 2',
    ],
    [
      'the same version',
      'batch.example.com/v1',
      [hub],
      'conversion is not allowed between same type batch.example.com/v1, Kind=CronJob',
    ],
    [
      'another group',
      'apps.example.com/v1',
      [alpha],
      'src batch.example.com/v1alpha1, Kind=CronJob and dst apps.example.com/v1, Kind=CronJob does not belong to same API Group',
    ],
    [
      'an unknown version',
      'batch.example.com/v9',
      [alpha],
      'batch.example.com/v9, Kind=CronJob is not convertible: CronJob has the hub v1 and the spokes v1alpha1, v2, v3',
    ],
    [
      'a kind with no conversions',
      'batch.example.com/v1',
      [{ ...alpha, kind: 'Job' }],
      'no kind "Job" is registered for version "batch.example.com/v1alpha1": this webhook converts batch.example.com/CronJob',
    ],
    [
      'a converter that throws a TypeError',
      'batch.example.com/v1',
      [{ ...alpha, apiVersion: 'batch.example.com/v3' }],
      "Cannot read properties of undefined (reading 'spec')",
    ],
  ];
  for (const [what, desired, objects, message] of failures) {
    test(`${what}: HTTP 200, result Failure with the message, convertedObjects null`, async () => {
      const r = await post(url, review(desired, objects), ca.certPem);
      assert.equal(r.status, 200);
      assert.deepStrictEqual(JSON.parse(r.text).response, {
        uid: UID,
        convertedObjects: null,
        result: { metadata: {}, status: 'Failure', message },
      });
    });
  }

  test('an undecodable body, or a review without a request: 400 with an empty body', async () => {
    for (const body of [
      '{"apiVersion":',
      '[]',
      JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }),
      JSON.stringify({ request: { uid: UID, objects: 'x' } }),
    ]) {
      const r = await post(url, body, ca.certPem);
      assert.equal(r.status, 400, body);
      assert.equal(r.text, '', body);
    }
  });

  test('the webhook metrics count /convert by code', async () => {
    const text = await (await metricsRegistry.collect()).text('text');
    const count = (code: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`controller_runtime_webhook_requests_total{code="${code}",webhook="/convert"} `))
          ?.split(' ')[1],
      );
    assert.ok(count('200') >= 9, text);
    assert.equal(count('400'), 4);
    assert.match(text, /^controller_runtime_webhook_requests_in_flight\{webhook="\/convert"\} 0$/m);
  });
});

test('the manager serves the conversions of every kind added at /convert, and refuses a kind added twice', () => {
  const mgr = new Manager({ handleSignals: false, metrics: { bindAddress: '0' } });
  mgr.add(cronJobConversions());
  mgr.add(
    new ConversionWebhook({
      group: 'batch.example.com',
      kind: 'Schedule',
      hub: 'v1',
      spokes: { v1beta1: { toHub: (o: object) => o, fromHub: (h: object) => h } },
    }),
  );
  assert.deepEqual(mgr.webhookServer.paths, ['/convert']);
  assert.throws(
    () => mgr.add(cronJobConversions()),
    (err: Error) =>
      err instanceof ManagerError &&
      err.message === 'a conversion webhook for CronJob.batch.example.com is already registered',
  );
});

test('a ConversionWebhook without a spoke, with the hub as a spoke, or with a spoke missing a direction is refused', () => {
  assert.throws(
    () => new ConversionWebhook({ group: 'g.io', kind: 'K', hub: 'v1', spokes: {} }),
    /needs at least one spoke version besides the hub v1/,
  );
  assert.throws(
    () =>
      new ConversionWebhook({
        group: 'g.io',
        kind: 'K',
        hub: 'v1',
        spokes: { v1: { toHub: (o: object) => o, fromHub: (o: object) => o } },
      }),
    /v1 is the hub and cannot also be a spoke/,
  );
  assert.throws(
    () =>
      new ConversionWebhook({
        group: 'g.io',
        kind: 'K',
        hub: 'v1',
        spokes: { v2: { toHub: (o: object) => o } as never },
      }),
    /spoke v2 needs toHub and fromHub functions/,
  );
});

/**
 * The webhook server (src/webhook) over real HTTPS on 127.0.0.1: AdmissionReview in and out as controller-runtime
 * answers (uid echoed, status completed, patch base64 with patchType, warnings; every answer HTTP 200, errors
 * before decoding with an empty uid), the 7 MiB body limit, unknown paths, a handler that throws (a panic: 500,
 * counted), client certificates against clientCAName, missing certificate files, and the webhook metrics as
 * exposed on a scrape (bucket text as Go prints it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type RequestOptions } from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  WebhookServer,
  allowed,
  denied,
  patched,
  type AdmissionRequest,
} from '../../packages/ctrlmetrics/src/webhook/index.js';
import { registry } from '../../packages/ctrlmetrics/src/metrics/index.js';
import { generateCA, issueClientCert, issueServingCert, type CertKeyPair } from '../helpers/certs.js';
import { errorLines } from '../helpers/log-capture.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function post(
  url: string,
  path: string,
  body: string | Buffer | undefined,
  o: { contentType?: string; ca?: string; cert?: CertKeyPair; method?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = {};
    if (o.contentType !== '') headers['Content-Type'] = o.contentType ?? 'application/json';
    if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
    const opts: RequestOptions = {
      method: o.method ?? 'POST',
      headers,
      ca: o.ca,
      ...(o.cert ? { cert: o.cert.certPem, key: o.cert.keyPem } : {}),
      agent: false,
    };
    const req = request(`${url}${path}`, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const review = (request: Partial<AdmissionRequest>, apiVersion = 'admission.k8s.io/v1') =>
  JSON.stringify({
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      kind: { group: 'cache.example.com', version: 'v1alpha1', kind: 'Memcached' },
      resource: { group: 'cache.example.com', version: 'v1alpha1', resource: 'memcacheds' },
      operation: 'CREATE',
      userInfo: { username: 'admin' },
      object: { apiVersion: 'cache.example.com/v1alpha1', kind: 'Memcached', metadata: { name: 'm' }, spec: {} },
      oldObject: null,
      dryRun: false,
      ...request,
    },
  });

const exposition = async (): Promise<string> => (await registry.collect()).text('text');

const sample = (text: string, line: string) => {
  const m = text.split('\n').find((l) => l.startsWith(line + ' '));
  return m === undefined ? undefined : Number(m.slice(line.length + 1));
};

describe('the webhook server', () => {
  let dir: string;
  let ca: CertKeyPair;
  let server: WebhookServer;
  let url: string;
  const seen: AdmissionRequest[] = [];
  const errors = errorLines();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webhook-certs-'));
    ca = await generateCA('webhook-test-ca');
    const serving = await issueServingCert(ca, ['127.0.0.1', 'localhost']);
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    server = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir, shutdownTimeoutMs: 5_000 }, errors.logger);
    server.register('/mutate-cache-example-com-v1alpha1-memcached', (req) => {
      seen.push(req);
      return patched([{ op: 'add', path: '/spec/image', value: 'memcached:1.6' }]);
    });
    server.register('/validate-cache-example-com-v1alpha1-memcached', (req) =>
      req.operation === 'DELETE'
        ? denied('deleting is not allowed')
        : { ...allowed(), warnings: ['spec.size is at its maximum'] },
    );
    server.register('/throws', () => {
      throw new TypeError("Cannot read properties of undefined (reading 'spec')");
    });
    // handlers that answer later: the server waits for their promise
    server.register('/later', async (req) => {
      await new Promise((resolve) => setImmediate(resolve));
      return req.operation === 'DELETE' ? denied('not now') : allowed('later');
    });
    server.register('/rejects', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      throw new RangeError('Invalid array length');
    });
    await server.start();
    url = server.url;
  });

  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a mutating answer: uid echoed, status completed, the patch base64 with patchType JSONPatch, HTTP 200', async () => {
    const r = await post(url, '/mutate-cache-example-com-v1alpha1-memcached', review({}), { ca: ca.certPem });
    assert.equal(r.status, 200);
    assert.ok(r.text.endsWith('}\n'), 'one JSON line');
    const body = JSON.parse(r.text);
    assert.deepEqual(Object.keys(body), ['kind', 'apiVersion', 'response']);
    assert.equal(body.apiVersion, 'admission.k8s.io/v1');
    assert.deepEqual(
      { ...body.response, patch: undefined },
      {
        uid: 'e911857d-c318-11e8-bbad-025000000001',
        allowed: true,
        status: { metadata: {}, code: 200 },
        patch: undefined,
        patchType: 'JSONPatch',
      },
    );
    assert.deepEqual(JSON.parse(Buffer.from(body.response.patch, 'base64').toString('utf8')), [
      { op: 'add', path: '/spec/image', value: 'memcached:1.6' },
    ]);
    assert.equal(seen.at(-1)?.userInfo.username, 'admin');
  });

  test('a validating answer: warnings on an allow; a denial is 403 Forbidden inside the review', async () => {
    const ok = JSON.parse(
      (await post(url, '/validate-cache-example-com-v1alpha1-memcached', review({}), { ca: ca.certPem })).text,
    );
    assert.deepEqual(ok.response, {
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      allowed: true,
      status: { metadata: {}, code: 200 },
      warnings: ['spec.size is at its maximum'],
    });
    const no = await post(
      url,
      '/validate-cache-example-com-v1alpha1-memcached',
      review({ operation: 'DELETE', object: null }),
      { ca: ca.certPem },
    );
    assert.equal(no.status, 200);
    assert.deepEqual(JSON.parse(no.text).response.status, {
      metadata: {},
      message: 'deleting is not allowed',
      reason: 'Forbidden',
      code: 403,
    });
  });

  test('a v1beta1 review is answered as v1beta1', async () => {
    const body = JSON.parse(
      (
        await post(url, '/validate-cache-example-com-v1alpha1-memcached', review({}, 'admission.k8s.io/v1beta1'), {
          ca: ca.certPem,
        })
      ).text,
    );
    assert.equal(body.apiVersion, 'admission.k8s.io/v1beta1');
    assert.equal(body.response.allowed, true);
  });

  test('errors before the request decodes: HTTP 200, the code inside, an empty uid, no apiVersion or kind', async () => {
    const path = '/validate-cache-example-com-v1alpha1-memcached';
    const cases: Array<[string | undefined, string | undefined, number, RegExp]> = [
      [undefined, 'application/json', 400, /^request body is empty$/],
      [
        review({}),
        'application/json; charset=utf-8',
        400,
        /^contentType=application\/json; charset=utf-8, expected application\/json$/,
      ],
      [review({}), '', 400, /^contentType=, expected application\/json$/],
      ['{"apiVersion":', 'application/json', 400, /^couldn't decode the AdmissionReview: /],
      ['[1,2]', 'application/json', 400, /^couldn't decode the AdmissionReview: not a JSON object$/],
      [
        review({}, 'admission.k8s.io/v2'),
        'application/json',
        400,
        /no kind "AdmissionReview" is registered for version "admission.k8s.io\/v2"/,
      ],
    ];
    for (const [body, contentType, code, message] of cases) {
      const r = await post(url, path, body, { ca: ca.certPem, contentType });
      assert.equal(r.status, 200, `${contentType} ${body?.slice(0, 20)}`);
      const parsed = JSON.parse(r.text);
      assert.deepEqual(Object.keys(parsed), ['response']);
      assert.equal(parsed.response.uid, '');
      assert.equal(parsed.response.allowed, false);
      assert.equal(parsed.response.status.code, code);
      assert.match(parsed.response.status.message, message);
    }
  });

  test('a body of 7 MiB or more is refused with 413 inside the review, without reading the rest', async () => {
    const big = Buffer.alloc(7 * 1024 * 1024, 0x20);
    const r = await post(url, '/validate-cache-example-com-v1alpha1-memcached', big, { ca: ca.certPem });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text).response.status, {
      metadata: {},
      message: 'request entity is too large; limit is 7340032 bytes',
      code: 413,
    });
    const under = await post(
      url,
      '/validate-cache-example-com-v1alpha1-memcached',
      Buffer.concat([Buffer.from(review({})), Buffer.alloc(1024 * 1024, 0x20)]),
      { ca: ca.certPem },
    );
    assert.equal(JSON.parse(under.text).response.allowed, true, 'a body under the limit is read whole');
  });

  test("an unknown path is Go's 404; a trailing slash is another path", async () => {
    for (const p of ['/nope', '/validate-cache-example-com-v1alpha1-memcached/']) {
      const r = await post(url, p, review({}), { ca: ca.certPem });
      assert.equal(r.status, 404);
      assert.equal(r.text, '404 page not found\n');
    }
  });

  test('a handler that throws is a recovered panic: 500 inside the review with the uid, and counted', async () => {
    const before = sample(await exposition(), 'controller_runtime_webhook_panics_total') ?? NaN;
    const r = await post(url, '/throws', review({}), { ca: ca.certPem });
    assert.equal(r.status, 200);
    const body = JSON.parse(r.text);
    assert.equal(body.response.uid, 'e911857d-c318-11e8-bbad-025000000001');
    assert.deepEqual(body.response.status, {
      metadata: {},
      message: "panic: Cannot read properties of undefined (reading 'spec') [recovered]",
      code: 500,
    });
    assert.equal(sample(await exposition(), 'controller_runtime_webhook_panics_total'), before + 1);
    // logged as a reconciler's panic is: the error and where it was thrown
    const logged = errors.lines.filter((l) => l.msg === 'Observed a panic in webhook');
    assert.equal(logged.length, 1);
    assert.equal(logged[0].fields?.webhook, '/throws');
    assert.equal(logged[0].fields?.uid, 'e911857d-c318-11e8-bbad-025000000001');
    assert.equal(logged[0].fields?.panic, "Cannot read properties of undefined (reading 'spec')");
    assert.match(
      String(logged[0].fields?.stacktrace),
      /^TypeError: Cannot read properties of undefined \(reading 'spec'\)\n\s+at .*server\.test\.ts/,
    );
  });

  test("a handler's promise is waited for; one that rejects is a recovered panic, as a throw is", async () => {
    const later = JSON.parse((await post(url, '/later', review({}), { ca: ca.certPem })).text);
    assert.deepEqual(later.response, {
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      allowed: true,
      status: { metadata: {}, message: 'later', code: 200 },
    });
    const refused = JSON.parse((await post(url, '/later', review({ operation: 'DELETE' }), { ca: ca.certPem })).text);
    assert.equal(refused.response.allowed, false);
    assert.equal(refused.response.status.reason, 'Forbidden');
    const before = sample(await exposition(), 'controller_runtime_webhook_panics_total') ?? NaN;
    const r = await post(url, '/rejects', review({}), { ca: ca.certPem });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text).response, {
      uid: 'e911857d-c318-11e8-bbad-025000000001',
      allowed: false,
      status: { metadata: {}, message: 'panic: Invalid array length [recovered]', code: 500 },
    });
    assert.equal(sample(await exposition(), 'controller_runtime_webhook_panics_total'), before + 1);
    assert.ok(errors.lines.some((l) => l.msg === 'Observed a panic in webhook' && l.fields?.webhook === '/rejects'));
  });

  test('registering a path twice, or a path that is not one, throws', () => {
    assert.throws(
      () => server.register('/throws', () => allowed()),
      /^Error: can't register duplicate path: \/throws$/,
    );
    assert.throws(() => server.register('no-slash', () => allowed()), /must be "\/"/);
  });

  test('the webhook metrics, as controller-runtime exposes them', async () => {
    const text = await exposition();
    const path = '/validate-cache-example-com-v1alpha1-memcached';
    assert.match(
      text,
      /^# HELP controller_runtime_webhook_latency_seconds Histogram of the latency of processing admission requests\n# TYPE controller_runtime_webhook_latency_seconds histogram$/m,
    );
    assert.match(
      text,
      /^# HELP controller_runtime_webhook_requests_total Total number of admission requests by HTTP status code\.$/m,
    );
    assert.match(
      text,
      /^# HELP controller_runtime_webhook_requests_in_flight Current number of admission requests being served\.$/m,
    );
    assert.match(text, /^# HELP controller_runtime_webhook_panics_total Total number of webhook panics$/m);
    const buckets = text
      .split('\n')
      .filter((l) => l.startsWith(`controller_runtime_webhook_latency_seconds_bucket{webhook="${path}"`))
      .map((l) => /le="([^"]+)"/.exec(l)![1]);
    // Go's ExponentialBuckets(10e-9, 10, 12), printed as Go prints float64
    assert.deepEqual(buckets, [
      '1e-08',
      '1e-07',
      '1e-06',
      '9.999999999999999e-06',
      '9.999999999999999e-05',
      '0.001',
      '0.01',
      '0.1',
      '1',
      '10',
      '100',
      '1000',
      '+Inf',
    ]);
    const served = sample(text, `controller_runtime_webhook_requests_total{code="200",webhook="${path}"}`);
    assert.ok(served !== undefined && served >= 10, `requests counted: ${served}`);
    assert.equal(
      sample(text, `controller_runtime_webhook_requests_total{code="500",webhook="${path}"}`),
      0,
      'code 500 made at registration',
    );
    assert.equal(sample(text, `controller_runtime_webhook_requests_in_flight{webhook="${path}"}`), 0);
    assert.equal(sample(text, `controller_runtime_webhook_latency_seconds_count{webhook="${path}"}`), served);
  });

  test('the readiness check fails before start and passes once listening', async () => {
    const idle = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir });
    assert.match(String(await idle.startedCheck()()), /webhook server has not been started yet/);
    assert.equal(await server.startedCheck()(), undefined);
  });
});

describe("the webhook server's certificates", () => {
  test('missing certificate files fail start, naming the path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webhook-nocerts-'));
    try {
      const s = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir });
      await assert.rejects(s.start(), (err: Error) => {
        assert.ok(err.message.includes(join(dir, 'tls.crt')), err.message);
        // the webhook server cannot serve a self-signed certificate: the metrics server's remedy is not offered
        assert.doesNotMatch(err.message, /self-signed/);
        assert.match(
          err.message,
          /--webhook-cert-path DIR in a scaffolded manager; `ctrlmetrics dev` makes one and points the webhook configurations at it\), or run the manager without webhooks \(ENABLE_WEBHOOKS=false\)\)$/,
        );
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('with clientCAName, only clients with a certificate that CA signed get through the handshake', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webhook-mtls-'));
    const ca = await generateCA('webhook-mtls-ca');
    const clientCa = await generateCA('apiserver-client-ca');
    const serving = await issueServingCert(ca, ['127.0.0.1']);
    await writeFile(join(dir, 'tls.crt'), serving.certPem);
    await writeFile(join(dir, 'tls.key'), serving.keyPem);
    await writeFile(join(dir, 'client-ca.crt'), clientCa.certPem);
    const s = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir: dir, clientCAName: 'client-ca.crt' });
    s.register('/validate', () => allowed());
    await s.start();
    try {
      const good = await issueClientCert(clientCa, 'kube-apiserver');
      const ok = await post(s.url, '/validate', review({}), { ca: ca.certPem, cert: good });
      assert.equal(JSON.parse(ok.text).response.allowed, true);
      await assert.rejects(
        post(s.url, '/validate', review({}), { ca: ca.certPem }),
        'no client certificate: refused at the handshake',
      );
      const foreign = await issueClientCert(await generateCA('other-ca'), 'intruder');
      await assert.rejects(post(s.url, '/validate', review({}), { ca: ca.certPem, cert: foreign }));
    } finally {
      await s.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

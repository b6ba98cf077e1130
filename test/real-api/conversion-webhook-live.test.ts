/**
 * Conversion webhooks called by a real kube-apiserver and by the authority, side by side: one CRD with two
 * versions (v1alpha1 holds one book, the hub v1 a list), converted by a ctrlmetrics ConversionWebhook served over
 * HTTPS on 127.0.0.1 that both servers call, and the same kubectl commands on both — objects written in one version
 * and read in the other, a list mixing the versions objects were stored in, a merge patch through the other
 * version, a watch in the other version, a converter that refuses (its error as kubectl prints it) — plus a
 * round trip over generated objects.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ConversionRegistry, ConversionWebhook, WebhookServer } from '../../packages/ctrlmetrics/src/webhook/index.js';
import { startTestCluster, waitForCrd, type ApiCluster, type TestCluster } from '../helpers/cluster.js';
import { generateCA, issueServingCert } from '../helpers/certs.js';
import { run } from '../helpers/process.js';
import { runGroup, runName, startRealKube, webhooksUnreachable, type RealKube } from '../helpers/real-kube.js';

// their webhooks run on this machine: the API server must reach its 127.0.0.1
const WEBHOOK_SKIP = await webhooksUnreachable();
import { jsonPatch, ScriptedWebhook } from '../helpers/scripted-webhook.js';

type Any = any;

const GROUP = runGroup('library.example.com');
const GUARD = runName('shelf-guard');
const OWNER = runName('shelf-owner');
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const CRD_NAME = `shelves.${GROUP}`;

interface Alpha {
  metadata: object;
  spec: { book?: string; owner?: string };
}
interface Hub {
  metadata: object;
  spec: { books?: string[]; owner?: string };
}

const shelfConversions = () =>
  new ConversionWebhook({
    group: GROUP,
    kind: 'Shelf',
    hub: 'v1',
    spokes: {
      v1alpha1: {
        toHub: (o: Alpha): Hub => ({
          metadata: o.metadata,
          spec: {
            ...(o.spec.owner !== undefined ? { owner: o.spec.owner } : {}),
            books: o.spec.book === undefined ? [] : [o.spec.book],
          },
        }),
        fromHub: (h: Hub): Alpha => {
          const books = h.spec.books ?? [];
          if (books.length > 1) throw new Error(`a v1alpha1 Shelf holds one book; this one has ${books.length}`);
          return {
            metadata: h.metadata,
            spec: {
              ...(h.spec.owner !== undefined ? { owner: h.spec.owner } : {}),
              ...(books.length ? { book: books[0] } : {}),
            },
          };
        },
      },
    },
  });

const crd = (url: string, caBundle: string, storage: 'v1' | 'v1alpha1') =>
  JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: GROUP,
      names: { kind: 'Shelf', plural: 'shelves' },
      scope: 'Namespaced',
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `${url}/convert`, caBundle } },
      },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: storage === 'v1alpha1',
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { book: { type: 'string' }, owner: { type: 'string' } } },
              },
            },
          },
        },
        {
          name: 'v1',
          served: true,
          storage: storage === 'v1',
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { books: { type: 'array', items: { type: 'string' } }, owner: { type: 'string' } },
                },
              },
            },
          },
        },
      ],
    },
  });

const shelf = (version: string, name: string, spec: object) =>
  JSON.stringify({ apiVersion: `${GROUP}/${version}`, kind: 'Shelf', metadata: { name, namespace: 'default' }, spec });

describe(
  'conversion webhooks: a real kube-apiserver and the authority call them alike',
  { skip: WEBHOOK_SKIP, timeout: 300_000 },
  () => {
    let kube: RealKube;
    let authority: TestCluster;
    let server: WebhookServer;
    let certDir: string;
    let caBundle: string;
    let hook: ScriptedWebhook;
    const kubectl = (c: ApiCluster, args: string[], input?: string) =>
      run('kubectl', ['--kubeconfig', c.kubeconfig, ...args], { timeoutMs: 30_000, input }).then(
        (r) => `${r.stdout}${r.stderr}[rc=${r.code}]`,
      );
    const both = (args: string[], input?: string) => Promise.all([kube, authority].map((c) => kubectl(c, args, input)));
    /** The same command on both; the answers must be equal. Returns kube's. */
    const same = async (args: string[], input?: string) => {
      const [real, ours] = await both(args, input);
      assert.equal(ours, real, `kubectl ${args.join(' ')}`);
      return real;
    };

    before(async () => {
      certDir = await mkdtemp(join(tmpdir(), 'conversion-live-'));
      const ca = await generateCA('conversion-live-ca');
      const serving = await issueServingCert(ca, ['127.0.0.1']);
      await writeFile(join(certDir, 'tls.crt'), serving.certPem);
      await writeFile(join(certDir, 'tls.key'), serving.keyPem);
      caBundle = Buffer.from(ca.certPem).toString('base64');
      const conversions = new ConversionRegistry();
      conversions.add(shelfConversions());
      server = new WebhookServer({ bindAddress: '127.0.0.1:0', certDir, shutdownTimeoutMs: 5_000 });
      server.registerConversion('/convert', conversions);
      await server.start();
      hook = await ScriptedWebhook.start();
      [kube, authority] = await Promise.all([startRealKube(), startTestCluster()]);
      // stored in v1alpha1 first, so that the list below mixes objects stored in both versions
      await same(['apply', '--server-side', '-f', '-'], crd(server.url, caBundle, 'v1alpha1'));
      await Promise.all([kube, authority].map((c) => waitForCrd(c.admin, CRD_NAME)));
    });
    after(async () => {
      await kube?.admin
        .delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD_NAME}`)
        .catch(() => undefined);
      await Promise.all([kube?.stop(), authority?.stop()]);
      await server?.stop();
      await hook?.stop();
      if (certDir) await rm(certDir, { recursive: true, force: true });
    });

    const specOf = (args: string[]) => both([...args, '-o', 'jsonpath={.apiVersion} {.spec}']);

    test('an object written in v1alpha1 (the storage version) reads in v1 through the webhook, and back', async () => {
      assert.match(
        await same(['create', '-f', '-'], shelf('v1alpha1', 'old', { book: 'Dune', owner: 'ann' })),
        /created/,
      );
      const inV1 = await specOf(['get', `shelves.v1.${GROUP}`, 'old']);
      assert.equal(inV1[1], inV1[0]);
      assert.equal(inV1[0], `${GROUP}/v1 {"books":["Dune"],"owner":"ann"}[rc=0]`);
      const inAlpha = await specOf(['get', `shelves.v1alpha1.${GROUP}`, 'old']);
      assert.equal(inAlpha[1], inAlpha[0]);
      assert.equal(inAlpha[0], `${GROUP}/v1alpha1 {"book":"Dune","owner":"ann"}[rc=0]`);
    });

    test('storage moves to v1: a list mixes objects stored in both versions, in either version', async () => {
      await same(['apply', '--server-side', '--force-conflicts', '-f', '-'], crd(server.url, caBundle, 'v1'));
      assert.match(await same(['create', '-f', '-'], shelf('v1', 'new', { books: ['Emma'] })), /created/);
      for (const version of ['v1', 'v1alpha1']) {
        const lists = await both([
          'get',
          `shelves.${version}.${GROUP}`,
          '-o',
          'jsonpath={range .items[*]}{.metadata.name} {.apiVersion} {.spec}{"\\n"}{end}',
        ]);
        assert.equal(lists[1], lists[0], version);
        assert.match(lists[0], /^new /m);
        assert.match(lists[0], /^old /m);
      }
    });

    test('a merge patch through v1alpha1 of an object stored in v1: converted, patched, stored in v1', async () => {
      await same(['patch', `shelves.v1alpha1.${GROUP}`, 'new', '--type=merge', '-p', '{"spec":{"book":"Persuasion"}}']);
      const inV1 = await specOf(['get', `shelves.v1.${GROUP}`, 'new']);
      assert.equal(inV1[1], inV1[0]);
      assert.equal(inV1[0], `${GROUP}/v1 {"books":["Persuasion"]}[rc=0]`);
    });

    test('a watch in v1alpha1 gets the objects converted', async () => {
      const path = `/apis/${GROUP}/v1alpha1/namespaces/default/shelves?watch=1&timeoutSeconds=1`;
      const events = await Promise.all(
        [kube, authority].map(async (c) => {
          const text = (await kubectl(c, ['get', '--raw', path])).replace(/\[rc=0\]$/, '');
          return text
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
            .map((e) => `${e.type} ${e.object.metadata.name} ${e.object.apiVersion} ${JSON.stringify(e.object.spec)}`)
            .sort();
        }),
      );
      assert.deepEqual(events[1], events[0]);
      assert.deepEqual(events[0], [
        `ADDED new ${GROUP}/v1alpha1 {"book":"Persuasion"}`,
        `ADDED old ${GROUP}/v1alpha1 {"book":"Dune","owner":"ann"}`,
      ]);
    });

    test('a converter that refuses: the error as kubectl prints it, on a get and on a list', async () => {
      assert.match(await same(['create', '-f', '-'], shelf('v1', 'full', { books: ['A', 'B'] })), /created/);
      const get = await same(['get', `shelves.v1alpha1.${GROUP}`, 'full']);
      assert.equal(
        get,
        `Error from server: conversion webhook for ${GROUP}/v1, Kind=Shelf failed: a v1alpha1 Shelf holds one book; this one has 2\n[rc=1]`,
      );
      const list = await same(['get', `shelves.v1alpha1.${GROUP}`]);
      assert.match(list, /conversion webhook for .* failed: a v1alpha1 Shelf holds one book; this one has 2/);
      await same(['delete', `shelves.v1.${GROUP}`, 'full']);
    });

    test('admission webhooks for v1 only see a v1alpha1 write in v1 (matchPolicy Equivalent); a mutation made in v1 comes back converted', async () => {
      hook.on('/shelf-guard', (r) => {
        const books: string[] = r.request.object.spec.books ?? [];
        return {
          response: books.includes('Forbidden Tome')
            ? {
                allowed: false,
                status: {
                  code: 403,
                  message: `saw ${r.request.object.apiVersion} ${JSON.stringify(r.request.object.spec)} (request kind ${r.request.requestKind.version}, old ${r.request.oldObject ? JSON.stringify(r.request.oldObject.spec) : 'none'})`,
                },
              }
            : { allowed: true },
        };
      });
      hook.on('/shelf-owner', (r) => ({
        response: {
          allowed: true,
          ...(r.request.object.spec.owner
            ? {}
            : jsonPatch([{ op: 'add', path: '/spec/owner', value: `set in ${r.request.object.apiVersion}` }])),
        },
      }));
      const rules = [
        { apiGroups: [GROUP], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['shelves'] },
      ];
      const hookOf = (name: string, path: string) => ({
        name,
        rules,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        matchPolicy: 'Equivalent',
        clientConfig: { url: `${hook.url}${path}`, caBundle: hook.caBundle },
      });
      const configs = [
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'ValidatingWebhookConfiguration',
          metadata: { name: GUARD },
          webhooks: [hookOf('guard.library.example.com', '/shelf-guard')],
        },
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'MutatingWebhookConfiguration',
          metadata: { name: OWNER },
          webhooks: [hookOf('owner.library.example.com', '/shelf-owner')],
        },
      ];
      for (const c of configs) await same(['create', '-f', '-'], JSON.stringify(c));
      try {
        // give both servers' webhook configuration caches a moment (kube-apiserver's is informer-driven)
        await new Promise((r) => setTimeout(r, 1500));
        const refused = await same(['create', '-f', '-'], shelf('v1alpha1', 'guarded', { book: 'Forbidden Tome' }));
        assert.match(
          refused,
          new RegExp(
            escaped(
              `denied the request: saw ${GROUP}/v1 {"books":["Forbidden Tome"],"owner":"set in ${GROUP}/v1"} (request kind v1alpha1, old none)`,
            ),
          ),
        );
        assert.match(await same(['create', '-f', '-'], shelf('v1alpha1', 'owned', { book: 'Emma' })), /created/);
        const owned = await specOf(['get', `shelves.v1alpha1.${GROUP}`, 'owned']);
        assert.equal(owned[1], owned[0]);
        assert.equal(owned[0], `${GROUP}/v1alpha1 {"book":"Emma","owner":"set in ${GROUP}/v1"}[rc=0]`);
        const updated = await same([
          'patch',
          `shelves.v1alpha1.${GROUP}`,
          'owned',
          '--type=merge',
          '-p',
          '{"spec":{"book":"Forbidden Tome"}}',
        ]);
        assert.match(updated, new RegExp(escaped(`old {"books":["Emma"],"owner":"set in ${GROUP}/v1"}`)));
      } finally {
        await same(['delete', 'validatingwebhookconfiguration', GUARD]);
        await same(['delete', 'mutatingwebhookconfiguration', OWNER]);
      }
    });

    describe("kube-apiserver's checks of a conversion webhook's answer, side by side", () => {
      const CRATES = `crates.${GROUP}`;
      let mode = 'ok';
      const convertAll = (r: Any) =>
        (r.request.objects as Any[]).map((o) => {
          const version = String(r.request.desiredAPIVersion).split('/')[1];
          const toV1 = version === 'v1';
          const spec = toV1
            ? {
                items: o.spec.item === undefined ? [] : [o.spec.item],
                ...(o.spec.count !== undefined ? { quantity: o.spec.count } : {}),
              }
            : {
                ...(o.spec.items?.[0] !== undefined ? { item: o.spec.items[0] } : {}),
                ...(o.spec.quantity !== undefined ? { count: o.spec.quantity } : {}),
              };
          const n = toV1 ? o.status?.count : o.status?.quantity;
          return {
            ...o,
            apiVersion: r.request.desiredAPIVersion,
            spec,
            ...(o.status ? { status: n === undefined ? {} : toV1 ? { quantity: n } : { count: n } } : {}),
          };
        });
      const review = (response: Any) => ({
        raw: {
          status: 200,
          body: JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response }),
        },
      });

      before(async () => {
        hook.on('/crates', (r) => {
          const uid = r.request.uid;
          const ok = { uid, result: { status: 'Success' } };
          const converted = convertAll(r);
          switch (mode) {
            case 'count':
              return review({ ...ok, convertedObjects: [] });
            case 'uid':
              return review({ ...ok, uid: 'not-the-uid', convertedObjects: converted });
            case 'version':
              return review({
                ...ok,
                convertedObjects: converted.map((o: Any) => ({ ...o, apiVersion: `${GROUP}/v1alpha1` })),
              });
            case 'name':
              return review({
                ...ok,
                convertedObjects: converted.map((o: Any) => ({ ...o, metadata: { ...o.metadata, name: 'renamed' } })),
              });
            case 'failure':
              return review({ uid, result: { status: 'Failure' } });
            case 'kind':
              return {
                raw: {
                  status: 200,
                  body: JSON.stringify({
                    apiVersion: 'admission.k8s.io/v1',
                    kind: 'AdmissionReview',
                    response: { uid },
                  }),
                },
              };
            case 'metadata':
              return review({
                ...ok,
                convertedObjects: converted.map((o: Any) => ({
                  ...o,
                  metadata: {
                    ...o.metadata,
                    labels: { ...o.metadata.labels, converted: 'yes' },
                    finalizers: ['example.com/not-kept'],
                  },
                })),
              });
            default:
              return review({ ...ok, convertedObjects: converted });
          }
        });
        // each version has its own replicas field, behind its own scale subresource paths
        const version = (name: string, storage: boolean, prop: object, replicas: string) => ({
          name,
          served: true,
          storage,
          subresources: {
            status: {},
            scale: { specReplicasPath: `.spec.${replicas}`, statusReplicasPath: `.status.${replicas}` },
          },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { ...prop, [replicas]: { type: 'integer' } } },
                status: { type: 'object', properties: { [replicas]: { type: 'integer' } } },
              },
            },
          },
        });
        const crateCrd = {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: CRATES },
          spec: {
            group: GROUP,
            names: { kind: 'Crate', plural: 'crates' },
            scope: 'Namespaced',
            conversion: {
              strategy: 'Webhook',
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { url: `${hook.url}/crates`, caBundle: hook.caBundle },
              },
            },
            versions: [
              version('v1alpha1', false, { item: { type: 'string' } }, 'count'),
              version('v1', true, { items: { type: 'array', items: { type: 'string' } } }, 'quantity'),
            ],
          },
        };
        await same(['create', '-f', '-'], JSON.stringify(crateCrd));
        await Promise.all([kube, authority].map((c) => waitForCrd(c.admin, CRATES)));
      });
      after(async () => {
        await kube?.admin
          .delete(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRATES}`)
          .catch(() => undefined);
      });

      const crate = (name: string) =>
        JSON.stringify({
          apiVersion: `${GROUP}/v1alpha1`,
          kind: 'Crate',
          metadata: { name, namespace: 'default', labels: { app: 'crates' } },
          spec: { item: 'apples' },
        });
      for (const m of ['count', 'uid', 'version', 'name', 'failure', 'kind']) {
        test(`an answer with the wrong ${m}: the same error`, async () => {
          mode = m;
          // the review's uid is random on each server
          const [real, ours] = (await both(['create', '-f', '-'], crate(`bad-${m}`))).map((o) =>
            o.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>'),
          );
          assert.equal(ours, real);
          assert.ok(real.includes(`conversion webhook for ${GROUP}/v1alpha1, Kind=Crate`), real);
        });
      }

      test('the scale subresource through v1alpha1 reads and writes the v1alpha1 replicas of an object stored in v1', async () => {
        mode = 'ok';
        assert.match(
          await same(
            ['create', '-f', '-'],
            JSON.stringify({
              apiVersion: `${GROUP}/v1alpha1`,
              kind: 'Crate',
              metadata: { name: 'scaled', namespace: 'default' },
              spec: { item: 'pears', count: 1 },
            }),
          ),
          /created/,
        );
        assert.match(await same(['scale', `crates.v1alpha1.${GROUP}`, 'scaled', '--replicas=3']), /scaled/);
        const spec = await same(['get', `crates.v1.${GROUP}`, 'scaled', '-o', 'jsonpath={.spec}']);
        assert.equal(spec, '{"items":["pears"],"quantity":3}[rc=0]');
        const scales = await both(['get', '--raw', `/apis/${GROUP}/v1alpha1/namespaces/default/crates/scaled/scale`]);
        const replicas = scales.map((t) => JSON.parse(t.replace(/\[rc=0\]$/, '')).spec);
        assert.deepStrictEqual(replicas[1], replicas[0]);
        assert.deepStrictEqual(replicas[0], { replicas: 3 });
      });

      test("the webhook's labels are kept and the rest of its metadata is not", async () => {
        mode = 'metadata';
        assert.match(await same(['create', '-f', '-'], crate('relabelled')), /created/);
        mode = 'ok';
        const meta = await same([
          'get',
          `crates.v1.${GROUP}`,
          'relabelled',
          '-o',
          'jsonpath={.metadata.labels} {.metadata.finalizers}',
        ]);
        assert.equal(meta, '{"app":"crates","converted":"yes"} [rc=0]');
      });

      test('a collection delete in v1alpha1 answers the deleted objects converted', async () => {
        mode = 'ok';
        const lists = await both(['delete', '--raw', `/apis/${GROUP}/v1alpha1/namespaces/default/crates`]);
        const items = lists.map((t) =>
          (JSON.parse(t.replace(/\[rc=0\]$/, '')).items as Any[])
            .map((o) => `${o.metadata.name} ${o.apiVersion} ${JSON.stringify(o.spec)}`)
            .sort(),
        );
        assert.deepStrictEqual(items[1], items[0]);
        assert.deepStrictEqual(items[0], [
          `relabelled ${GROUP}/v1alpha1 {"item":"apples"}`,
          `scaled ${GROUP}/v1alpha1 {"count":3,"item":"pears"}`,
        ]);
      });
    });

    test('round trip over generated objects: written in v1alpha1, read in v1 and back, nothing lost', async () => {
      const word = fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,15}$/);
      const samples = fc.sample(
        fc.record({ book: fc.option(word, { nil: undefined }), owner: fc.option(word, { nil: undefined }) }),
        { numRuns: 6, seed: 20261129 },
      );
      for (const [i, s] of samples.entries()) {
        const spec = Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
        const name = `gen-${i}`;
        await same(['create', '-f', '-'], shelf('v1alpha1', name, spec));
        const [hubReal, hubOurs] = await specOf(['get', `shelves.v1.${GROUP}`, name]);
        assert.equal(hubOurs, hubReal);
        const [back, backOurs] = await both(['get', `shelves.v1alpha1.${GROUP}`, name, '-o', 'jsonpath={.spec}']);
        assert.equal(backOurs, back);
        assert.deepStrictEqual(JSON.parse(back.replace(/\[rc=0\]$/, '') || '{}'), spec, `generated spec ${i}`);
      }
    });
  },
);

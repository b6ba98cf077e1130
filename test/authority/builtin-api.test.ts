// The built-in API on the authority, held to what a real kube-apiserver v1.25.9 serves: its discovery documents
// compared with the recorded ones (../shared/reference/kube-apiserver-api), every difference listed here with its
// reason; then every served resource in every served version created, read, listed, watched, updated, patched
// (merge, strategic merge, JSON patch, server-side apply) and deleted through the library's client, and all of
// them applied, listed and deleted through kubectl.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { KubeClient, ObjectClient, isNotFound, type KubeObject } from '../../packages/ctrlmetrics/src/index.js';
import { RESTMapper } from '../../packages/ctrlmetrics/src/exports/client.js';

/** A JSON document as the API answers it. */
type Doc = Record<string, any>;
import { builtinObjects } from './fixtures/builtin-objects.js';

const run = promisify(execFile);
const REFERENCE = resolve(import.meta.dirname, '..', '..', '..', 'shared', 'reference', 'kube-apiserver-api');
const NO_REFERENCE = existsSync(REFERENCE)
  ? false
  : `the recorded discovery documents are not at ${REFERENCE} (CI has ../shared beside the checkout)`;

/** Resources of kube-apiserver v1.25.9's discovery the authority does not serve, and why. */
const NOT_SERVED: Record<string, string> = {
  'v1/bindings': 'binding a pod to a node needs a scheduler and a kubelet',
  'v1/componentstatuses': 'reports control-plane components the authority does not have',
};
/** Subresources it does not serve: they reach a kubelet, proxy, or stand for a controller's work. */
const SUBRESOURCES_NOT_SERVED = [
  'v1/namespaces/finalize',
  'v1/nodes/proxy',
  'v1/pods/attach',
  'v1/pods/binding',
  'v1/pods/ephemeralcontainers',
  'v1/pods/eviction',
  'v1/pods/exec',
  'v1/pods/log',
  'v1/pods/portforward',
  'v1/pods/proxy',
  'v1/services/proxy',
  'certificates.k8s.io/v1/certificatesigningrequests/approval',
];
/** What it serves beyond 1.25: SelfSubjectReview (from 1.28), which `kubectl auth whoami` asks. */
const ONLY_ON_THE_AUTHORITY: Record<string, Doc> = {
  'authentication.k8s.io/v1': {
    name: 'selfsubjectreviews',
    singularName: '',
    namespaced: false,
    kind: 'SelfSubjectReview',
    verbs: ['create'],
  },
};

const recorded = (p: string): Doc => JSON.parse(readFileSync(join(REFERENCE, p), 'utf8'));

describe('the built-in API of kube-apiserver v1.25.9 on the authority', () => {
  let authority: Authority;
  let admin: KubeClient;
  let objects: ObjectClient;
  let tmp: string;
  let csrPem: string;

  before(async () => {
    authority = await startAuthority({ listen: '127.0.0.1:0' });
    admin = new KubeClient({ ...authority.restConfig, qps: 1000, burst: 1000 });
    objects = new ObjectClient(admin, new RESTMapper(admin));
    tmp = await mkdtemp(join(tmpdir(), 'ctrlmetrics-builtin-'));
    await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(tmp, 'key.pem'),
      '-out',
      join(tmp, 'csr.pem'),
      '-subj',
      '/CN=builtin-test',
    ]);
    csrPem = await readFile(join(tmp, 'csr.pem'), 'utf8');
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'builtin' } });
  });
  after(async () => {
    admin?.close();
    await authority?.stop();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  describe('discovery, compared with the recorded documents', { skip: NO_REFERENCE }, () => {
    it('/apis lists the recorded groups and versions in their order, without what is not served', async () => {
      const want = recorded('apis.json');
      for (const g of want.groups) {
        g.versions = g.versions.filter((v: Doc) => !onlyNotServed(v.groupVersion));
        if (!g.versions.some((v: Doc) => v.groupVersion === g.preferredVersion.groupVersion))
          g.preferredVersion = g.versions[0];
      }
      want.groups = want.groups.filter((g: Doc) => g.versions.length);
      const got = await admin.get<Doc>('/apis');
      assert.deepEqual(got, want);
      const core = await admin.get<Doc>('/api');
      assert.deepEqual(core.versions, recorded('api.json').versions);
    });

    it('each group version lists the recorded resources, subresources, verbs, short names, categories and hashes', async () => {
      const files = ['api-v1.json', ...readdirSync(join(REFERENCE, 'discovery')).map((f) => join('discovery', f))];
      let compared = 0;
      for (const f of files) {
        const want = recorded(f);
        const gv = want.groupVersion as string;
        want.resources = want.resources.filter(
          (r: Doc) =>
            !(`${gv}/${r.name.split('/')[0]}` in NOT_SERVED) && !SUBRESOURCES_NOT_SERVED.includes(`${gv}/${r.name}`),
        );
        if (ONLY_ON_THE_AUTHORITY[gv])
          want.resources = [...want.resources, ONLY_ON_THE_AUTHORITY[gv]].sort((a: Doc, b: Doc) =>
            a.name < b.name ? -1 : 1,
          );
        const path = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
        if (!want.resources.length) {
          await assert.rejects(admin.get(path), (err) => isNotFound(err), `${gv} is not served`);
          continue;
        }
        const got = await admin.get<Doc>(path);
        // the core list has no apiVersion on a real server
        if (gv === 'v1') assert.equal(want.apiVersion, undefined);
        assert.deepEqual({ ...got, resources: undefined }, { ...want, resources: undefined }, gv);
        assert.deepEqual(got.resources, want.resources, gv);
        compared++;
      }
      assert.equal(compared, 24, 'the 24 recorded group versions');
    });
  });

  describe('OpenAPI, compared with the recorded documents', { skip: NO_REFERENCE }, () => {
    it('/openapi/v3 indexes the recorded documents of what is served, and answers each as recorded', async () => {
      const index = recorded(join('openapi-v3', 'index.json'));
      const left = ['openid/v1/jwks'];
      const want = Object.fromEntries(Object.entries(index.paths).filter(([p]) => !left.includes(p)));
      const got = await admin.get<Doc>('/openapi/v3');
      assert.deepEqual(got.paths, want);
      for (const p of [
        'api/v1',
        'apis/apps/v1',
        'apis/batch/v1',
        'apis/networking.k8s.io/v1',
        'apis/autoscaling/v2',
        'apis/autoscaling/v1',
      ]) {
        assert.deepEqual(
          await admin.get<Doc>(`/openapi/v3/${p}`),
          recorded(join('openapi-v3', `${p.replaceAll('/', '_')}.json`)),
          p,
        );
      }
    });

    it('/openapi/v2 in JSON is the recorded document', async () => {
      assert.deepEqual(await admin.get<Doc>('/openapi/v2'), recorded('openapi-v2.json'));
    });

    it('kubectl explain reads the built-in schemas', async () => {
      const schema = recorded(join('openapi-v3', 'apis_apps_v1.json')).components.schemas[
        'io.k8s.api.apps.v1.StatefulSetSpec'
      ].properties.replicas;
      const { stdout } = await run('kubectl', [
        '--kubeconfig',
        authority.kubeconfig,
        'explain',
        'statefulset.spec.replicas',
      ]);
      assert.match(stdout, /KIND: +StatefulSet/);
      assert.match(stdout, /FIELD: +replicas <integer>/);
      // kubectl wraps the description at 80 columns
      assert.ok(stdout.replace(/\s+/g, ' ').includes(String(schema.description).replace(/\s+/g, ' ')), stdout);
    });
  });

  function discoveryFile(gv: string): string {
    return gv === 'v1' ? 'api-v1.json' : join('discovery', `${gv.replace('/', '_')}.json`);
  }
  function onlyNotServed(gv: string): boolean {
    const list = recorded(discoveryFile(gv));
    return list.resources.filter((r: Doc) => !r.name.includes('/')).every((r: Doc) => `${gv}/${r.name}` in NOT_SERVED);
  }

  describe('every served resource through the library client', () => {
    it('create, get, list, watch, update, merge/strategic/JSON patch, apply and delete', async () => {
      const served = await servedResources(admin);
      const fixtures = builtinObjects('builtin', 'lib', csrPem);
      let done = 0;
      for (const r of served) {
        const fixture = fixtures.find(
          (o) => o.kind === r.kind && String(o.apiVersion).split('/').slice(0, -1).join('/') === r.group,
        );
        assert.ok(fixture, `a fixture for ${r.kind} (${r.gv})`);
        const object = renamed({ ...structuredClone(fixture), apiVersion: r.gv }, r.version);
        const what = `${r.gv} ${r.kind}`;
        const key = { namespace: object.metadata!.namespace, name: object.metadata!.name! };
        const ref = { apiVersion: r.gv, kind: r.kind };

        const events: string[] = [];
        const collection = `${r.namespaced ? `${r.base}/namespaces/builtin` : r.base}/${r.resource}`;
        const from = (await admin.get<Doc>(collection)).metadata.resourceVersion;
        const watch = admin.watch(
          collection,
          { fieldSelector: `metadata.name=${key.name}`, resourceVersion: from },
          (e) => {
            events.push(e.type);
          },
        );
        try {
          const created = await objects.create(object);
          assert.equal(created.metadata?.name, key.name, what);
          assert.equal(created.kind, r.kind, what);
          const got = await objects.get(ref, key);
          assert.equal(got.metadata?.uid, created.metadata?.uid, what);
          const listed = await objects.list(ref, r.namespaced ? { namespace: 'builtin' } : {});
          assert.ok(
            listed.some((o) => o.metadata?.uid === created.metadata?.uid),
            `${what}: listed`,
          );

          const updated: KubeObject = await objects.update({
            ...got,
            metadata: { ...got.metadata, labels: { step: 'update' } },
          });
          const labels = (o: KubeObject) => o.metadata?.labels ?? {};
          assert.equal(labels(updated).step, 'update', what);
          const merged = await objects.patch(updated, { metadata: { labels: { merge: 'yes' } } }, { type: 'merge' });
          assert.deepEqual([labels(merged).merge, labels(merged).step], ['yes', 'update'], what);
          const strategic = await objects.patch(
            updated,
            { metadata: { labels: { strategic: 'yes' } } },
            { type: 'strategic' },
          );
          assert.equal(labels(strategic).strategic, 'yes', what);
          const jsonPatched = await objects.patch(
            updated,
            [{ op: 'add', path: '/metadata/annotations', value: { json: 'yes' } }],
            { type: 'json' },
          );
          assert.deepEqual(jsonPatched.metadata?.annotations, { json: 'yes' }, what);
          const applied = await objects.apply(
            { ...ref, metadata: { ...key, labels: { applied: 'yes' } } },
            { fieldManager: 'builtin-test' },
          );
          assert.equal(labels(applied).applied, 'yes', what);

          await objects.delete(applied);
          await waitFor(
            async () =>
              !(await objects.get(ref, key).catch((err) => (isNotFound(err) ? undefined : Promise.reject(err)))) ||
              isDeleting(await objects.get(ref, key)),
            `${what}: deleted`,
          );
          await waitFor(
            async () =>
              events.includes('ADDED') &&
              events.includes('MODIFIED') &&
              (events.includes('DELETED') || r.resource === 'namespaces'),
            `${what}: watched ${events.join(',')}`,
          );
        } finally {
          watch.stop();
        }
        done++;
      }
      assert.equal(done, 53, 'every served resource but the create-only reviews');
    });
  });

  describe('events: one set of objects in two shapes', () => {
    it('an Event written as core v1 reads as events.k8s.io/v1, and the other way round', async () => {
      const regarding = { kind: 'ConfigMap', namespace: 'builtin', name: 'subject', apiVersion: 'v1' };
      await admin.create('/api/v1/namespaces/builtin/events', {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'old-style' },
        involvedObject: regarding,
        reason: 'Created',
        message: 'made by the old recorder',
        source: { component: 'old-recorder' },
        firstTimestamp: '2026-01-01T00:00:00Z',
        lastTimestamp: '2026-01-01T00:01:00Z',
        count: 2,
        type: 'Normal',
        reportingComponent: 'old-recorder',
        reportingInstance: 'host-1',
      });
      const seen = await admin.get<Doc>('/apis/events.k8s.io/v1/namespaces/builtin/events/old-style');
      assert.equal(seen.apiVersion, 'events.k8s.io/v1');
      assert.deepEqual(seen.regarding, regarding);
      assert.equal(seen.note, 'made by the old recorder');
      assert.equal(seen.reportingController, 'old-recorder');
      assert.deepEqual(seen.deprecatedSource, { component: 'old-recorder' });
      assert.equal(seen.deprecatedFirstTimestamp, '2026-01-01T00:00:00Z');
      assert.equal(seen.deprecatedLastTimestamp, '2026-01-01T00:01:00Z');
      assert.equal(seen.deprecatedCount, 2);
      assert.equal(seen.eventTime, null);
      for (const coreOnly of [
        'involvedObject',
        'message',
        'source',
        'firstTimestamp',
        'lastTimestamp',
        'count',
        'reportingComponent',
      ])
        assert.equal(seen[coreOnly], undefined, coreOnly);

      await admin.create('/apis/events.k8s.io/v1/namespaces/builtin/events', {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'new-style' },
        eventTime: '2026-01-01T00:00:00.000000Z',
        reportingController: 'example.com/new-recorder',
        reportingInstance: 'new-recorder-1',
        action: 'Reconciling',
        reason: 'Synced',
        regarding,
        note: 'made by the new recorder',
        type: 'Normal',
      });
      const core = await admin.get<Doc>('/api/v1/namespaces/builtin/events/new-style');
      assert.equal(core.apiVersion, 'v1');
      assert.deepEqual(core.involvedObject, regarding);
      assert.equal(core.message, 'made by the new recorder');
      assert.equal(core.reportingComponent, 'example.com/new-recorder');
      assert.equal(core.action, 'Reconciling');
      assert.equal(core.eventTime, '2026-01-01T00:00:00.000000Z');
      // both lists hold both, each in its shape; a patch through the new API lands in the stored object
      const listed = await admin.get<Doc>('/apis/events.k8s.io/v1/namespaces/builtin/events');
      assert.deepEqual(
        listed.items
          .map((e: Doc) => e.metadata.name)
          .filter((n: string) => n.endsWith('-style'))
          .sort(),
        ['new-style', 'old-style'],
      );
      await admin.mergePatch('/apis/events.k8s.io/v1/namespaces/builtin/events/new-style', { note: 'patched' });
      assert.equal((await admin.get<Doc>('/api/v1/namespaces/builtin/events/new-style')).message, 'patched');
    });
  });

  describe('every served kind through kubectl', () => {
    it('apply -f of one object of each kind, get each, then delete -f', async () => {
      const file = join(tmp, 'all.yaml');
      const fixtures = builtinObjects('builtin', 'kubectl', csrPem);
      await writeFile(file, fixtures.map((o) => toYaml(o)).join('---\n'));
      const kubectl = (...args: string[]) => run('kubectl', ['--kubeconfig', authority.kubeconfig, ...args]);
      const { stdout: appliedText } = await kubectl('apply', '-f', file);
      assert.equal(
        appliedText
          .trim()
          .split('\n')
          .filter((l) => / created$/.test(l)).length,
        fixtures.length,
        appliedText,
      );
      for (const o of fixtures) {
        const resource =
          `${o.kind!.toLowerCase()}.${String(o.apiVersion).includes('/') ? String(o.apiVersion).split('/')[0] : ''}`.replace(
            /\.$/,
            '',
          );
        const { stdout } = await kubectl(
          'get',
          resource,
          o.metadata!.name!,
          ...(o.metadata!.namespace ? ['-n', o.metadata!.namespace] : []),
          '-o',
          'jsonpath={.kind}/{.metadata.name}',
        );
        assert.equal(stdout, `${o.kind}/${o.metadata!.name}`);
      }
      // kube's printer columns
      const header = async (resource: string) =>
        (await kubectl('get', resource, '-n', 'builtin')).stdout
          .split('\n')[0]
          .trim()
          .split(/\s{2,}/);
      assert.deepEqual(await header('statefulsets'), ['NAME', 'READY', 'AGE']);
      assert.deepEqual(await header('replicasets'), ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE']);
      assert.deepEqual(await header('daemonsets'), [
        'NAME',
        'DESIRED',
        'CURRENT',
        'READY',
        'UP-TO-DATE',
        'AVAILABLE',
        'NODE SELECTOR',
        'AGE',
      ]);
      assert.deepEqual(await header('jobs'), ['NAME', 'COMPLETIONS', 'DURATION', 'AGE']);
      assert.deepEqual(await header('cronjobs'), ['NAME', 'SCHEDULE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']);
      assert.deepEqual(await header('persistentvolumeclaims'), [
        'NAME',
        'STATUS',
        'VOLUME',
        'CAPACITY',
        'ACCESS MODES',
        'STORAGECLASS',
        'AGE',
      ]);
      assert.deepEqual(await header('ingresses'), ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE']);
      assert.deepEqual(await header('poddisruptionbudgets'), [
        'NAME',
        'MIN AVAILABLE',
        'MAX UNAVAILABLE',
        'ALLOWED DISRUPTIONS',
        'AGE',
      ]);
      assert.match(
        (await kubectl('get', 'cronjob', 'cj-kubectl', '-n', 'builtin', '--no-headers')).stdout,
        /^cj-kubectl\s+\*\/5 \* \* \* \*\s+True\s+0\s+<none>\s+\S+\s*$/,
      );
      assert.match(
        (await kubectl('get', 'pvc', 'pvc-kubectl', '-n', 'builtin', '--no-headers')).stdout,
        /^pvc-kubectl\s+Pending\s+\S+\s*$/,
      );
      // kubectl create job / cronjob send protobuf
      await kubectl('create', 'job', 'made', '-n', 'builtin', '--image=busybox:1.36', '--', 'date');
      const { stdout: job } = await kubectl('get', 'job', 'made', '-n', 'builtin', '-o', 'json');
      const madeJob = JSON.parse(job) as Doc;
      assert.deepEqual(
        madeJob.spec.template.spec.containers.map((c: Doc) => [c.name, c.image, c.command]),
        [['made', 'busybox:1.36', ['date']]],
      );
      assert.equal(madeJob.spec.template.spec.restartPolicy, 'Never');
      assert.equal(madeJob.spec.backoffLimit, 6);
      await kubectl(
        'create',
        'cronjob',
        'made',
        '-n',
        'builtin',
        '--image=busybox:1.36',
        '--schedule=*/10 * * * *',
        '--',
        'date',
      );
      const madeCron = JSON.parse(
        (await kubectl('get', 'cronjob', 'made', '-n', 'builtin', '-o', 'json')).stdout,
      ) as Doc;
      assert.equal(madeCron.spec.schedule, '*/10 * * * *');
      assert.deepEqual(
        madeCron.spec.jobTemplate.spec.template.spec.containers.map((c: Doc) => [c.name, c.image, c.command]),
        [['made', 'busybox:1.36', ['date']]],
      );
      assert.equal(madeCron.spec.jobTemplate.spec.template.spec.restartPolicy, 'OnFailure');
      const { stdout: scaled } = await kubectl('scale', 'statefulset', 'sts-kubectl', '-n', 'builtin', '--replicas=2');
      assert.match(scaled, /statefulset.apps\/sts-kubectl scaled/);
      const { stdout: replicas } = await kubectl(
        'get',
        'statefulset',
        'sts-kubectl',
        '-n',
        'builtin',
        '-o',
        'jsonpath={.spec.replicas}',
      );
      assert.equal(replicas, '2');
      const { stdout: deleted } = await kubectl('delete', '-f', file, '--wait=false');
      assert.equal(
        deleted
          .trim()
          .split('\n')
          .filter((l) => / deleted$/.test(l)).length,
        fixtures.length,
        deleted,
      );
    });
  });
});

interface Served {
  group: string;
  version: string;
  gv: string;
  base: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

/** Every resource with all the CRUD verbs that the authority's discovery lists. */
async function servedResources(admin: KubeClient): Promise<Served[]> {
  const out: Served[] = [];
  const groups = await admin.get<Doc>('/apis');
  const gvs = ['v1', ...groups.groups.flatMap((g: Doc) => g.versions.map((v: Doc) => v.groupVersion as string))];
  for (const gv of gvs) {
    const base = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
    const list = await admin.get<Doc>(base);
    const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv];
    for (const r of list.resources) {
      if (
        r.name.includes('/') ||
        !['create', 'get', 'list', 'watch', 'update', 'patch', 'delete'].every((v) => r.verbs.includes(v))
      )
        continue;
      out.push({
        group: group!,
        version: version!,
        gv,
        base,
        resource: r.name,
        kind: r.kind,
        namespaced: r.namespaced,
      });
    }
  }
  return out;
}

/** Each served version gets names of its own (its objects share storage with the other versions'). */
function renamed(o: KubeObject, version: string): KubeObject {
  if (version === 'v1') return o;
  const m = o.metadata!;
  return { ...o, metadata: { ...m, name: `${m.name}-${version}` } };
}

function isDeleting(o: KubeObject): boolean {
  return !!o.metadata?.deletionTimestamp;
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out: ${what}`);
}

// LIST in pages as kube-apiserver serves them: limit, continue, remainingItemCount, every page consistent with the
// first, an expired token answered 410 with a token that goes on; and the clients that page: kubectl --chunk-size
// and the manager's informer each get every object exactly once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { Informer } from '../../packages/ctrlmetrics/src/kube/informer.js';
import { KubeClient } from '../../packages/ctrlmetrics/src/kube/client.js';
import type { KubeObject } from '../../packages/ctrlmetrics/src/controller/types.js';
import { run } from '../helpers/process.js';
import { call, type Obj } from './https.js';

describe('paginated LIST', () => {
  let a: Authority;
  let dir: string;
  let now = Date.parse('2026-11-26T10:00:00Z');
  const N = 53;
  const api = (m: string, p: string, body?: unknown) => call(a.url, a.caPem, m, p, { token: a.adminToken, body });
  const names = (r: Obj) => (r.body.items as Obj[]).map((o) => o.metadata.name as string);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'authority-pages-'));
    a = await startAuthority({ listen: '127.0.0.1:0', kubeconfigOut: join(dir, 'kubeconfig'), clock: () => now });
    assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: 'pages' } })).status, 201);
    for (let i = 0; i < N; i++) {
      const r = await api('POST', '/api/v1/namespaces/pages/configmaps', {
        metadata: { name: `cm-${String(i).padStart(3, '0')}`, labels: { parity: i % 2 ? 'odd' : 'even' } },
      });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await a?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const cms = Array.from({ length: N }, (_, i) => `cm-${String(i).padStart(3, '0')}`);
  // every namespace also holds the cluster's CA bundle, as in kube
  const expected = [...cms, 'kube-root-ca.crt'];

  it('limit and continue return every object once, in order, with remainingItemCount and one resourceVersion', async () => {
    const seen: string[] = [];
    let cont = '';
    let rv = '';
    let pages = 0;
    do {
      const r = await api(
        'GET',
        `/api/v1/namespaces/pages/configmaps?limit=10${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      assert.equal(r.status, 200, r.text);
      pages++;
      seen.push(...names(r));
      rv ||= r.body.metadata.resourceVersion;
      assert.equal(r.body.metadata.resourceVersion, rv, 'every page has the resourceVersion of the first');
      cont = r.body.metadata.continue ?? '';
      if (cont) assert.equal(r.body.metadata.remainingItemCount, expected.length - seen.length);
      else assert.equal(r.body.metadata.remainingItemCount, undefined);
    } while (cont && pages < 20);
    assert.equal(pages, 6, '54 objects in pages of 10');
    assert.deepEqual(seen, expected);
  });

  it('later pages are consistent with the first: changes made meanwhile are not in them', async () => {
    const first = await api('GET', '/api/v1/namespaces/pages/configmaps?limit=20');
    assert.deepEqual(names(first), expected.slice(0, 20));
    assert.equal((await api('DELETE', '/api/v1/namespaces/pages/configmaps/cm-030')).status, 200);
    assert.equal(
      (await api('POST', '/api/v1/namespaces/pages/configmaps', { metadata: { name: 'cm-0305' } })).status,
      201,
    );
    const rest = await api(
      'GET',
      `/api/v1/namespaces/pages/configmaps?limit=100&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(names(rest), expected.slice(20), 'the deleted object is still there, the new one not yet');
    assert.equal(rest.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
    const fresh = await api('GET', '/api/v1/namespaces/pages/configmaps');
    assert.ok(names(fresh).includes('cm-0305') && !names(fresh).includes('cm-030'));
    // put things back for the other tests
    assert.equal((await api('DELETE', '/api/v1/namespaces/pages/configmaps/cm-0305')).status, 200);
    assert.equal(
      (
        await api('POST', '/api/v1/namespaces/pages/configmaps', {
          metadata: { name: 'cm-030', labels: { parity: 'even' } },
        })
      ).status,
      201,
    );
  });

  it('with a selector: limit counts matching objects, no remainingItemCount, no token when nothing more matches', async () => {
    const seen: string[] = [];
    let cont = '';
    let pages = 0;
    do {
      const r = await api(
        'GET',
        `/api/v1/namespaces/pages/configmaps?labelSelector=parity%3Dodd&limit=13${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      assert.equal(r.status, 200, r.text);
      pages++;
      assert.equal(r.body.metadata.remainingItemCount, undefined);
      seen.push(...names(r));
      cont = r.body.metadata.continue ?? '';
    } while (cont && pages < 20);
    assert.deepEqual(
      seen,
      cms.filter((_, i) => i % 2),
    );
    assert.equal(pages, 2, '26 odd objects in pages of 13: the second page is the last');
  });

  it('an expired continue token is answered 410 Expired with a token that continues at the current state', async () => {
    const first = await api('GET', '/api/v1/namespaces/pages/configmaps?limit=5');
    assert.equal(
      (await api('POST', '/api/v1/namespaces/pages/configmaps', { metadata: { name: 'zz-new' } })).status,
      201,
    );
    now += 6 * 60_000; // past the 5 minutes a list is held
    const gone = await api(
      'GET',
      `/api/v1/namespaces/pages/configmaps?limit=5&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    assert.equal(gone.status, 410, gone.text);
    assert.equal(gone.body.kind, 'Status');
    assert.equal(gone.body.reason, 'Expired');
    assert.match(gone.body.message, /continue token is too old.*Start a new list without continue/);
    const inconsistent = gone.body.metadata.continue as string;
    assert.ok(inconsistent, 'the 410 carries a token to go on with');
    const rest = await api(
      'GET',
      `/api/v1/namespaces/pages/configmaps?limit=100&continue=${encodeURIComponent(inconsistent)}`,
    );
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(names(rest), [...expected.slice(5), 'zz-new'], 'the rest as it is now');
    assert.equal((await api('DELETE', '/api/v1/namespaces/pages/configmaps/zz-new')).status, 200);
  });

  it('bad paging parameters are 400s that say what is wrong', async () => {
    const first = await api('GET', '/api/v1/namespaces/pages/configmaps?limit=5');
    const cases: Array<[string, RegExp]> = [
      ['limit=abc', /invalid limit "abc"/],
      ['limit=5&continue=not-a-token', /invalid continue token: it is not one this server issued/],
      [
        `limit=5&continue=${encodeURIComponent(first.body.metadata.continue)}&resourceVersion=5`,
        /specifying resource version is not allowed when using continue/,
      ],
    ];
    for (const [query, why] of cases) {
      const r = await api('GET', `/api/v1/namespaces/pages/configmaps?${query}`);
      assert.equal(r.status, 400, query);
      assert.equal(r.body.reason, 'BadRequest');
      assert.match(r.body.message, why);
    }
    const other = await api(
      'GET',
      `/api/v1/namespaces/default/configmaps?limit=5&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    assert.equal(other.status, 400);
    assert.match(other.body.message, /continues a list of another resource or namespace/);
    // limit=0 or below: everything at once, as kube
    const all = await api('GET', '/api/v1/namespaces/pages/configmaps?limit=0');
    assert.equal(all.body.items.length, expected.length);
    assert.equal(all.body.metadata.continue, undefined);
  });

  it('kubectl get --chunk-size pages through the list and prints every object once', async () => {
    const env = { ...process.env, KUBECACHEDIR: join(dir, 'cache'), HOME: dir, KUBECONFIG: '' };
    const r = await run(
      'kubectl',
      ['--kubeconfig', a.kubeconfig, 'get', 'configmaps', '-n', 'pages', '--chunk-size=7', '-o', 'name', '-v=6'],
      { env, timeoutMs: 30_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const printed = r.stdout
      .trim()
      .split('\n')
      .map((l) => l.replace('configmap/', ''));
    assert.deepEqual(printed.sort(), expected);
    assert.equal(new Set(printed).size, printed.length, 'no object twice');
    const requests = r.stderr
      .split('\n')
      .filter((l) => /GET https:\/\/.*\/namespaces\/pages\/configmaps\?(continue=[^&\s]+&)?limit=7 200/.test(l));
    assert.ok(requests.length >= 8, `kubectl asked for pages of 7 (${requests.length} requests)`);
    assert.ok(
      requests.some((l) => /continue=/.test(l)),
      'and continued',
    );
    const table = await run(
      'kubectl',
      ['--kubeconfig', a.kubeconfig, 'get', 'configmaps', '-n', 'pages', '--chunk-size=10'],
      { env, timeoutMs: 30_000 },
    );
    assert.equal(table.code, 0, table.stderr);
    const rows = table.stdout.trim().split('\n').slice(1);
    assert.deepEqual(rows.map((l) => l.split(/\s+/)[0]).sort(), expected, 'the table view pages too (one header)');
  });

  it('the informer lists in pages and delivers every object exactly once', async () => {
    const adds = new Map<string, number>();
    const inf = new Informer<KubeObject>(new KubeClient(a.restConfig), {
      path: '/api/v1/namespaces/pages/configmaps',
      pageSize: 8,
    });
    inf.addHandler({ onAdd: (o) => adds.set(o.metadata!.name!, (adds.get(o.metadata!.name!) ?? 0) + 1) });
    try {
      inf.start();
      assert.equal(await inf.waitForSync(10_000), true);
      assert.equal(inf.stats.listPages, 7, '54 objects in pages of 8');
      assert.deepEqual([...adds.keys()].sort(), expected);
      assert.ok(
        [...adds.values()].every((n) => n === 1),
        'each object added once',
      );
      assert.equal(inf.list().length, expected.length);
    } finally {
      await inf.stop();
    }
  });

  it("a list larger than one slice is written in slices: one valid document with every object, the items without kind and apiVersion as kube-apiserver writes a built-in kind's", async () => {
    assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: 'big' } })).status, 201);
    const want: string[] = [];
    for (let i = 0; i < 1234; i++) {
      const n = `big-${String(i).padStart(4, '0')}`;
      want.push(n);
      const r = await api('POST', '/api/v1/namespaces/big/configmaps', {
        metadata: { name: n },
        data: { i: String(i) },
      });
      assert.equal(r.status, 201);
    }
    want.push('kube-root-ca.crt');
    const list = await api('GET', '/api/v1/namespaces/big/configmaps');
    assert.equal(list.status, 200);
    assert.equal(list.headers['content-type'], 'application/json');
    assert.equal(list.body.kind, 'ConfigMapList');
    assert.equal(list.body.apiVersion, 'v1');
    const items = list.body.items as Obj[];
    assert.deepEqual(
      items.map((o) => o.metadata.name),
      want,
    );
    assert.ok(items.every((o) => o.kind === undefined && o.apiVersion === undefined));
    assert.equal(items[7].data.i, '7');
    const head = await api('HEAD', '/api/v1/namespaces/big/configmaps');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });
});

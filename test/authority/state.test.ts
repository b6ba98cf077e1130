// The state directory: CA, signing key and admin token generated on first start and reused; objects, CRDs and issued
// tokens survive a restart; files are owner-only; without a state dir nothing is kept.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { startAuthority, type Authority } from '../../packages/envtest/src/index.js';
import { writeFileAtomic } from '../../packages/envtest/src/state.js';
import { call, watch, type Obj } from './https.js';

describe('authority state directory', () => {
  let dir: string;
  const running: Authority[] = [];
  const start = async (o: Parameters<typeof startAuthority>[0] = {}) => {
    const a = await startAuthority({ listen: '127.0.0.1:0', ...o });
    running.push(a);
    return a;
  };
  const stop = async (a: Authority) => {
    await a.stop();
    running.splice(running.indexOf(a), 1);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'authority-state-'));
  });
  after(async () => {
    for (const a of running) await a.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps CA, admin token, objects, CRDs and issued tokens across a restart', async () => {
    const stateDir = join(dir, 's1');
    const first = await start({ stateDir });
    const admin1 = (m: string, p: string, body?: unknown) =>
      call(first.url, first.caPem, m, p, { token: first.adminToken, body });
    assert.equal(
      (await admin1('POST', '/api/v1/namespaces', { metadata: { name: 'keep', labels: { metrics: 'enabled' } } }))
        .status,
      201,
    );
    const sa = await admin1('POST', '/api/v1/namespaces/keep/serviceaccounts', { metadata: { name: 'bot' } });
    const token = (
      await admin1('POST', '/api/v1/namespaces/keep/serviceaccounts/bot/token', { spec: { expirationSeconds: 3600 } })
    ).body.status.token as string;
    const crd = await admin1('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: 'certificates.cert-manager.io' },
      spec: {
        group: 'cert-manager.io',
        scope: 'Namespaced',
        names: { plural: 'certificates', kind: 'Certificate' },
        versions: [{ name: 'v1', served: true, storage: true }],
      },
    });
    assert.equal(crd.status, 201, crd.text);
    assert.equal(
      (
        await admin1('POST', '/apis/cert-manager.io/v1/namespaces/keep/certificates', {
          metadata: { name: 'serving-cert' },
          spec: { secretName: 's' },
        })
      ).status,
      201,
    );
    const rvBefore = Number((await admin1('GET', '/api/v1/namespaces')).body.metadata.resourceVersion);
    await stop(first);

    for (const f of ['ca.crt', 'ca.key', 'sa.key', 'admin.token', 'state.json', 'kubeconfig']) {
      assert.ok(existsSync(join(stateDir, f)), f);
    }
    for (const f of ['ca.key', 'sa.key', 'admin.token', 'state.json'])
      assert.equal(statSync(join(stateDir, f)).mode & 0o077, 0, `${f} is owner-only`);
    assert.equal(statSync(stateDir).mode & 0o077, 0, 'the state dir is owner-only');

    const second = await start({ stateDir });
    assert.equal(second.caPem, first.caPem, 'the CA is reused');
    assert.equal(second.adminToken, first.adminToken, 'the admin token is reused');
    const admin2 = (m: string, p: string, body?: unknown) =>
      call(second.url, second.caPem, m, p, { token: second.adminToken, body });
    const ns = await admin2('GET', '/api/v1/namespaces/keep');
    assert.equal(ns.status, 200);
    assert.equal(ns.body.metadata.labels.metrics, 'enabled');
    const sa2 = await admin2('GET', '/api/v1/namespaces/keep/serviceaccounts/bot');
    assert.equal(sa2.body.metadata.uid, sa.body.metadata.uid, 'same object, same uid');
    assert.equal(
      (await admin2('GET', '/apis/cert-manager.io/v1/namespaces/keep/certificates/serving-cert')).body.spec.secretName,
      's',
      'the CRD still serves its kind',
    );
    const tr = await admin2('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    assert.equal(tr.body.status.authenticated, true, 'a token issued before the restart is still valid');
    assert.equal(tr.body.status.user.username, 'system:serviceaccount:keep:bot');
    const created = await admin2('POST', '/api/v1/namespaces/keep/configmaps', { metadata: { name: 'after' } });
    assert.ok(Number(created.body.metadata.resourceVersion) > rvBefore, 'resourceVersions keep increasing');
    // the event history is not persisted: resuming a watch from before the restart is "too old", as after a compaction
    const w = await watch(
      second.url,
      second.caPem,
      `/api/v1/namespaces/keep/configmaps?watch=1&resourceVersion=${rvBefore - 1}`,
      second.adminToken,
    );
    const [ev] = await w.waitFor(1);
    w.close();
    assert.equal(ev.object.code, 410);
  });

  it('the written kubeconfig embeds the CA and the admin token of user admin', async () => {
    const out = join(dir, 'out', 'nested', 'admin.kubeconfig');
    const a = await start({ stateDir: join(dir, 's2'), kubeconfigOut: out });
    const kc = parseYaml(readFileSync(out, 'utf8')) as Obj;
    const cluster = kc.clusters[0].cluster;
    assert.equal(cluster.server, a.url);
    assert.equal(Buffer.from(cluster['certificate-authority-data'], 'base64').toString(), a.caPem);
    assert.equal(kc.users[0].user.token, a.adminToken);
    assert.equal(statSync(out).mode & 0o077, 0, 'the kubeconfig holds a credential: owner-only');
    const ca = new X509Certificate(a.caPem);
    assert.ok(ca.ca, 'a CA certificate');
    const who = await call(a.url, a.caPem, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      token: kc.users[0].user.token,
      body: {},
    });
    assert.equal(who.body.status.userInfo.username, 'admin');
    assert.deepEqual(who.body.status.userInfo.groups, ['system:masters', 'system:authenticated']);
    await stop(a);
  });

  it('without a state dir everything is in memory and a restart starts fresh', async () => {
    const a = await start();
    await call(a.url, a.caPem, 'POST', '/api/v1/namespaces', {
      token: a.adminToken,
      body: { metadata: { name: 'gone' } },
    });
    const kubeconfig = a.kubeconfig;
    assert.ok(existsSync(kubeconfig));
    await stop(a);
    assert.equal(existsSync(kubeconfig), false, 'the temporary kubeconfig is removed on stop');
    const b = await start();
    assert.notEqual(b.caPem, a.caPem);
    assert.equal((await call(b.url, b.caPem, 'GET', '/api/v1/namespaces/gone', { token: b.adminToken })).status, 404);
    await stop(b);
  });

  it('an unwritable kubeconfig path fails the start cleanly (nothing left listening, the state dir unlocked)', async () => {
    const stateDir = join(dir, 's4');
    const blocker = join(dir, 'a-file');
    writeFileSync(blocker, 'not a directory');
    await assert.rejects(
      () => start({ stateDir, kubeconfigOut: join(blocker, 'kubeconfig') }),
      /^Error: cannot write the kubeconfig .*a-file\/kubeconfig/,
    );
    assert.equal(existsSync(join(stateDir, 'authority.pid')), false, 'the lock is released');
    const again = await start({ stateDir });
    await stop(again);
  });

  it('a corrupt state file stops the start with a message that says what to do', async () => {
    const stateDir = join(dir, 's3');
    const a = await start({ stateDir });
    await stop(a);
    writeFileSync(join(stateDir, 'state.json'), '{"truncated');
    await assert.rejects(
      () => start({ stateDir }),
      /state file .*state\.json is corrupt .*move it away to start fresh/,
    );
  });

  it('a write that fails (here: the target is a directory) throws and leaves no temporary file behind', () => {
    const d = join(dir, 'atomic');
    mkdirSync(join(d, 'target'), { recursive: true });
    assert.throws(() => writeFileAtomic(join(d, 'target'), 'data'), /EISDIR|ENOTEMPTY|EEXIST|directory/i);
    assert.deepEqual(readdirSync(d), ['target'], 'no *.tmp file is left');
    writeFileAtomic(join(d, 'ok.json'), '{}');
    assert.deepEqual(readdirSync(d).sort(), ['ok.json', 'target']);
  });

  it('an empty, truncated or wrongly shaped state file stops the start naming the file and what is wrong; the file is left untouched', async () => {
    const stateDir = join(dir, 's5');
    const a = await start({ stateDir });
    await stop(a);
    const file = join(stateDir, 'state.json');
    const cases: Array<[string, RegExp]> = [
      ['', /it is empty \(0 bytes\)/],
      ['{"resourceVersion":5,"objects":{"configmaps":[{"metadata":{"name":"a"', /JSON|Unexpected end|Unterminated/],
      ['null', /the top level is not an object/],
      ['[]', /the top level is not an object/],
      ['{"resourceVersion":1,"objects":null}', /objects is null, not an object of lists/],
      ['{"resourceVersion":1,"objects":[]}', /objects is an array/],
      ['{"resourceVersion":1,"objects":{"configmaps":5}}', /objects\.configmaps is not a list/],
      ['{"resourceVersion":-1,"objects":{}}', /resourceVersion is -1, not a non-negative integer/],
      ['{"resourceVersion":"7","objects":{}}', /resourceVersion is "7"/],
      [
        '{"resourceVersion":3,"objects":{"configmaps":[{"metadata":{}}]}}',
        /objects\.configmaps\[0\] has no metadata\.name/,
      ],
      [
        '{"resourceVersion":3,"objects":{"configmaps":[{"metadata":{"name":"a","namespace":7}}]}}',
        /metadata\.namespace that is not a string/,
      ],
    ];
    for (const [content, why] of cases) {
      writeFileSync(file, content);
      await assert.rejects(
        () => start({ stateDir }),
        (err: Error) => {
          assert.match(
            err.message,
            new RegExp(`state file ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is corrupt`),
            content,
          );
          assert.match(err.message, why, content);
          assert.match(err.message, /left as it is: move it away to start fresh/);
          return true;
        },
      );
      assert.equal(readFileSync(file, 'utf8'), content, `the file was changed: ${JSON.stringify(content)}`);
      assert.equal(existsSync(join(stateDir, 'authority.pid')), false, 'the lock is released');
    }
  });

  const segments = (stateDir: string) =>
    readdirSync(stateDir)
      .filter((f) => /^state\.\d+\.log$/.test(f))
      .sort((a, b) => Number(a.split('.')[1]) - Number(b.split('.')[1]));

  it('each acknowledged write is a line of the log; a restart replays the log; an incomplete last line (a write cut by kill -9) is dropped', async () => {
    const stateDir = join(dir, 's6');
    const a = await start({ stateDir });
    const created = await call(a.url, a.caPem, 'POST', '/api/v1/namespaces/default/configmaps', {
      token: a.adminToken,
      body: { metadata: { name: 'logged' }, data: { k: 'v' } },
    });
    assert.equal(created.status, 201);
    const segs = segments(stateDir);
    const last = join(stateDir, segs.at(-1)!);
    const lines = readFileSync(last, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Obj);
    const rec = lines.at(-1)!;
    assert.equal(rec.key, 'configmaps', 'the write is in the log before it is acknowledged');
    assert.equal(rec.object.metadata.name, 'logged');
    assert.equal(rec.rv, Number(created.body.metadata.resourceVersion));
    await stop(a);
    writeFileSync(
      last,
      readFileSync(last, 'utf8') + '{"rv":999999,"key":"configmaps","object":{"metadata":{"name":"torn"',
    );

    const b = await start({ stateDir });
    const get = (x: Authority, name: string) =>
      call(x.url, x.caPem, 'GET', `/api/v1/namespaces/default/configmaps/${name}`, { token: x.adminToken });
    assert.equal((await get(b, 'logged')).status, 200);
    assert.equal((await get(b, 'torn')).status, 404);
    assert.equal(
      (
        await call(b.url, b.caPem, 'POST', '/api/v1/namespaces/default/configmaps', {
          token: b.adminToken,
          body: { metadata: { name: 'later' } },
        })
      ).status,
      201,
    );
    await stop(b);
    const c = await start({ stateDir });
    assert.equal((await get(c, 'logged')).status, 200);
    assert.equal((await get(c, 'later')).status, 200);
    await stop(c);
  });

  it('a corrupt line inside the log stops the start naming the file and the line; the file is left untouched', async () => {
    const stateDir = join(dir, 's7');
    const a = await start({ stateDir });
    await stop(a);
    const file = join(stateDir, segments(stateDir).at(-1)!);
    const good = readFileSync(file, 'utf8');
    const cases: Array<[string, RegExp]> = [
      ['garbage\n', /line (\d+) \(.*JSON/],
      ['{"rv":"x","key":"configmaps","object":{"metadata":{"name":"a"}}}\n', /rv is "x", not a positive integer/],
      ['{"rv":999999,"key":"configmaps","object":{"metadata":{}}}\n', /the object has no metadata\.name/],
    ];
    for (const [bad, why] of cases) {
      const content =
        good + bad + '{"rv":1000000,"key":"configmaps","object":{"metadata":{"name":"after","namespace":"default"}}}\n';
      writeFileSync(file, content);
      await assert.rejects(
        () => start({ stateDir }),
        (err: Error) => {
          assert.match(
            err.message,
            new RegExp(
              `state log ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is corrupt at line ${good.split('\n').length}`,
            ),
            bad,
          );
          assert.match(err.message, why, bad);
          assert.match(err.message, /left as it is: move the state directory away to start fresh/);
          return true;
        },
      );
      assert.equal(readFileSync(file, 'utf8'), content, 'the log was changed');
      assert.equal(existsSync(join(stateDir, 'authority.pid')), false, 'the lock is released');
    }
    // resourceVersions that go back are a corrupt log too
    writeFileSync(
      file,
      good +
        '{"rv":1000001,"key":"configmaps","object":{"metadata":{"name":"a","namespace":"default"}}}\n{"rv":1000000,"key":"configmaps","object":{"metadata":{"name":"b","namespace":"default"}}}\n',
    );
    await assert.rejects(() => start({ stateDir }), /is corrupt at line \d+ \(rv 1000000 does not follow 1000001\)/);
  });

  it('once the log outgrows the snapshot a new snapshot is written and the log segments it covers are removed', async () => {
    const stateDir = join(dir, 's8');
    const a = await start({ stateDir, compactAfterBytes: 64 * 1024 });
    const before = segments(stateDir);
    let lastRv = 0;
    for (let i = 0; i < 120; i++) {
      const r = await call(a.url, a.caPem, 'POST', '/api/v1/namespaces/default/configmaps', {
        token: a.adminToken,
        body: { metadata: { name: `c${i}` }, data: { payload: 'y'.repeat(2000) } },
      });
      assert.equal(r.status, 201, r.text);
      lastRv = Number(r.body.metadata.resourceVersion);
    }
    await stop(a);
    const after = segments(stateDir);
    assert.ok(
      Number(after[0].split('.')[1]) > Number(before.at(-1)!.split('.')[1]),
      `covered segments removed: ${before} → ${after}`,
    );
    const snap = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as Obj;
    assert.ok(snap.resourceVersion > 0 && snap.resourceVersion <= lastRv);
    assert.ok(
      (snap.objects.configmaps as Obj[]).some((o) => o.metadata.name === 'c0'),
      'the snapshot holds the early objects',
    );
    assert.deepEqual(
      readdirSync(stateDir).filter((f) => f.endsWith('.tmp')),
      [],
    );
    const b = await start({ stateDir });
    const list = await call(b.url, b.caPem, 'GET', '/api/v1/namespaces/default/configmaps', { token: b.adminToken });
    // every acknowledged create survives, those that started a snapshot included (beside kube-root-ca.crt)
    const names = (list.body.items as Obj[])
      .map((o) => String(o.metadata.name))
      .filter((n) => n !== 'kube-root-ca.crt');
    assert.deepEqual(names.sort(), Array.from({ length: 120 }, (_, i) => `c${i}`).sort());
    assert.equal(Number(list.body.metadata.resourceVersion), lastRv, 'the resourceVersion carries on');
    await stop(b);
  });
});

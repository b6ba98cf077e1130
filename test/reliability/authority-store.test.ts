// The authority's store under faults, as a process: a full disk refuses the write with 500 and keeps everything it
// acknowledged; kill -9 at random moments of a write load never loses an acknowledged write nor corrupts the store.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup, cliArgs, within, type Proc } from '../helpers/process.js';
import { call } from '../authority/https.js';

const READY = /"msg":"authority ready".*"url":"(https:\/\/127\.0\.0\.1:\d+)"/;

interface Running {
  proc: Proc;
  url: string;
  ca: string;
  token: string;
}

describe('authority store under faults', () => {
  const procs = new ProcessGroup();
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'authority-store-'));
  });
  let mounted: string | undefined;
  after(async () => {
    await procs.stopAll();
    if (mounted) spawnSync('umount', ['-l', mounted]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts `ctrlmetrics authority` on `stateDir`; `limitKiB` runs it with that file-size limit (RLIMIT_FSIZE). */
  async function startAuthority(name: string, stateDir: string, limitKiB?: number): Promise<Running> {
    const cli = [
      process.execPath,
      ...cliArgs(),
      'authority',
      '--listen',
      '127.0.0.1:0',
      '--state-dir',
      stateDir,
      '--kubeconfig-out',
      join(dir, `${name}.kubeconfig`),
    ];
    const proc =
      limitKiB === undefined
        ? procs.start(name, cli[0], cli.slice(1))
        : // SIGXFSZ ignored (inherited through exec), so that a write past the limit fails with EFBIG as a full disk fails with ENOSPC
          procs.start(name, 'bash', ['-c', `trap '' XFSZ; ulimit -f ${limitKiB}; exec "$@"`, 'bash', ...cli]);
    const m = await proc.waitForOutput(READY, 60_000);
    return {
      proc,
      url: m[1],
      ca: readFileSync(join(stateDir, 'ca.crt'), 'utf8'),
      token: readFileSync(join(stateDir, 'admin.token'), 'utf8').trim(),
    };
  }

  const configMap = (name: string, bytes: number) => ({ metadata: { name }, data: { payload: 'x'.repeat(bytes) } });

  async function names(a: Running, ns: string): Promise<Set<string>> {
    const r = await call(a.url, a.ca, 'GET', `/api/v1/namespaces/${ns}/configmaps`, {
      token: a.token,
      timeoutMs: 30_000,
    });
    assert.equal(r.status, 200, r.text);
    return new Set((r.body.items as Array<{ metadata: { name: string } }>).map((o) => o.metadata.name));
  }

  /** Mounts a 2 MiB tmpfs when this machine allows it (root with CAP_SYS_ADMIN); else undefined. */
  function smallDisk(): string | undefined {
    const mnt = join(dir, 'tmpfs');
    mkdirSync(mnt);
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', mnt], { encoding: 'utf8' });
    if (r.status === 0) mounted = mnt;
    return mounted;
  }

  it('a full disk: the write that does not fit is refused with 500 and absent, every acknowledged one survives a restart', async () => {
    const mnt = smallDisk();
    const stateDir = join(mnt ?? dir, 'state-full');
    // where the machine lets us mount a small tmpfs the disk really fills up; elsewhere a file-size limit makes the
    // same write(2) fail in the same place
    const a = await startAuthority('full-disk', stateDir, mnt ? undefined : 1024);
    try {
      const admin = (m: string, p: string, body?: unknown) =>
        call(a.url, a.ca, m, p, { token: a.token, body, timeoutMs: 30_000 });
      assert.equal((await admin('POST', '/api/v1/namespaces', { metadata: { name: 'fill' } })).status, 201);
      const acked: string[] = [];
      let refused: { name: string; status: number; message: string } | undefined;
      for (let i = 0; i < 400 && !refused; i++) {
        const r = await admin('POST', '/api/v1/namespaces/fill/configmaps', configMap(`cm-${i}`, 16 * 1024));
        if (r.status === 201) acked.push(`cm-${i}`);
        else refused = { name: `cm-${i}`, status: r.status, message: String(r.body.message) };
      }
      assert.ok(refused, `the disk never filled up after ${acked.length} writes`);
      assert.ok(acked.length > 0);
      assert.equal(refused.status, 500);
      assert.match(refused.message, /cannot write the state log .*state\.\d+\.log: (ENOSPC|EFBIG)/);
      const get = await admin('GET', `/api/v1/namespaces/fill/configmaps/${refused.name}`);
      assert.equal(get.status, 404, 'the refused write is not applied in memory');
      const small = await admin('POST', '/api/v1/namespaces/fill/configmaps', configMap('after-full', 10));
      assert.ok(small.status === 201 || small.status === 500, small.text);
      if (small.status === 201) acked.push('after-full');
      assert.equal(await within(procs.stop(a.proc), 20_000, 'authority exit'), 0, 'nothing acknowledged is unsaved');
      assert.deepEqual(
        readdirSync(stateDir).filter((f) => f.endsWith('.tmp')),
        [],
        'no temporary files left',
      );

      const b = await startAuthority('full-disk-restart', stateDir);
      const stored = await names(b, 'fill');
      for (const n of acked) assert.ok(stored.has(n), `acknowledged ${n} survives`);
      assert.equal(stored.has(refused.name), false, 'the refused write is absent after the restart');
      assert.equal(await within(procs.stop(b.proc), 20_000, 'authority exit'), 0);
    } finally {
      await procs.stopAll();
    }
  });

  it(
    'kill -9 at random moments of a write load (60 rounds): no acknowledged write is lost, the store always loads',
    { timeout: 600_000 },
    async () => {
      const stateDir = join(dir, 'state-kill');
      const present = new Set<string>(); // acknowledged created (and not acknowledged deleted)
      const deleted = new Set<string>(); // acknowledged deleted
      const rounds = 60;
      let totalAcked = 0;
      let first = true;
      for (let round = 0; round < rounds; round++) {
        const a = await startAuthority(`kill-${round}`, stateDir);
        const admin = (m: string, p: string, body?: unknown) =>
          call(a.url, a.ca, m, p, { token: a.token, body, timeoutMs: 10_000 });
        if (first) {
          assert.equal((await admin('POST', '/api/v1/namespaces', { metadata: { name: 'load' } })).status, 201);
          first = false;
        }
        const stored = await names(a, 'load');
        for (const n of present) assert.ok(stored.has(n), `round ${round}: acknowledged ${n} is there`);
        for (const n of deleted)
          assert.equal(stored.has(n), false, `round ${round}: acknowledged deletion of ${n} holds`);

        // 6 writers: creates, and every 4th request deletes one of their own acknowledged objects
        let stop = false;
        const writer = async (w: number) => {
          const mine: string[] = [];
          for (let i = 0; !stop && i < 10_000; i++) {
            try {
              if (i % 4 === 3 && mine.length) {
                const n = mine.shift()!;
                present.delete(n); // until the deletion is acknowledged, either outcome is right
                const r = await admin('DELETE', `/api/v1/namespaces/load/configmaps/${n}`);
                if (r.status === 200) deleted.add(n);
              } else {
                const n = `r${round}-w${w}-${i}`;
                const r = await admin('POST', '/api/v1/namespaces/load/configmaps', configMap(n, 600));
                if (r.status === 201) {
                  present.add(n);
                  mine.push(n);
                  totalAcked++;
                }
              }
            } catch {
              return; // the process was killed under this request: it was never acknowledged
            }
          }
        };
        const writers = Array.from({ length: 6 }, (_, w) => writer(w));
        await new Promise((r) => setTimeout(r, 30 + Math.floor(Math.random() * 400)));
        process.kill(a.proc.pid, 'SIGKILL');
        stop = true;
        await a.proc.exited;
        await Promise.all(writers);
      }
      const last = await startAuthority('kill-final', stateDir);
      const stored = await names(last, 'load');
      for (const n of present) assert.ok(stored.has(n), `acknowledged ${n} is there at the end`);
      for (const n of deleted) assert.equal(stored.has(n), false);
      assert.ok(totalAcked > rounds * 5, `the load wrote (${totalAcked} acknowledged creates)`);
      assert.equal(await within(procs.stop(last.proc), 20_000, 'authority exit'), 0);
    },
  );
});

/**
 * Holding connections: two attacker processes at once, one keeping 2 000 idle TLS connections, the other 1 100
 * connections trickling a request head one byte every 15 s, each reopening a connection as soon as it is closed —
 * against the manager's endpoint in its own process, with HTTP/2 off and on. An authorized scraper opening a new
 * connection every second must keep getting 200 (≥ 99 %). All processes raise their file-descriptor limit (a
 * shell's `ulimit -n`), so the test needs no system setting. Figures (scrapes, what each attacker saw, the
 * server's RSS) are printed as diagnostics; docs/reliability.md records a run. `CTRLMETRICS_HOLD_SECONDS`
 * lengthens each hold.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { startTestCluster, type TestCluster } from '../helpers/cluster.js';
import { ProcessGroup, ROOT, sleep, type Proc } from '../helpers/process.js';
import { LogCapture } from '../helpers/log-capture.js';

const HOLD_SECONDS = Math.max(25, Number(process.env.CTRLMETRICS_HOLD_SECONDS ?? 25));
const IDLE = 2_000;
const SLOW = 1_100;

const logs = new LogCapture();
const procs = new ProcessGroup();
let cluster: TestCluster;
let reader = '';

/** `node --import tsx <script> ...args` with the soft descriptor limit raised as far as the hard one allows. */
function startNode(name: string, script: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const cmd = `ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" --conditions=ctrlmetrics-source --import tsx "$@"`;
  return procs.start(name, 'bash', ['-c', cmd, process.execPath, `${ROOT}${script}`, ...args], {
    env: { ...process.env, ...env },
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function scrapeOnce(port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        agent: false,
        headers: { authorization: `Bearer ${reader}` },
        rejectUnauthorized: false,
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
        res.on('error', (err) => resolve(err.message));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

before(async () => {
  cluster = await startTestCluster();
  const restConfig = await cluster.managerConfig();
  logs.secret(restConfig.token!);
  reader = logs.secret(await cluster.readerToken());
});

after(async () => {
  await procs.stopAll();
  await cluster?.stop();
  logs.restore();
  assert.deepEqual(logs.leaks().slice(0, 3), [], 'a secret reached a log line');
});

for (const http2 of [false, true]) {
  describe(`connection holds, HTTP/2 ${http2 ? 'on' : 'off'}`, { timeout: 120_000 + HOLD_SECONDS * 4_000 }, () => {
    let manager: Proc;
    let port = 0;

    before(async () => {
      const restConfig = await cluster.managerConfig();
      manager = startNode(`manager-h2-${http2}`, 'test/reliability/fixtures/manager-process.ts', [], {
        CTRLMETRICS_LOG_LEVEL: 'info',
        FIXTURE_CONFIG: JSON.stringify({ restConfig, metrics: { enableHTTP2: http2 } }),
      });
      port = Number((await manager.waitForOutput(/READY (\d+)/, 60_000))[1]);
      assert.equal(await scrapeOnce(port), '200');
    });

    after(async () => {
      if (manager) {
        await procs.stop(manager);
        logs.addText(manager.stderr() + manager.stdout());
      }
    });

    test(`${IDLE} idle TLS connections and ${SLOW} slow-header connections (a byte every 15 s) at once, reopened as they close: a new-connection scraper keeps ≥ 99 % 200`, async (t) => {
      const rssBefore = rssMiB(manager.pid);
      // both holds at once, each attacker in its own process: the guard must keep the scraper in while one kind
      // of hold refills the connections the other's eviction freed
      const attackers = (['idle', 'slow'] as const).map((mode) =>
        startNode(`hold-${mode}-h2-${http2}`, 'test/reliability/fixtures/hold-clients.ts', [
          String(port),
          mode,
          String(mode === 'idle' ? IDLE : SLOW),
          String(HOLD_SECONDS * 1000),
          http2 ? 'h2' : 'h1',
        ]),
      );
      const holding = await Promise.all(
        attackers.map(async (a) => Number((await a.waitForOutput(/HOLDING (\d+)/, 30_000))[1])),
      );
      const answers = new Map<string, number>();
      let rssPeak = rssMiB(manager.pid);
      const stopAt = Date.now() + (HOLD_SECONDS - 3) * 1000;
      while (Date.now() < stopAt) {
        const t0 = Date.now();
        const a = await scrapeOnce(port);
        answers.set(a, (answers.get(a) ?? 0) + 1);
        rssPeak = Math.max(rssPeak, rssMiB(manager.pid));
        await sleep(Math.max(0, 1_000 - (Date.now() - t0)));
      }
      const summaries = await Promise.all(
        attackers.map(async (a) => (await a.waitForOutput(/^\{.*\}$/m, HOLD_SECONDS * 1000 + 30_000))[0]),
      );
      await Promise.all(attackers.map((a) => a.exited));
      const total = [...answers.values()].reduce((x, y) => x + y, 0);
      const ok = answers.get('200') ?? 0;
      t.diagnostic(
        `holding ${holding[0]} idle and ${holding[1]} slow at the start; scraper ${JSON.stringify([...answers])}; ` +
          `idle attacker ${summaries[0]}; slow attacker ${summaries[1]}; ` +
          `server RSS ${rssBefore.toFixed(1)} → peak ${rssPeak.toFixed(1)} MiB`,
      );
      assert.ok(total >= HOLD_SECONDS - 8, `only ${total} scrapes`);
      assert.ok(ok / total >= 0.99, `the scraper got 200 for ${ok} of ${total}: ${JSON.stringify([...answers])}`);
      assert.ok(manager.running(), 'the manager is still up');
      assert.equal(await scrapeOnce(port), '200', 'and serves after the hold');
    });
  });
}

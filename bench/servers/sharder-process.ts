/**
 * The sharder for the sharding benchmark (bench/lib/sharding.ts), in its own process so that its memory is its own:
 * `ctrlmetrics/sharding`'s Sharder on a manager, its webhook at `webhook` (host:port, certificate in `certDir`, CA in
 * caPem). Prints `{"event":"ready"}` once started; on stdin, `rss\n` answers `{"event":"rss","rss":…,"heapUsed":…}`
 * after a full GC.
 *
 * SHARDER_CONFIG: { restConfig, webhook, certDir, caPem, syncPeriodMs }.
 */
import { createInterface } from 'node:readline';
import { Manager, type RestConfig } from '../../packages/ctrlmetrics/src/index.js';
import { Sharder } from '../../packages/ctrlmetrics/src/sharding/sharder.js';

const cfg = JSON.parse(process.env.SHARDER_CONFIG ?? '{}') as {
  restConfig: RestConfig;
  webhook: string;
  certDir: string;
  caPem: string;
  syncPeriodMs: number;
};
const say = (event: string, extra: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ event, at: Date.now(), ...extra })}\n`);

const mgr = new Manager({
  restConfig: { ...cfg.restConfig, qps: 1_000, burst: 1_000 },
  metrics: { bindAddress: '0' },
  webhook: { bindAddress: cfg.webhook, certDir: cfg.certDir },
});
new Sharder({
  webhook: { url: `https://${cfg.webhook}`, caBundle: cfg.caPem },
  syncPeriodMs: cfg.syncPeriodMs,
}).setupWithManager(mgr);
const running = mgr.start();
void mgr.ready().then(() => say('ready'));

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'rss') return;
  for (let i = 0; i < 3; i++) (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  say('rss', { rss: m.rss, heapUsed: m.heapUsed });
});
running.then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);

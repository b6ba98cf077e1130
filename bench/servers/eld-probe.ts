/**
 * Preloaded (`node --import`) into every Node server under test: measures event-loop delay with
 * `perf_hooks.monitorEventLoopDelay` in windows the driver opens and closes with SIGUSR2, and answers on stdout
 * (`ELD {"state":"started"}`, then `ELD {"state":"stopped","p99Ms":…}`). Nothing runs between windows.
 *
 * A server script may add its own figures over the same window by setting `globalThis[WINDOW_EXTRAS]` (see
 * bench/servers/ours.ts): `start()` runs when a window opens, `stop()`'s object is sent with the stopped message.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Where a server script registers figures measured over the same windows. */
export const WINDOW_EXTRAS = Symbol.for('ctrlmetrics.bench.window-extras');

export interface WindowExtras {
  start(): void;
  stop(): Record<string, unknown>;
}

function extras(): WindowExtras | undefined {
  return (globalThis as Record<symbol, WindowExtras | undefined>)[WINDOW_EXTRAS];
}

/** Sampling resolution: 1 ms catches short stalls that the 10 ms default would round away. */
const RESOLUTION_MS = Number(process.env.CTRLMETRICS_BENCH_ELD_RESOLUTION_MS ?? 1);

let window: IntervalHistogram | undefined;

function report(msg: Record<string, unknown>): void {
  process.stdout.write(`ELD ${JSON.stringify(msg)}\n`);
}

process.on('SIGUSR2', () => {
  if (!window) {
    window = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    window.enable();
    extras()?.start();
    report({ state: 'started' });
    return;
  }
  const h = window;
  window = undefined;
  h.disable();
  // each sample is the time between two timer ticks, so the delay is the sample minus the resolution
  const ms = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - RESOLUTION_MS) : 0);
  report({
    state: 'stopped',
    p50Ms: ms(h.percentile(50)),
    p99Ms: ms(h.percentile(99)),
    maxMs: ms(h.max),
    meanMs: ms(h.mean),
    count: h.count,
    ...extras()?.stop(),
  });
});

/**
 * The `scrape --watch` screen the command-line guide shows, drawn by the real renderer (`renderScreen`) from
 * fifteen synthetic scrapes two seconds apart of two controllers, as the demo runs them: `configmap` busy and
 * steady, `secret` bursty. The scrapes are exposition text read by the same parser a real scrape goes through.
 */
import { WatchHistory, renderScreen, watchPoint } from '../../packages/cli/src/ops/scrape-watch.js';

const BOUNDS = ['0.001', '0.0025', '0.005', '0.01', '0.025', '+Inf'];
/** Reconciles per 2 s interval, and how they spread over the buckets above (a share each, cumulative below). */
const CONTROLLERS = [
  { name: 'configmap', perInterval: [8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8], spread: [0.05, 0.45, 0.9, 1, 1, 1] },
  { name: 'secret', perInterval: [0, 2, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1], spread: [0, 0.5, 1, 1, 1, 1] },
];
const START = Date.UTC(2026, 10, 29, 8, 33, 18);

function scrapeBody(upTo: number): string {
  const lines: string[] = [];
  for (const c of CONTROLLERS) {
    const total = c.perInterval.slice(0, upTo).reduce((a, n) => a + n, 0);
    lines.push(`controller_runtime_reconcile_total{controller="${c.name}",result="success"} ${total}`);
    lines.push(`controller_runtime_reconcile_errors_total{controller="${c.name}"} 0`);
    BOUNDS.forEach((le, i) =>
      lines.push(
        `controller_runtime_reconcile_time_seconds_bucket{controller="${c.name}",le="${le}"} ${Math.round(total * c.spread[i])}`,
      ),
    );
    lines.push(`workqueue_depth{controller="${c.name}",name="${c.name}",priority=""} 0`);
  }
  return lines.join('\n') + '\n';
}

/** The screen of a 100-column terminal after the fifteenth scrape, as the guide shows it. */
export function docWatchScreen(): string {
  const history = new WatchHistory();
  for (let i = 0; i <= CONTROLLERS[0].perInterval.length; i++) history.add(watchPoint(scrapeBody(i), START + i * 2000));
  return (
    renderScreen(history, { url: 'https://127.0.0.1:18443/metrics', intervalMs: 2000, columns: 100, rows: 9 }).join(
      '\n',
    ) + '\n'
  );
}

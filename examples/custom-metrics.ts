/**
 * Publishing additional metrics: declare a collector at module level, register it once, record from anywhere.
 * It is served on /metrics beside the built-in controller-runtime metrics, behind the same authentication.
 *
 * Both styles work:
 *  - this project's fast classes (`metrics.Counter`), registered with `metrics.mustRegister`;
 *  - a plain prom-client metric: prom-client registers it in its default registry, and the manager's /metrics
 *    includes that registry with no wiring at all.
 *
 * Run: node dist/examples/custom-metrics.js   (prints the exposition once; no cluster needed)
 */
import { Counter as PromCounter } from 'prom-client';
import { metrics } from 'ctrlmetrics';

/** Ours: declared with no registry, registered exactly once (a second registration throws, as in Go). */
export const goobersExample = new metrics.Counter({
  name: 'example_goobers_total',
  help: 'Number of goobers processed',
  labelNames: ['kind'],
  registers: [],
});
metrics.mustRegister(goobersExample);

/** prom-client's: lands in prom-client's default registry, which the metrics endpoint includes. */
export const widgets = new PromCounter({ name: 'example_widgets_total', help: 'Number of widgets made' });

/** Somewhere in a reconciler. */
export function recordWork(): void {
  goobersExample.labels('configmap').inc();
  widgets.inc(2);
}

// When run directly: record once and print what a scrape would return.
if (import.meta.url === `file://${process.argv[1]}`) {
  recordWork();
  const snapshot = await metrics.registry.collect();
  for await (const chunk of snapshot.chunks('text')) {
    const text = chunk.toString();
    for (const line of text.split('\n')) if (line.includes('example_')) process.stdout.write(line + '\n');
  }
}

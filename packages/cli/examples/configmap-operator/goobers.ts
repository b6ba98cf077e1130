/**
 * A custom metric, declared the way the controller-runtime docs show it for Go: at module level, registered once
 * with `mustRegister` in the global registry, incremented from anywhere in a reconciler. It appears on `/metrics`
 * beside the built-in controller metrics with no other wiring.
 */
import { metrics } from 'ctrlmetrics';

/** Counts the source ConfigMaps whose digest was brought up to date. */
export const goobers = new metrics.Counter({
  name: 'goobers_total',
  help: 'Number of goobers processed',
  registers: [], // registered explicitly just below, once
});

metrics.mustRegister(goobers);

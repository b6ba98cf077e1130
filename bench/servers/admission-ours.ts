/**
 * Our admission server for the benchmark (bench/lib/admission.ts): a manager serving the example operator's Memcached
 * defaulter (examples/memcached-operator/webhook.ts) and nothing else — no metrics server, no controller — so that
 * the figures are the webhook server's. Run as transpiled JavaScript; the library and the example are imported from
 * CTRLMETRICS_LIB_ROOT (dist by default). Prints `WEBHOOK <port>` once serving.
 *
 * Environment: CTRLMETRICS_LIB_ROOT/EXT, CTRLMETRICS_EXAMPLES_ROOT, CERT_DIR (tls.crt, tls.key), RESTCONFIG (JSON).
 */
import type * as Lib from '../../packages/ctrlmetrics/src/index.js';
import type * as Example from '../../examples/memcached-operator/webhook.js';

const root = process.env.CTRLMETRICS_LIB_ROOT;
const ext = process.env.CTRLMETRICS_LIB_EXT ?? '.js';
if (!root)
  throw new Error(
    'CTRLMETRICS_LIB_ROOT is not set (bench/servers/admission-ours.ts is started by bench/lib/admission.ts)',
  );
const lib = (await import(`${root}index${ext}`)) as typeof Lib;
const examples = process.env.CTRLMETRICS_EXAMPLES_ROOT;
if (!examples) throw new Error('CTRLMETRICS_EXAMPLES_ROOT is not set (bench/lib/servers.ts libEnv sets it)');
const example = (await import(new URL(`memcached-operator/webhook${ext}`, examples).href)) as typeof Example;

const mgr = new lib.Manager({
  restConfig: JSON.parse(process.env.RESTCONFIG ?? '{}') as Lib.RestConfig,
  handleSignals: true,
  metrics: { bindAddress: '0' },
  webhook: { bindAddress: '127.0.0.1:0', certDir: process.env.CERT_DIR! },
  logger: lib.createLogger('bench'),
});
mgr.add(example.newMemcachedWebhook());
const running = mgr.start();
await Promise.race([mgr.ready(), running]);
process.stdout.write(`WEBHOOK ${mgr.webhookServer.port}\n`);
await running;
process.exit(0);

/** Worker thread entry: builds one self-signed certificate (options in `workerData`), posts it and exits. */
import { parentPort, workerData } from 'node:worker_threads';
import { buildSelfSignedCertificate } from './selfsigned-build.js';
import type { SelfSignedOptions } from './selfsigned.js';

try {
  parentPort!.postMessage({ cert: await buildSelfSignedCertificate(workerData as SelfSignedOptions) });
} catch (err) {
  parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
}

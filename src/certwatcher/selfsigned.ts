/**
 * In-memory self-signed serving certificate for the metrics server when no `certDir` is given.
 *
 * A tiny CA plus a leaf signed by it (both ECDSA P-256 / SHA-256), so a scraper can pin the CA. Unlike
 * controller-runtime's helper (SANs `localhost` and `127.0.0.1` only), the leaf also names `::1`, the host
 * name and any extra DNS names / IPs given (e.g. the Service's `<svc>.<ns>.svc` names).
 *
 * The certificate is built in a short-lived worker thread: `@peculiar/x509` (with its ASN.1 and DI layers) adds
 * ≈14 MB of resident memory once loaded, which a manager would otherwise carry for its whole life to use once
 * at start; a worker's isolate is freed when it exits (docs/benchmarks.md, "Memory (issue 32)").
 */
import { isIP } from 'node:net';
import { Worker } from 'node:worker_threads';

/** Options of {@link generateSelfSignedCertificate}. */
export interface SelfSignedOptions {
  /** DNS names added to the leaf's subjectAltName (besides `localhost` and the host name). */
  extraDNSNames?: string[];
  /** IP addresses added to the leaf's subjectAltName (besides `127.0.0.1` and `::1`). */
  extraIPs?: string[];
  /** Validity in days (default 365). */
  validityDays?: number;
}

/** A generated serving certificate. All values are PEM. */
export interface SelfSignedCertificate {
  /** The leaf followed by the CA: the chain to serve. */
  certPem: string;
  /** The leaf's private key (PKCS#8). */
  keyPem: string;
  /** The CA certificate, for clients that want to verify the server. */
  caPem: string;
  /** Every subjectAltName of the leaf. */
  dnsNames: string[];
  ipAddresses: string[];
}

/** Generates a CA and a leaf certificate for serving, in memory (nothing is written to disk). */
export async function generateSelfSignedCertificate(opts: SelfSignedOptions = {}): Promise<SelfSignedCertificate> {
  for (const ip of opts.extraIPs ?? []) {
    if (ip && !isIP(ip)) throw new Error(`self-signed certificate: "${ip}" in extraIPs is not an IP address`);
  }
  const workerData: SelfSignedOptions = { extraDNSNames: opts.extraDNSNames, extraIPs: opts.extraIPs, validityDays: opts.validityDays };
  // the worker's own heap is small; a cap keeps a bug in it from growing the process
  const resourceLimits = { maxOldGenerationSizeMb: 64 };
  const worker = import.meta.url.endsWith('.ts')
    ? // run from source (this repository's tests): Node 20 workers do not inherit the tsx loader, so register it first
      new Worker(
        // tsx's API resolved from here: the eval'd worker resolves bare names from the process's cwd
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((t) => t.register()).then(() => import(${JSON.stringify(new URL('./selfsigned-worker.ts', import.meta.url).href)}))`,
        { eval: true, workerData, resourceLimits },
      )
    : new Worker(new URL('./selfsigned-worker.js', import.meta.url), { workerData, resourceLimits });
  return new Promise<SelfSignedCertificate>((resolve, reject) => {
    let result: SelfSignedCertificate | undefined;
    worker.once('message', (m: { cert?: SelfSignedCertificate; error?: string }) => {
      if (m.cert) result = m.cert;
      else reject(new Error(m.error ?? 'self-signed certificate: the worker failed'));
    });
    worker.once('error', (err) => reject(err));
    worker.once('exit', (code) => {
      if (result) resolve(result);
      else reject(new Error(`self-signed certificate: the worker exited with code ${code} before answering`));
    });
  });
}

/**
 * The serving TLS options of the manager's HTTPS servers (metrics, webhooks), built in this order:
 *
 *   1. base: TLS >= 1.2, ALPN `http/1.1` (plus `h2` first when HTTP/2 is enabled);
 *   2. every `tlsOpts` function, in order;
 *   3. guard rails: `minVersion` raised to TLSv1.2, `h2` dropped from ALPN when HTTP/2 is off;
 *   4. the certificate: as set by `tlsOpts` (cert/key, pfx or SNICallback), else the files in `certDir`
 *      (watched and hot-reloaded), else a self-signed certificate generated in memory.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CertWatcher, CertificateLoadError } from '../certwatcher/certwatcher.js';
import type { SecureContextOptions, TlsOptions } from 'node:tls';
import type { Logger } from '../util/log.js';

/** TLS options a `tlsOpts` function may adjust. */
export type TlsConfig = SecureContextOptions & TlsOptions;

/** Where a server's certificate comes from and how its TLS is adjusted (the metrics and webhook options' TLS part). */
export interface ServingTlsOptions {
  /** Offer HTTP/2 in ALPN. */
  enableHTTP2?: boolean;
  /** Adjust the TLS options, in order (a function may set its own certificate). */
  tlsOpts?: Array<(o: TlsConfig) => void>;
  /** PEM file of CAs whose client certificates are asked for (not required). */
  clientCAFile?: string;
  /** Directory of the serving certificate (watched); absent: a self-signed certificate. */
  certDir?: string;
  certName?: string;
  keyName?: string;
  /** Extra names of a self-signed certificate. */
  extraDNSNames?: string[];
  extraIPs?: string[];
}

/** The TLS options to serve with, and where the certificate came from. */
export interface ServingTls {
  options: TlsConfig;
  source: 'tlsOpts' | 'certDir' | 'self-signed';
  /** Set for `certDir`: started, with the first pair loaded. Register a listener to apply reloads. */
  watcher?: CertWatcher;
  /** Set for a self-signed certificate. */
  caPem?: string;
}

const VERSION_ORDER = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

function baseOptions(opts: ServingTlsOptions): TlsConfig {
  return { minVersion: 'TLSv1.2', ALPNProtocols: opts.enableHTTP2 ? ['h2', 'http/1.1'] : ['http/1.1'] };
}

function applyGuardRails(o: TlsConfig, opts: ServingTlsOptions, log: Logger): void {
  if (!o.minVersion || VERSION_ORDER.indexOf(o.minVersion) < VERSION_ORDER.indexOf('TLSv1.2')) {
    if (o.minVersion)
      log.warn('tlsOpts asked for a TLS version below 1.2: serving TLS >= 1.2 only', { minVersion: o.minVersion });
    o.minVersion = 'TLSv1.2';
  }
  if (!opts.enableHTTP2 && Array.isArray(o.ALPNProtocols) && o.ALPNProtocols.includes('h2')) {
    log.warn('tlsOpts offered h2 but enableHTTP2 is false: HTTP/2 stays off');
    o.ALPNProtocols = (o.ALPNProtocols as string[]).filter((p) => p !== 'h2');
  }
}

/**
 * Asks clients for a certificate verified against `caFile`, without requiring one (a scraper without a certificate
 * uses its bearer token); the filter decides what a presented certificate means.
 */
function clientCertificateOptions(caFile: string): TlsConfig {
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (err) {
    throw new CertificateLoadError(`clientCAFile ${caFile}: ${(err as Error).message}`, { cause: err });
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new CertificateLoadError(
      `clientCAFile ${caFile}: no PEM certificate in it (expected the CA that signs the clients' certificates)`,
    );
  return { requestCert: true, rejectUnauthorized: false, ca: pem };
}

/** True when a `tlsOpts` function supplied its own certificate. */
function hasOwnCertificate(o: TlsConfig): boolean {
  return (o.cert !== undefined && o.key !== undefined) || o.pfx !== undefined || o.SNICallback !== undefined;
}

/** What to do about a `certDir` without a usable pair, said after the error: the metrics server's own remedy. */
const OMIT_CERT_DIR = 'omit certDir to serve a self-signed certificate';

/**
 * Builds the serving TLS options. Rejects with a clear error when `certDir` lacks a usable pair, ending with
 * `remedy` (what the caller's user can do about it; default: the metrics server's, omitting certDir).
 */
export async function resolveServingTls(
  opts: ServingTlsOptions,
  log: Logger,
  remedy = OMIT_CERT_DIR,
): Promise<ServingTls> {
  const options = baseOptions(opts);
  for (const adjust of opts.tlsOpts ?? []) adjust(options);
  applyGuardRails(options, opts, log);
  if (opts.clientCAFile) Object.assign(options, clientCertificateOptions(opts.clientCAFile));

  if (hasOwnCertificate(options)) return { options, source: 'tlsOpts' };

  if (opts.certDir) {
    const watcher = new CertWatcher({
      certPath: join(opts.certDir, opts.certName ?? 'tls.crt'),
      keyPath: join(opts.certDir, opts.keyName ?? 'tls.key'),
      logger: log.child('certwatcher'),
    });
    try {
      const pair = await watcher.start();
      return { options: { ...options, cert: pair.certPem, key: pair.keyPem }, source: 'certDir', watcher };
    } catch (err) {
      watcher.stop();
      const why = err instanceof CertificateLoadError ? err.message : String(err);
      throw new CertificateLoadError(
        `${why} (certDir ${opts.certDir} must hold ${opts.certName ?? 'tls.crt'} and ${opts.keyName ?? 'tls.key'}; ${remedy})`,
      );
    }
  }

  // loaded here: a manager given its certificates never needs the generator (or its DER encoder)
  const { generateSelfSignedCertificate } = await import('../certwatcher/selfsigned.js');
  const self = await generateSelfSignedCertificate({ extraDNSNames: opts.extraDNSNames, extraIPs: opts.extraIPs });
  return { options: { ...options, cert: self.certPem, key: self.keyPem }, source: 'self-signed', caPem: self.caPem };
}

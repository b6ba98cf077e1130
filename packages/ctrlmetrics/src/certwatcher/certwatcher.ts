/**
 * Loads a serving certificate and key from files and keeps them fresh.
 *
 * Changes are noticed two ways: `fs.watch` on the directories (the kubelet updates a Secret volume by swapping
 * the `..data` symlink, which a watch on the file itself misses after the first rotation) and a poll every
 * 10 s that compares content hashes (like controller-runtime's certwatcher). A read that fails, or yields a
 * certificate and key that do not match, keeps the last good pair in place and is counted as an error.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { createLogger, type Logger } from '../util/log.js';
import { CtrlmetricsError } from '../util/errors.js';

/** A validated certificate chain and its private key (PEM). */
export interface CertificatePair {
  certPem: string;
  keyPem: string;
  /** SHA-256 over both files: identical content means no reload. */
  hash: string;
  /** The leaf certificate, parsed. */
  leaf: X509Certificate;
}

/** Where the watcher counts reads; by default the `certwatcher_*` families of the global registry. */
export interface CertWatcherCounters {
  /** `certwatcher_read_certificate_total` */
  readCertificateTotal: {
    /** Adds one. */
    inc(): void;
  };
  /** `certwatcher_read_certificate_errors_total` */
  readCertificateErrorsTotal: {
    /** Adds one. */
    inc(): void;
  };
}

/** Options of {@link CertWatcher}. */
export interface CertWatcherOptions {
  certPath: string;
  keyPath: string;
  logger?: Logger;
  /** Re-read interval in ms (default 10 000). */
  pollIntervalMs?: number;
  /** Delay after a file-system event before re-reading, so a burst of events gives one read (default 100 ms). */
  debounceMs?: number;
  /** Counters to increment; default: the global registry's certwatcher metrics. */
  counters?: CertWatcherCounters;
}

/** Called with each new pair; throwing rejects the pair (the previous one stays current). */
export type CertificateListener = (pair: CertificatePair) => void;

/** The certificate or key files could not be read or are invalid. The message names the file. */
export class CertificateLoadError extends CtrlmetricsError {
  static override readonly code: string = 'ERR_CERTIFICATE_LOAD';
  override name = 'CertificateLoadError';
}

let defaultCounters: CertWatcherCounters | undefined;

/** Sets the counters new watchers use when none are given (the metrics package wires its certwatcher families). */
export function setDefaultCertWatcherCounters(counters: CertWatcherCounters | undefined): void {
  defaultCounters = counters;
}

/** Reads and validates a certificate/key pair. Throws {@link CertificateLoadError} naming the bad file. */
export async function loadCertificatePair(certPath: string, keyPath: string): Promise<CertificatePair> {
  // one after the other, so that with both files missing the error always names the certificate first
  const certPem = await readText(certPath, 'certificate');
  const keyPem = await readText(keyPath, 'key');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certPem);
  } catch (err) {
    throw new CertificateLoadError(
      `certificate file ${certPath} does not hold a valid PEM certificate: ${(err as Error).message}`,
      { cause: err },
    );
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch {
    // the error text of a key parse failure is not useful and must not echo key material
    throw new CertificateLoadError(`key file ${keyPath} does not hold a valid PEM private key`);
  }
  if (!leaf.checkPrivateKey(key)) {
    throw new CertificateLoadError(`key file ${keyPath} does not match the certificate in ${certPath}`);
  }
  try {
    createSecureContext({ cert: certPem, key: keyPem });
  } catch (err) {
    throw new CertificateLoadError(
      `certificate ${certPath} with key ${keyPath} is not usable for TLS: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const hash = createHash('sha256').update(certPem).update('\0').update(keyPem).digest('hex');
  return { certPem, keyPem, hash, leaf };
}

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'it does not exist' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new CertificateLoadError(`cannot read ${what} file ${path}: ${why}`);
  }
}

/** Watches a certificate/key pair on disk and reports each new valid pair. */
export class CertWatcher {
  readonly certPath: string;
  readonly keyPath: string;
  private readonly log: Logger;
  private readonly pollIntervalMs: number;
  private readonly debounceMs: number;
  private readonly counters: CertWatcherCounters | undefined;
  private readonly listeners: CertificateListener[] = [];
  private readonly watchers = new Map<string, FSWatcher>();
  private currentPair: CertificatePair | undefined;
  private lastFailure: string | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private rereadRequested = false;
  private stopped = false;

  constructor(opts: CertWatcherOptions) {
    this.certPath = opts.certPath;
    this.keyPath = opts.keyPath;
    this.log = opts.logger ?? createLogger('controller-runtime.certwatcher');
    this.pollIntervalMs = opts.pollIntervalMs ?? 10_000;
    this.debounceMs = opts.debounceMs ?? 100;
    this.counters = opts.counters ?? defaultCounters;
  }

  /** The pair in use (the last one that was read, validated and accepted by every listener). */
  get current(): CertificatePair | undefined {
    return this.currentPair;
  }

  /** Registers a listener for new pairs. It may throw to reject a pair (e.g. `setSecureContext` failed). */
  onChange(listener: CertificateListener): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the files once, counting the read. A valid pair that differs from the current one is offered to the
   * listeners and becomes current. Throws {@link CertificateLoadError} on failure; the current pair stays.
   */
  async readCertificate(): Promise<CertificatePair> {
    this.counters?.readCertificateTotal.inc();
    let pair: CertificatePair;
    try {
      pair = await loadCertificatePair(this.certPath, this.keyPath);
      if (pair.hash !== this.currentPair?.hash) {
        for (const l of this.listeners) l(pair);
      }
    } catch (err) {
      this.counters?.readCertificateErrorsTotal.inc();
      throw err instanceof CertificateLoadError
        ? err
        : new CertificateLoadError(`certificate ${this.certPath} rejected: ${(err as Error).message}`);
    }
    if (pair.hash !== this.currentPair?.hash) {
      const first = this.currentPair === undefined;
      this.currentPair = pair;
      this.lastFailure = undefined;
      if (!first)
        this.log.info('Updated current TLS certificate', { cert: this.certPath, notAfter: pair.leaf.validTo });
    }
    return pair;
  }

  /** Loads the pair (throws if it cannot: no silent fallback) and starts watching for changes. */
  async start(): Promise<CertificatePair> {
    const pair = await this.readCertificate();
    this.stopped = false;
    this.ensureWatches();
    this.pollTimer = setInterval(() => {
      this.ensureWatches();
      this.requestRead();
    }, this.pollIntervalMs);
    this.pollTimer.unref();
    return pair;
  }

  /** Stops watching. */
  stop(): void {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  private ensureWatches(): void {
    for (const dir of new Set([dirname(this.certPath), dirname(this.keyPath)])) {
      if (this.watchers.has(dir)) continue;
      try {
        const w = watch(dir, { persistent: false }, () => this.scheduleRead());
        w.on('error', () => {
          // e.g. the directory was removed; the poll re-creates the watch when it is back
          w.close();
          this.watchers.delete(dir);
        });
        this.watchers.set(dir, w);
      } catch (err) {
        this.log.warn('cannot watch certificate directory, relying on polling', { dir, error: (err as Error).message });
      }
    }
  }

  private scheduleRead(): void {
    if (this.stopped) return;
    if (this.debounceTimer) clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => this.requestRead(), this.debounceMs);
    this.debounceTimer.unref();
  }

  private requestRead(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.rereadRequested = true;
      return;
    }
    this.reading = this.readCertificate()
      .then(
        () => undefined,
        (err: Error) => {
          // log each distinct failure once, not on every poll
          if (err.message !== this.lastFailure) {
            this.lastFailure = err.message;
            this.log.error('certificate watcher error: keeping the previous certificate', { error: err.message });
          }
        },
      )
      .finally(() => {
        this.reading = undefined;
        if (this.rereadRequested) {
          this.rereadRequested = false;
          this.requestRead();
        }
      });
  }
}

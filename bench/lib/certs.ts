/** The one serving certificate every server in a run uses (RSA 2048, SAN IP:127.0.0.1), as in the perf anchors. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapture } from './children.js';

export interface BenchCert {
  dir: string;
  certFile: string;
  keyFile: string;
  certPem: string;
}

/** Creates a temporary directory holding cert.pem and key.pem. */
export async function makeCert(): Promise<BenchCert> {
  const dir = mkdtempSync(join(tmpdir(), 'ctrlmetrics-bench-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const r = await runCapture(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { timeoutMs: 30_000 },
  );
  if (r.code !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return { dir, certFile, keyFile, certPem: readFileSync(certFile, 'utf8') };
}

/** Removes the temporary directory. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

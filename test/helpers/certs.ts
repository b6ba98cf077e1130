/**
 * Certificates for tests: a CA, serving certificates it signs, and a certificate directory laid out like a
 * Kubernetes Secret volume (`tls.crt -> ..data/tls.crt`, `..data -> ..<version>`), rotated by an atomic
 * symlink swap the way the kubelet does it.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import tls from 'node:tls';
import { generateCA, issueServingCert, type CertKeyPair } from '../../packages/envtest/src/pki.js';

export type { CertKeyPair };
export { generateCA, issueServingCert };

/** SHA-256 fingerprint of a PEM certificate, as Node prints it. */
export function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256;
}

/** A Secret-volume-like directory whose files are swapped atomically. */
export class SecretVolume {
  private version = 0;
  constructor(readonly dir: string) {}

  /** Writes a new version (`ca.crt`, `tls.crt`, `tls.key`) and swaps `..data` to it in one rename. */
  async write(files: { 'tls.crt': string; 'tls.key': string; 'ca.crt'?: string }): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const v = `..v${++this.version}`;
    const vdir = join(this.dir, v);
    await mkdir(vdir);
    for (const [name, content] of Object.entries(files))
      if (content !== undefined) await writeFile(join(vdir, name), content, { mode: 0o600 });
    const tmp = join(this.dir, '..data_tmp');
    await rm(tmp, { force: true });
    await symlink(v, tmp);
    let previous: string | undefined;
    try {
      previous = await readlink(join(this.dir, '..data'));
    } catch {
      /* first version */
    }
    await rename(tmp, join(this.dir, '..data'));
    for (const name of Object.keys(files)) {
      try {
        await symlink(join('..data', name), join(this.dir, name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    if (previous) await rm(join(this.dir, previous), { recursive: true, force: true });
  }
}

/** The certificate a TLS server presents on a fresh connection (no client verification). */
export function presentedCertificate(host: string, port: number, servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host, port, servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, () => {
      const c = s.getPeerX509Certificate();
      s.destroy();
      if (!c) reject(new Error('no peer certificate'));
      else resolve(c.fingerprint256);
    });
    s.setTimeout(5000, () => s.destroy(new Error('TLS handshake timed out')));
    s.on('error', reject);
  });
}

/** A client certificate signed by `ca`: subject CN = `user`, one O per group (as Kubernetes reads client certificates). */
export async function issueClientCert(ca: CertKeyPair, user: string, groups: string[] = []): Promise<CertKeyPair> {
  const x509 = await import('@peculiar/x509');
  const { webcrypto, createPrivateKey } = await import('node:crypto');
  x509.cryptoProvider.set(webcrypto as never);
  const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    createPrivateKey(ca.keyPem).export({ format: 'der', type: 'pkcs8' }),
    EC,
    true,
    ['sign'],
  );
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as {
    publicKey: unknown;
    privateKey: Parameters<typeof webcrypto.subtle.exportKey>[1];
  };
  const esc = (s: string) => s.replace(/([,+"\\<>;=])/g, '\\$1');
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '01' + Date.now().toString(16),
    subject: [`CN=${esc(user)}`, ...groups.map((g) => `O=${esc(g)}`)].join(', '),
    issuer: caCert.subject,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 86_400_000),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    publicKey: keys.publicKey as never,
    signingKey: caKey as never,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    ],
  });
  const keyDer = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certPem: cert.toString('pem'), keyPem: x509.PemConverter.encode(keyDer, 'PRIVATE KEY') };
}

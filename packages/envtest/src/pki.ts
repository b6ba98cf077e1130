/**
 * The authority's PKI: a self-signed CA (kept in the state dir and reused) and a serving certificate signed by it.
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto, randomBytes, createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';

x509.cryptoProvider.set(webcrypto as never);

type CryptoKey = webcrypto.CryptoKey;

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

/** A certificate and its private key, both PEM. */
export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function importKeyPem(pem: string): Promise<CryptoKey> {
  const der = createPrivateKey(pem).export({ format: 'der', type: 'pkcs8' });
  return await webcrypto.subtle.importKey('pkcs8', der, EC, true, ['sign']);
}

function serial(): string {
  const b = randomBytes(16);
  b[0] = b[0] & 0x7f; // positive
  return b.toString('hex');
}

/** Generates a new CA (ECDSA P-256, 10 years). */
export async function generateCA(commonName = 'ctrlmetrics-authority-ca'): Promise<CertKeyPair> {
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 3650 * DAY),
    signingAlgorithm: SIGN,
    keys: keys as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKeyPem(keys.privateKey) };
}

/** Issues a serving certificate for the given host names and IPs, signed by `ca` (1 year). */
export async function issueServingCert(ca: CertKeyPair, hosts: string[]): Promise<CertKeyPair> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importKeyPem(ca.keyPem);
  const keys = await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify']);
  const names = [...new Set(hosts.filter(Boolean))].map((h) =>
    isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h },
  );
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=kube-apiserver',
    issuer: caCert.subject,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + 365 * DAY),
    signingAlgorithm: SIGN,
    publicKey: keys.publicKey as never,
    signingKey: caKey as never,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKeyPem(keys.privateKey) };
}

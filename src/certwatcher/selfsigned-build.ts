/**
 * Builds the self-signed serving certificate with `@peculiar/x509`. Runs inside the worker thread of
 * `selfsigned-worker.ts` (see `selfsigned.ts` for why), or directly where memory does not matter.
 */
import 'reflect-metadata'; // @peculiar/x509 2.x (tsyringe) needs a Reflect polyfill loaded first
import * as x509 from '@peculiar/x509';
import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import os from 'node:os';
import type { SelfSignedCertificate, SelfSignedOptions } from './selfsigned.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
type KeyPair = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0]['keys'];

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

function serial(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f; // positive
  if (b[0] === 0) b[0] = 1;
  return b.toString('hex');
}

function uniq(values: string[]): string[] {
  return [...new Set(values.filter((v) => v.length > 0))];
}

/** Generates a CA and a leaf certificate for serving, in memory (nothing is written to disk). */
export async function buildSelfSignedCertificate(opts: SelfSignedOptions = {}): Promise<SelfSignedCertificate> {
  const subtle = webcrypto.subtle;
  const ipAddresses = uniq(['127.0.0.1', '::1', ...(opts.extraIPs ?? [])]);
  for (const ip of ipAddresses) {
    if (!isIP(ip)) throw new Error(`self-signed certificate: "${ip}" in extraIPs is not an IP address`);
  }
  const dnsNames = uniq(['localhost', os.hostname().toLowerCase(), ...(opts.extraDNSNames ?? [])]);
  const now = Date.now();
  const notBefore = new Date(now - 60 * 60 * 1000); // tolerate clock skew, like client-go
  const notAfter = new Date(now + (opts.validityDays ?? 365) * 24 * 60 * 60 * 1000);
  const stamp = Math.floor(now / 1000);

  const caKeys = (await subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as KeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=ctrlmetrics-ca@${stamp}`,
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  const leafKeys = (await subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as KeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=localhost@${stamp}`,
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...ipAddresses.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
      await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
    ],
  });

  const keyPem = KeyObject.from(leafKeys.privateKey as unknown as webcrypto.CryptoKey)
    .export({ format: 'pem', type: 'pkcs8' })
    .toString();
  const leafPem = leaf.toString('pem');
  const caPem = ca.toString('pem');
  return { certPem: `${leafPem}\n${caPem}\n`, keyPem, caPem: `${caPem}\n`, dnsNames, ipAddresses };
}

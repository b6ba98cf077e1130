/**
 * In-memory self-signed serving certificate for the metrics server when no `certDir` is given.
 *
 * A tiny CA plus a leaf signed by it (both ECDSA P-256 / SHA-256), so a scraper can pin the CA. Unlike
 * controller-runtime's helper (SANs `localhost` and `127.0.0.1` only), the leaf also names `::1`, the host
 * name and any extra DNS names / IPs given (e.g. the Service's `<svc>.<ns>.svc` names).
 *
 * Keys, SubjectPublicKeyInfo and signatures come from `node:crypto`; the certificates are encoded by `der.ts`
 * (why not a library: see there). Building both takes a few milliseconds in the calling thread.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import os from 'node:os';
import {
  bitString,
  booleanTrue,
  explicit,
  implicitPrimitive,
  ipBytes,
  namedBits,
  octetString,
  oid,
  sequence,
  set,
  smallInteger,
  time,
  unsignedInteger,
  utf8String,
} from './der.js';

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

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

/** Key usage bits (RFC 5280 §4.2.1.3). */
const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 };

const SIGNATURE_ALGORITHM = sequence(oid(OID.ecdsaWithSha256));

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid(OID.commonName), utf8String(commonName))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(oid(id), booleanTrue(), octetString(value)) : sequence(oid(id), octetString(value));
}

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits (the uncompressed EC point). */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return createHash('sha1').update(point).digest();
}

function serialNumber(): Buffer {
  const b = randomBytes(16);
  b[0] = b[0] & 0x7f || 1; // positive, 16 bytes
  return unsignedInteger(b);
}

interface CertificateFields {
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  publicKey: KeyObject;
  signingKey: KeyObject;
  extensions: Buffer[];
}

function certificate(f: CertificateFields): Buffer {
  const tbs = sequence(
    explicit(0, smallInteger(2)), // v3
    serialNumber(),
    SIGNATURE_ALGORITHM,
    name(f.issuer),
    sequence(time(f.notBefore), time(f.notAfter)),
    name(f.subject),
    f.publicKey.export({ format: 'der', type: 'spki' }),
    explicit(3, sequence(...f.extensions)),
  );
  // ECDSA signatures from node:crypto are DER Ecdsa-Sig-Value, as X.509 carries them
  return sequence(tbs, SIGNATURE_ALGORITHM, bitString(sign('sha256', tbs, f.signingKey)));
}

function pem(der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

function uniq(values: string[]): string[] {
  return [...new Set(values.filter((v) => v.length > 0))];
}

/** Generates a CA and a leaf certificate for serving, in memory (nothing is written to disk). */
export async function generateSelfSignedCertificate(opts: SelfSignedOptions = {}): Promise<SelfSignedCertificate> {
  const ipAddresses = uniq(['127.0.0.1', '::1', ...(opts.extraIPs ?? [])]);
  for (const ip of ipAddresses) {
    if (!isIP(ip)) throw new Error(`self-signed certificate: "${ip}" in extraIPs is not an IP address`);
  }
  const dnsNames = uniq(['localhost', os.hostname().toLowerCase(), ...(opts.extraDNSNames ?? [])]);
  const now = Date.now();
  const notBefore = new Date(now - 60 * 60 * 1000); // tolerate clock skew, like client-go
  const notAfter = new Date(now + (opts.validityDays ?? 365) * 24 * 60 * 60 * 1000);
  const stamp = Math.floor(now / 1000);

  const caKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caName = `ctrlmetrics-ca@${stamp}`;
  const caKeyId = keyIdentifier(caKeys.publicKey);
  const ca = certificate({
    subject: caName,
    issuer: caName,
    notBefore,
    notAfter,
    publicKey: caKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      extension(OID.basicConstraints, true, sequence(booleanTrue(), smallInteger(0))),
      extension(OID.keyUsage, true, namedBits([KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign])),
      extension(OID.subjectKeyIdentifier, false, octetString(caKeyId)),
    ],
  });

  const leafKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const san = sequence(
    ...dnsNames.map((d) => implicitPrimitive(2, Buffer.from(d, 'ascii'))), // dNSName [2] IA5String
    ...ipAddresses.map((ip) => implicitPrimitive(7, ipBytes(ip))), // iPAddress [7] OCTET STRING
  );
  const leaf = certificate({
    subject: `localhost@${stamp}`,
    issuer: caName,
    notBefore,
    notAfter,
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, namedBits([KEY_USAGE.digitalSignature])),
      extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth))),
      extension(OID.subjectAltName, false, san),
      extension(OID.authorityKeyIdentifier, false, sequence(implicitPrimitive(0, caKeyId))),
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier(leafKeys.publicKey))),
    ],
  });

  const keyPem = leafKeys.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const caPem = pem(ca);
  return { certPem: pem(leaf) + caPem, keyPem, caPem, dnsNames, ipAddresses };
}

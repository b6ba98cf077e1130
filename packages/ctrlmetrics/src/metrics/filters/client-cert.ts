/**
 * Client-certificate authentication, as kube-apiserver's x509 authenticator reads a certificate: the subject's CN is
 * the user name, each O a group. Only a certificate the TLS layer verified against the server's client CA
 * (`clientCAFile`) counts; one it could not verify is a failed authentication (401), never a fall-back to the token.
 */
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './reviews.js';

/** What the connection's client certificate says: nothing presented, a user, or why it is refused. */
export type CertificateIdentity =
  { kind: 'none' } | { kind: 'user'; user: UserInfo } | { kind: 'rejected'; reason: string };

const NONE: CertificateIdentity = Object.freeze({ kind: 'none' });

/** Reads the client certificate of a request's connection (plain HTTP, or TLS without client CA: none). */
export function certificateIdentity(socket: unknown): CertificateIdentity {
  const s = socket as Partial<TLSSocket> | undefined;
  if (!s || typeof s.getPeerCertificate !== 'function') return NONE;
  const cert = s.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return NONE;
  if (s.authorized !== true)
    return {
      kind: 'rejected',
      reason: `client certificate not verified: ${String(s.authorizationError ?? 'unknown issuer')}`,
    };
  const subject = (cert.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
  const cn = Array.isArray(subject.CN) ? subject.CN[0] : subject.CN;
  if (!cn)
    return { kind: 'rejected', reason: 'the client certificate has no common name (CN) to take as the user name' };
  const o = subject.O;
  const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
  return { kind: 'user', user: { username: cn, groups } };
}

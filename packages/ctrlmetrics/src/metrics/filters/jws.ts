/**
 * Verifying a compact JWS (a service-account token) against the cluster's public JWKs with `node:crypto`.
 *
 * Why not jose, the field-standard JOSE library: loading it adds ≈9 MB of resident memory to the manager
 * (docs/performance-notes.md, "Memory") for one job that `node:crypto` does natively (JWK import,
 * RSASSA-PKCS1-v1_5 and ECDSA verification); and the answer only chooses an admission lane, it never
 * authenticates anyone. Only what kube-apiserver signs tokens with is accepted: RS256/384/512 (keys of 2048 bits
 * or more) and ES256/384/512 on their own curves; `alg: none`, HMAC, `crit` and unencoded payloads never verify.
 */
import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

const HASH = {
  RS256: 'sha256',
  RS384: 'sha384',
  RS512: 'sha512',
  ES256: 'sha256',
  ES384: 'sha384',
  ES512: 'sha512',
} as const;
type Algorithm = keyof typeof HASH;
const CURVE: Record<string, string> = { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' };
const MIN_RSA_BITS = 2048;

/** A public key of the set, with the JWK fields that select it. */
export interface VerificationKey {
  kid: string | undefined;
  kty: 'RSA' | 'EC';
  crv: string | undefined;
  alg: string | undefined;
  key: KeyObject;
}

/** The usable signature keys of a JWK set; keys that are not RSA/EC public signature keys are left out. */
export function importKeys(jwks: readonly unknown[]): VerificationKey[] {
  const out: VerificationKey[] = [];
  for (const k of jwks) {
    const jwk = k as Record<string, unknown> | null;
    if (!jwk || typeof jwk !== 'object' || (jwk.kty !== 'RSA' && jwk.kty !== 'EC')) continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      continue;
    }
    if (key.type !== 'public') continue;
    if (jwk.kty === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) continue;
    out.push({
      kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
      kty: jwk.kty,
      crv: typeof jwk.crv === 'string' ? jwk.crv : undefined,
      alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
      key,
    });
  }
  return out;
}

/** The protected header of a compact JWS, or undefined when the token is not one. */
export function decodeHeader(token: string): Record<string, unknown> | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const h: unknown = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
    return h && typeof h === 'object' && !Array.isArray(h) ? (h as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** True when `token` is a compact JWS whose signature one of `keys` verifies. Never throws. */
export function verifyCompact(token: string, keys: readonly VerificationKey[]): boolean {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[0] || !parts[1] || !parts[2]) return false;
  const header = decodeHeader(token);
  if (!header || typeof header.alg !== 'string' || !(header.alg in HASH)) return false;
  if (header.crit !== undefined || header.b64 !== undefined) return false;
  const alg = header.alg as Algorithm;
  const kty = alg.startsWith('RS') ? 'RSA' : 'EC';
  const kid = header.kid;
  const data = Buffer.from(`${parts[0]}.${parts[1]}`, 'ascii');
  const signature = Buffer.from(parts[2], 'base64url');
  for (const k of keys) {
    if (k.kty !== kty || (k.alg !== undefined && k.alg !== alg)) continue;
    if (kid !== undefined && k.kid !== kid) continue;
    if (kty === 'EC' && k.crv !== CURVE[alg]) continue;
    try {
      if (verify(HASH[alg], data, kty === 'EC' ? { key: k.key, dsaEncoding: 'ieee-p1363' } : k.key, signature))
        return true;
    } catch {
      // a malformed signature for this key type: not verified by it
    }
  }
  return false;
}

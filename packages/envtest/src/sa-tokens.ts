/**
 * Service-account tokens: ES256 JWTs with the claims kube-apiserver's TokenRequest issues, and their verification.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { DEFAULT_ISSUER } from './audiences.js';

export { DEFAULT_ISSUER };

/** Claims of a service-account token. */
export interface SATokenClaims {
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: { name: string; uid: string };
    secret?: { name: string; uid: string };
  };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** Generates a new signing key (ECDSA P-256), PEM (PKCS#8). */
export function generateSigningKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** Signs and verifies tokens with one key. */
export class TokenSigner {
  private readonly priv: KeyObject;
  private readonly pub: KeyObject;
  /** Key id as kube derives it: base64url(SHA-256(DER SubjectPublicKeyInfo)). */
  readonly kid: string;

  constructor(
    privateKeyPem: string,
    readonly issuer = DEFAULT_ISSUER,
  ) {
    this.priv = createPrivateKey(privateKeyPem);
    this.pub = createPublicKey(this.priv);
    this.kid = b64url(
      createHash('sha256')
        .update(this.pub.export({ format: 'der', type: 'spki' }))
        .digest(),
    );
  }

  /** The public key as a JWK (for `/openid/v1/jwks`). */
  jwk(): Record<string, unknown> {
    return { ...this.pub.export({ format: 'jwk' }), kid: this.kid, use: 'sig', alg: 'ES256' };
  }

  /** Issues a token for a service account. */
  issue(params: {
    namespace: string;
    name: string;
    uid: string;
    audiences: string[];
    expirationSeconds: number;
    now?: number;
    /** A Secret the token is bound to: the token is valid only while it exists. */
    boundSecret?: { name: string; uid: string };
  }): { token: string; claims: SATokenClaims } {
    const now = Math.floor((params.now ?? Date.now()) / 1000);
    const claims: SATokenClaims = {
      aud: params.audiences,
      exp: now + params.expirationSeconds,
      iat: now,
      iss: this.issuer,
      jti: randomUUID(),
      'kubernetes.io': {
        namespace: params.namespace,
        serviceaccount: { name: params.name, uid: params.uid },
        ...(params.boundSecret ? { secret: params.boundSecret } : {}),
      },
      nbf: now,
      sub: `system:serviceaccount:${params.namespace}:${params.name}`,
    };
    return { token: this.sign(claims), claims };
  }

  /**
   * A legacy (Secret-based, non-expiring) service-account token, as kube's token controller puts into Secrets of
   * type `kubernetes.io/service-account-token`.
   */
  issueLegacy(params: { namespace: string; name: string; uid: string; secretName: string }): string {
    const claims: LegacyTokenClaims = {
      iss: LEGACY_ISSUER,
      'kubernetes.io/serviceaccount/namespace': params.namespace,
      'kubernetes.io/serviceaccount/secret.name': params.secretName,
      'kubernetes.io/serviceaccount/service-account.name': params.name,
      'kubernetes.io/serviceaccount/service-account.uid': params.uid,
      sub: `system:serviceaccount:${params.namespace}:${params.name}`,
    };
    return this.sign(claims);
  }

  private sign(claims: object): string {
    const header = { alg: 'ES256', kid: this.kid };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
    const sig = sign('sha256', Buffer.from(input), { key: this.priv, dsaEncoding: 'ieee-p1363' });
    return `${input}.${b64url(sig)}`;
  }

  /** The claims of a token signed by this key (undefined: not a JWT, bad signature). */
  private verified(token: string): Record<string, unknown> | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    try {
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as { alg?: string };
      if (header.alg !== 'ES256') return undefined;
      const ok = verify(
        'sha256',
        Buffer.from(`${parts[0]}.${parts[1]}`),
        { key: this.pub, dsaEncoding: 'ieee-p1363' },
        Buffer.from(parts[2], 'base64url'),
      );
      if (!ok) return undefined;
      const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
      return claims && typeof claims === 'object' && !Array.isArray(claims)
        ? (claims as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Checks the signature and issuer of a token and returns its claims; undefined when the token is not one of
   * ours (not a JWT, another issuer, bad signature). Time and audience are checked by the caller.
   */
  verifySignature(token: string): SATokenClaims | undefined {
    const claims = this.verified(token) as SATokenClaims | undefined;
    if (!claims || claims.iss !== this.issuer || !claims['kubernetes.io']?.serviceaccount) return undefined;
    if (typeof claims.aud === 'string') claims.aud = [claims.aud];
    if (!Array.isArray(claims.aud)) return undefined;
    return claims;
  }

  /** The claims of a legacy Secret-based token signed by this key, or undefined. */
  verifyLegacy(token: string): LegacyTokenClaims | undefined {
    const claims = this.verified(token) as LegacyTokenClaims | undefined;
    if (!claims || claims.iss !== LEGACY_ISSUER) return undefined;
    for (const k of [
      'kubernetes.io/serviceaccount/namespace',
      'kubernetes.io/serviceaccount/secret.name',
      'kubernetes.io/serviceaccount/service-account.name',
      'sub',
    ] as const) {
      if (typeof claims[k] !== 'string' || !claims[k]) return undefined;
    }
    return claims;
  }
}

/** Issuer of legacy Secret-based service-account tokens. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

/** Claims of a legacy Secret-based service-account token. */
export interface LegacyTokenClaims {
  iss: string;
  'kubernetes.io/serviceaccount/namespace': string;
  'kubernetes.io/serviceaccount/secret.name': string;
  'kubernetes.io/serviceaccount/service-account.name': string;
  'kubernetes.io/serviceaccount/service-account.uid': string;
  sub: string;
}

/** True when the string has the shape of a JWT (three base64url parts). */
export function looksLikeJWT(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/**
 * Authentication of bearer tokens, as kube-apiserver's token authenticators do it: the admin token, static tokens
 * from a `--token-auth-file`, and service-account JWTs (signature, time, audience, and the service account still
 * existing with the same uid). Used for requests to the authority and for TokenReview.
 */
import { readFileSync } from 'node:fs';
import { timingSafeEqual } from 'node:crypto';
import type { UserInfo } from './rbac.js';
import type { Store } from './store.js';
import { record, str } from './json.js';
import { looksLikeJWT, type TokenSigner } from './sa-tokens.js';

/** Outcome of authenticating one token. */
export type AuthnResult =
  { authenticated: true; user: UserInfo; audiences: string[] } | { authenticated: false; error: string };

export const SYSTEM_AUTHENTICATED = 'system:authenticated';

/** Adds `system:authenticated` like kube's group adder. */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  const groups = user.groups ?? [];
  if (
    user.username === 'system:anonymous' ||
    groups.includes(SYSTEM_AUTHENTICATED) ||
    groups.includes('system:unauthenticated')
  )
    return user;
  return { ...user, groups: [...groups, SYSTEM_AUTHENTICATED] };
}

/** Groups kube gives a service account user. */
export function serviceAccountGroups(namespace: string): string[] {
  return ['system:serviceaccounts', `system:serviceaccounts:${namespace}`];
}

/**
 * Parses a kube-apiserver token file: CSV lines `token,user,uid[,"group1,group2"]`; blank lines and lines starting
 * with `#` are skipped. Throws with the line number on a malformed line.
 */
export function parseTokenAuthFile(text: string, fileName = 'token file'): Map<string, UserInfo> {
  const out = new Map<string, UserInfo>();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const fields = parseCsvLine(line);
    if (fields.length < 3)
      throw new Error(`${fileName}:${i + 1}: expected token,user,uid[,"groups"] (at least 3 columns)`);
    const [token, username, uid, groups] = fields as [string, string, string, string | undefined];
    if (!token || !username) throw new Error(`${fileName}:${i + 1}: token and user must not be empty`);
    out.set(token, {
      username,
      uid,
      groups: (groups ?? '')
        .split(',')
        .map((g) => g.trim())
        .filter(Boolean),
    });
  });
  return out;
}

function parseCsvLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cur += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  return out;
}

/** Loads a token file (see {@link parseTokenAuthFile}). */
export function loadTokenAuthFile(path: string): Map<string, UserInfo> {
  return parseTokenAuthFile(readFileSync(path, 'utf8'), path);
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** Authenticates tokens against the authority's identities. */
export class Authenticator {
  constructor(
    private readonly deps: {
      store: Store;
      signer: TokenSigner;
      adminToken: string;
      staticTokens: Map<string, UserInfo>;
      /** The API audiences (`--api-audiences`): tokens must carry one when the caller names none. */
      apiAudiences: string[];
      now?: () => number;
    },
  ) {}

  /**
   * Authenticates a token for the given audiences (none: the API audiences). Answers like kube's TokenReview:
   * the user with `system:authenticated` added, and the audiences the token is valid for.
   */
  authenticate(token: string, audiences?: string[]): AuthnResult {
    const { apiAudiences } = this.deps;
    const wanted = audiences && audiences.length ? audiences : apiAudiences;
    if (!token) return { authenticated: false, error: 'invalid bearer token' };
    // Audience-agnostic tokens (admin, static) are valid only for the API audiences.
    const agnostic = (user: UserInfo): AuthnResult => {
      const auds = wanted.filter((a) => apiAudiences.includes(a));
      if (!auds.length) return { authenticated: false, error: 'invalid bearer token' };
      return { authenticated: true, user: withAuthenticatedGroup(user), audiences: auds };
    };
    if (safeEqual(token, this.deps.adminToken))
      return agnostic({ username: 'admin', uid: 'admin', groups: ['system:masters'] });
    const st = this.deps.staticTokens.get(token);
    if (st) return agnostic({ ...st, groups: [...st.groups] });
    if (!looksLikeJWT(token)) return { authenticated: false, error: 'invalid bearer token' };
    return this.authenticateServiceAccount(token, wanted);
  }

  /**
   * A legacy token from a `kubernetes.io/service-account-token` Secret: valid while that Secret still holds it and
   * the service account exists with the same uid; audience-agnostic (valid for the API audiences), no expiry.
   */
  private authenticateLegacy(token: string, wanted: string[]): AuthnResult | undefined {
    const c = this.deps.signer.verifyLegacy(token);
    if (!c) return undefined;
    const fail = (why: string): AuthnResult => ({ authenticated: false, error: `[invalid bearer token, ${why}]` });
    const auds = wanted.filter((a) => this.deps.apiAudiences.includes(a));
    if (!auds.length)
      return fail(`token audiences ${q(this.deps.apiAudiences)} is invalid for the target audiences ${q(wanted)}`);
    const ns = c['kubernetes.io/serviceaccount/namespace'];
    const secretName = c['kubernetes.io/serviceaccount/secret.name'];
    const saName = c['kubernetes.io/serviceaccount/service-account.name'];
    const secret = this.deps.store.get('secrets', ns, secretName);
    if (!secret) return fail(`secrets "${secretName}" not found`);
    const held = str(record(secret.data)?.token);
    const stored = held === undefined ? '' : Buffer.from(held, 'base64').toString('utf8');
    if (!safeEqual(stored, token)) return fail("Token does not match server's copy");
    const sa = this.deps.store.get('serviceaccounts', ns, saName);
    if (!sa) return fail(`serviceaccounts "${saName}" not found`);
    const uid = c['kubernetes.io/serviceaccount/service-account.uid'];
    if (uid && sa.metadata.uid !== uid)
      return fail(`service account UID (${String(sa.metadata.uid)}) does not match claim (${uid})`);
    const user: UserInfo = {
      username: c.sub,
      uid: String(sa.metadata.uid),
      groups: [...serviceAccountGroups(ns), SYSTEM_AUTHENTICATED],
    };
    return { authenticated: true, user, audiences: auds };
  }

  private authenticateServiceAccount(token: string, wanted: string[]): AuthnResult {
    const legacy = this.authenticateLegacy(token, wanted);
    if (legacy) return legacy;
    const claims = this.deps.signer.verifySignature(token);
    if (!claims) return { authenticated: false, error: 'invalid bearer token' };
    const fail = (why: string): AuthnResult => ({ authenticated: false, error: `[invalid bearer token, ${why}]` });
    const now = Math.floor((this.deps.now?.() ?? Date.now()) / 1000);
    // kube allows 60 s of clock skew on nbf/exp checks
    if (typeof claims.exp !== 'number' || now > claims.exp + 60) return fail('service account token has expired');
    if (typeof claims.nbf === 'number' && now < claims.nbf - 60) return fail('service account token is not valid yet');
    const auds = claims.aud.filter((a) => wanted.includes(a));
    if (!auds.length) return fail(`token audiences ${q(claims.aud)} is invalid for the target audiences ${q(wanted)}`);
    const k = claims['kubernetes.io'];
    const sa = this.deps.store.get('serviceaccounts', k.namespace, k.serviceaccount.name);
    if (!sa) return fail(`service account ${k.namespace}/${k.serviceaccount.name} has been deleted`);
    if (sa.metadata.uid !== k.serviceaccount.uid) {
      return fail(`service account UID (${String(sa.metadata.uid)}) does not match claim (${k.serviceaccount.uid})`);
    }
    if (sa.metadata.deletionTimestamp)
      return fail(`service account ${k.namespace}/${k.serviceaccount.name} is being deleted`);
    if (k.secret) {
      const secret = this.deps.store.get('secrets', k.namespace, k.secret.name);
      if (!secret) return fail(`secret ${k.namespace}/${k.secret.name} has been deleted`);
      if (secret.metadata.uid !== k.secret.uid)
        return fail(
          `secret ${k.namespace}/${k.secret.name} UID (${String(secret.metadata.uid)}) does not match claim (${k.secret.uid})`,
        );
    }
    const user: UserInfo = {
      username: claims.sub,
      uid: k.serviceaccount.uid,
      groups: [...serviceAccountGroups(k.namespace), SYSTEM_AUTHENTICATED],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
    };
    return { authenticated: true, user, audiences: auds };
  }
}

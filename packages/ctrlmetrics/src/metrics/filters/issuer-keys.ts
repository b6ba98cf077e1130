/**
 * The public keys the cluster signs service-account tokens with (the API server's `/openid/v1/jwks`), used to
 * tell a token the cluster issued from garbage *before* asking the API about it: a never-seen token whose
 * signature verifies is reviewed in the `signed` lane, which a flood of forged or random tokens cannot fill.
 *
 * A verified signature only chooses the lane; it never authenticates anyone (expiry, audience, revocation and
 * the user are the TokenReview's to decide). Tokens of other authenticators (OIDC, static, webhook) simply do
 * not verify and take the `new` lane, as they would without this. If the keys cannot be read (the manager may
 * not get `/openid/v1/jwks`, an old API server), every never-seen token takes the `new` lane.
 *
 * Verification is `node:crypto`'s (see `jws.ts` for why not jose); the keys come through the API client (the
 * manager's identity and CA), not a plain URL.
 */
import { decodeHeader, importKeys, verifyCompact, type VerificationKey } from './jws.js';
import type { KubeClient } from '../../kube/client.js';
import { createLogger, type Logger } from '../../util/log.js';

const JWKS_PATH = '/openid/v1/jwks';
/**
 * kube-apiserver serves the key set only as `application/jwk-set+json` and answers a bare `application/json` with
 * 406; `application/json` stays second for servers that label the set as plain JSON.
 */
const JWKS_ACCEPT = 'application/jwk-set+json, application/json;q=0.9';
/** More keys than this in a key set is not a cluster's signing set: refuse it rather than try each. */
const MAX_KEYS = 32;

/** When to read the keys again. */
export interface IssuerKeysTiming {
  /** Re-read the keys this often (default 5 min), to follow key rotation. */
  refreshMs: number;
  /** At most one read this often (default 30 s), however many unknown key ids arrive. */
  minIntervalMs: number;
}

const DEFAULT_TIMING: IssuerKeysTiming = { refreshMs: 5 * 60_000, minIntervalMs: 30_000 };

export class IssuerKeys {
  private keySet: VerificationKey[] | undefined;
  private kids = new Set<string>();
  private loadedAt = -Infinity;
  private triedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private lastProblem = '';

  constructor(
    private readonly client: KubeClient,
    private readonly timing: IssuerKeysTiming = DEFAULT_TIMING,
    private readonly now: () => number = () => performance.now(),
    private readonly log: Logger = createLogger('metrics-filter'),
  ) {}

  /** Whether keys are loaded. */
  get ready(): boolean {
    return this.keySet !== undefined;
  }

  /** Reads the keys now, unless a read is running (then waits for it). Never throws. */
  load(): Promise<void> {
    this.loading ??= this.read().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Resolves when no read is running (a background read started by {@link signedByCluster} has finished). */
  idle(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  /**
   * True when `token` is a JWS signed by one of the cluster's keys; false for anything else, and while the keys
   * are unknown. Starts a background read when the keys are due, or when the token names a key id not seen yet.
   */
  async signedByCluster(token: string): Promise<boolean> {
    const t = this.now();
    if (t - this.loadedAt >= this.timing.refreshMs) this.loadIfAllowed(t);
    const header = decodeHeader(token);
    if (!header) return false;
    const kid = header.kid;
    if (!this.keySet) return false;
    if (typeof kid === 'string' && !this.kids.has(kid)) {
      this.loadIfAllowed(t); // maybe the cluster rotated its key
      return false;
    }
    return verifyCompact(token, this.keySet);
  }

  private loadIfAllowed(t: number): void {
    if (t - this.triedAt < this.timing.minIntervalMs) return;
    void this.load();
  }

  private async read(): Promise<void> {
    this.triedAt = this.now();
    try {
      const jwks = await this.client.get<{ keys?: unknown }>(JWKS_PATH, {
        timeoutMs: 5_000,
        headers: { Accept: JWKS_ACCEPT },
      });
      if (!jwks || !Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new Error(`${JWKS_PATH} holds no keys`);
      if (jwks.keys.length > MAX_KEYS)
        throw new Error(`${JWKS_PATH} holds ${jwks.keys.length} keys (more than ${MAX_KEYS})`);
      const keySet = importKeys(jwks.keys);
      if (keySet.length === 0) throw new Error(`${JWKS_PATH} holds no RSA or EC signature key`);
      this.keySet = keySet;
      this.kids = new Set(keySet.map((k) => k.kid).filter((k): k is string => k !== undefined));
      this.loadedAt = this.now();
      if (this.lastProblem) this.log.info('Read the service-account issuer keys', { keys: jwks.keys.length });
      this.lastProblem = '';
    } catch (err) {
      // keep the keys we had: a failed refresh must not demote every new pod's token to the garbage lane
      const problem = err instanceof Error ? err.message : String(err);
      if (problem !== this.lastProblem) {
        this.log.info('Cannot read the service-account issuer keys: never-seen tokens share one review lane', {
          error: problem,
          hint: `let the manager get ${JWKS_PATH} (ClusterRole system:service-account-issuer-discovery)`,
        });
      }
      this.lastProblem = problem;
    }
  }
}

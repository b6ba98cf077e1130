/**
 * The secure metrics endpoint's filter against a real kube-apiserver: TokenReview and SubjectAccessReview as a
 * manager's service account sends them (counted through a proxy), the cached decisions, and the review lanes under
 * a flood of garbage tokens, during which a service account bound only then gets its fresh tokens served at the
 * first try (they verify against the cluster's `/openid/v1/jwks` keys and take the `signed` lane). Expired tokens are
 * signed with the control plane's own service-account key (jose), independently of the code under test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { FaultProxy } from '../helpers/fault-proxy.js';
import { LogCapture } from '../helpers/log-capture.js';
import { sleep } from '../helpers/process.js';
import { REAL_KUBE_SKIP, runName, SA_KEY_SKIP, startRealKube, type RealKube } from '../helpers/real-kube.js';
import { scrape, startSecureEndpoint, type SecureEndpoint } from '../helpers/secure-endpoint.js';

const NS = runName('real-metrics-filter');
/** The flood: connections, and how long (bounded in count too). */
const CONNECTIONS = 300;
const FLOOD_MS = 15_000;
const MAX_FLOOD_TOKENS = 200_000;
const FRESH_TOKENS = 8;

describe('the metrics filter on a real kube-apiserver', { skip: REAL_KUBE_SKIP, timeout: 240_000 }, () => {
  const logs = new LogCapture();
  let kube: RealKube;
  let proxy: FaultProxy;
  let ep: SecureEndpoint;
  let reader: string;
  let stranger: string;

  before(async () => {
    kube = await startRealKube();
    proxy = new FaultProxy(kube.url, kube.caPem);
    await proxy.start();
    const manager = await kube.managerConfig(NS, 'manager');
    ep = await startSecureEndpoint({ ...manager, server: proxy.url, ca: proxy.caPem });
    await ep.auth.issuerKeys?.load();
    reader = logs.secret(await kube.readerToken(NS, 'prometheus'));
    stranger = logs.secret(await kube.serviceAccountToken(NS, 'stranger'));
  });

  after(async () => {
    await ep?.stop();
    await proxy?.stop();
    await kube?.stop();
    logs.restore();
    assert.deepEqual(logs.leaks().slice(0, 3), [], 'a secret reached a log line');
  });

  const tokenReviews = () => proxy.count('/tokenreviews');
  const accessReviews = () => proxy.count('/subjectaccessreviews');

  test('the issuer keys were read from the cluster (the signed lane is open)', () => {
    assert.equal(ep.auth.issuerKeys?.ready, true, logs.lines.filter((l) => l.includes('issuer')).join('\n'));
  });

  test('a bound reader gets 200, then its decisions come from the caches', async () => {
    const [tr0, sar0] = [tokenReviews(), accessReviews()];
    const r = await scrape(ep.port, { token: reader });
    assert.equal(r.status, 200, r.body.slice(0, 300));
    assert.match(r.body, /^# HELP /m);
    assert.equal(tokenReviews() - tr0, 1, 'one TokenReview');
    assert.equal(accessReviews() - sar0, 1, 'one SubjectAccessReview');
    for (let i = 0; i < 3; i++) assert.equal((await scrape(ep.port, { token: reader })).status, 200);
    assert.equal(tokenReviews() - tr0, 1, 'no further TokenReview: cached');
    assert.equal(accessReviews() - sar0, 1, 'no further SubjectAccessReview: cached');
  });

  test('an unbound service account gets 403 naming user, verb and path', async () => {
    const r = await scrape(ep.port, { token: stranger });
    assert.equal(r.status, 403);
    assert.equal(
      r.body,
      `Authorization denied for user system:serviceaccount:${NS}:stranger (verb "get" on path "/metrics")\n`,
    );
    const head = await scrape(ep.port, { token: reader, method: 'HEAD' });
    assert.equal(head.status, 403, 'HEAD asks RBAC for "head", which the reader role does not grant');
  });

  test('no token and garbage get 401', async () => {
    assert.equal((await scrape(ep.port)).status, 401);
    assert.equal((await scrape(ep.port, { token: 'garbage' })).status, 401);
  });

  test('an expired token signed by the cluster gets 401', { skip: SA_KEY_SKIP }, async () => {
    const key = createPrivateKey(await readFile(kube.saKeyFile!));
    const claims = decodeJwt(reader);
    const now = Math.floor(Date.now() / 1000);
    const expired = logs.secret(
      await new SignJWT({ ...claims, iat: now - 7200, nbf: now - 7200, exp: now - 3600 })
        .setProtectedHeader({ alg: decodeProtectedHeader(reader).alg!, kid: decodeProtectedHeader(reader).kid! })
        .sign(key),
    );
    const r = await scrape(ep.port, { token: expired });
    assert.equal(r.status, 401);
    assert.equal(r.body, 'Unauthorized\n');
  });

  test(
    `${CONNECTIONS} connections of garbage tokens: a service account bound mid-flood is served at the first try`,
    { timeout: 120_000 },
    async (t) => {
      const kid = decodeProtectedHeader(reader).kid!;
      const garbage = (i: number) =>
        i % 2 === 0
          ? randomBytes(24).toString('base64url')
          : `${Buffer.from(JSON.stringify({ alg: 'RS256', kid })).toString('base64url')}.${randomBytes(96).toString('base64url')}.${randomBytes(256).toString('base64url')}`;
      const answers = new Map<string, number>();
      const note = (k: string | number) => answers.set(String(k), (answers.get(String(k)) ?? 0) + 1);
      const agent = new https.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
      const signedBefore = ep.auth.admission.stats('signed').admitted;
      let sent = 0;
      const end = Date.now() + FLOOD_MS;
      const worker = async () => {
        while (Date.now() < end && sent < MAX_FLOOD_TOKENS) {
          try {
            note((await scrape(ep.port, { token: garbage(sent++), agent, timeoutMs: 20_000 })).status);
          } catch (err) {
            note((err as Error).message);
          }
        }
      };

      // a third of the way in: a new service account, bound to the reader role only now, and its fresh tokens
      const tries: number[] = [];
      const fresh = (async () => {
        await sleep(FLOOD_MS / 3);
        const name = 'late-scraper';
        const tokens: string[] = [];
        // 1.25's tokens carry no jti: two requested in the same second with the same lifetime are the same token
        for (let i = 0; i < FRESH_TOKENS; i++)
          tokens.push(logs.secret(await kube.serviceAccountToken(NS, name, { expirationSeconds: 3600 + i })));
        assert.equal(new Set(tokens).size, FRESH_TOKENS);
        await kube.readerToken(NS, name); // binds the metrics reader role
        for (const token of tokens) {
          let servedAt = Infinity;
          for (let attempt = 1; attempt <= 3 && servedAt === Infinity; attempt++) {
            const r = await scrape(ep.port, { token, timeoutMs: 20_000 }).catch(() => ({
              status: 0,
              // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion steers the inference of the call around it
              headers: {} as Record<string, string>,
            }));
            if (r.status === 200) servedAt = attempt;
            else await sleep(Number(r.headers['retry-after'] ?? 1) * 1000);
          }
          tries.push(servedAt);
        }
      })();

      await Promise.all([...Array.from({ length: CONNECTIONS }, worker), fresh]);
      agent.destroy();
      const signed = ep.auth.admission.stats('signed').admitted - signedBefore;
      t.diagnostic(
        `${sent} garbage tokens: ${JSON.stringify([...answers])}; fresh tokens served at try ${JSON.stringify(tries)}; ${signed} reviews in the signed lane`,
      );
      assert.ok(sent >= 1_000, `only ${sent} garbage tokens were sent`);
      assert.equal(answers.get('200') ?? 0, 0, 'a garbage token was served');
      for (const k of answers.keys())
        assert.ok(k === '401' || k === '503', `unexpected answer to a garbage token: ${k}`);
      assert.ok((answers.get('503') ?? 0) > 0, 'the flood filled the garbage lane (else it proves nothing)');
      assert.deepEqual(tries, Array(FRESH_TOKENS).fill(1), 'every fresh token served at the first try');
      assert.ok(signed >= FRESH_TOKENS, `the fresh tokens took the signed lane (${signed} admitted there)`);
    },
  );
});

/**
 * Compact JWS verification with node:crypto (src/metrics/filters/jws.ts), checked against jose — the reference,
 * which signs every token here and whose own `compactVerify` must reach the same verdict on each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { CompactSign, compactVerify, createLocalJWKSet, exportJWK, type JWK } from 'jose';
import { importKeys, verifyCompact } from '../../packages/ctrlmetrics/src/metrics/filters/jws.js';

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'];
const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');
const claims = { iss: 'https://kubernetes.default.svc', sub: 'system:serviceaccount:monitoring:prometheus' };

function pair(alg: string): { privateKey: KeyObject; publicKey: KeyObject } {
  if (alg.startsWith('RS')) return generateKeyPairSync('rsa', { modulusLength: 2048 });
  return generateKeyPairSync('ec', { namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[alg]! });
}

async function jwk(publicKey: KeyObject, kid: string, extra: Partial<JWK> = {}): Promise<JWK> {
  return { ...(await exportJWK(publicKey)), kid, use: 'sig', ...extra };
}

async function joseVerdict(token: string, keys: JWK[]): Promise<boolean> {
  try {
    await compactVerify(token, createLocalJWKSet({ keys }), { algorithms: ALGORITHMS });
    return true;
  } catch {
    return false;
  }
}

test('tokens signed with each algorithm kube-apiserver uses verify, as with jose', async () => {
  for (const alg of ALGORITHMS) {
    const { privateKey, publicKey } = pair(alg);
    const keys = [await jwk(publicKey, `k-${alg}`, { alg })];
    const token = await new CompactSign(Buffer.from(JSON.stringify(claims)))
      .setProtectedHeader({ alg, kid: `k-${alg}` })
      .sign(privateKey);
    assert.equal(verifyCompact(token, importKeys(keys)), true, alg);
    assert.equal(await joseVerdict(token, keys), true, `jose: ${alg}`);
  }
});

test('forgeries and oddities never verify, and jose agrees on each', async () => {
  const rs = pair('RS256');
  const es = pair('ES256');
  const other = pair('ES256');
  const keys = [await jwk(rs.publicKey, 'rsa'), await jwk(es.publicKey, 'ec')];
  const good = await new CompactSign(Buffer.from(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'ES256', kid: 'ec' })
    .sign(es.privateKey);
  const [h, p, s] = good.split('.') as [string, string, string];
  const resigned = (header: object) => {
    const hh = b64(header);
    return `${hh}.${p}.${sign('sha256', Buffer.from(`${hh}.${p}`), { key: es.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
  const rsaPem = rs.publicKey.export({ type: 'spki', format: 'pem' });
  const hsHeader = b64({ alg: 'HS256', kid: 'rsa' });
  const cases: Record<string, string> = {
    tampered: `${h}.${b64({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })}.${s}`,
    'foreign key, right kid': await new CompactSign(Buffer.from(JSON.stringify(claims)))
      .setProtectedHeader({ alg: 'ES256', kid: 'ec' })
      .sign(other.privateKey),
    'alg none': `${b64({ alg: 'none', kid: 'ec' })}.${p}.`,
    'HS256 keyed with the RSA public key (algorithm confusion)': `${hsHeader}.${p}.${createHmac('sha256', rsaPem).update(`${hsHeader}.${p}`).digest('base64url')}`,
    'kid of the other key': `${b64({ alg: 'ES256', kid: 'rsa' })}.${p}.${s}`,
    'RS256 header on an ECDSA signature': `${b64({ alg: 'RS256', kid: 'ec' })}.${p}.${s}`,
    'crit header (an extension nobody here understands), correctly signed': (() => {
      const ch = b64({ alg: 'ES256', kid: 'ec', crit: ['x-unknown'], 'x-unknown': 1 });
      return `${ch}.${p}.${sign('sha256', Buffer.from(`${ch}.${p}`), { key: es.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    })(),
    'ES256 signature with a DER encoding': `${h}.${p}.${sign('sha256', Buffer.from(`${h}.${p}`), es.privateKey).toString('base64url')}`,
    'two parts': `${h}.${p}`,
    'four parts': `${h}.${p}.${s}.x`,
    'header not JSON': `${b64('not json')}.${p}.${s}`,
    'header an array': `${b64([1])}.${p}.${s}`,
    empty: '',
    garbage: 'not-a-jwt',
  };
  for (const [name, token] of Object.entries(cases)) {
    assert.equal(verifyCompact(token, importKeys(keys)), false, name);
    assert.equal(await joseVerdict(token, keys), false, `jose: ${name}`);
  }
  assert.equal(verifyCompact(good, importKeys(keys)), true, 'the untouched token still verifies');
  // the control for the hand-signed cases above: the same signing, without the oddity, verifies with both
  const plain = resigned({ alg: 'ES256', kid: 'ec' });
  assert.equal(verifyCompact(plain, importKeys(keys)), true);
  assert.equal(await joseVerdict(plain, keys), true);
});

test('key sets: RSA under 2048 bits, encryption keys, symmetric and private-only entries are left out', async () => {
  const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const enc = pair('ES256');
  const good = pair('ES384');
  const keys = importKeys([
    await jwk(weak.publicKey, 'weak'),
    await jwk(enc.publicKey, 'enc', { use: 'enc' }),
    { kty: 'oct', k: 'c2VjcmV0', kid: 'oct' },
    { kty: 'EC', crv: 'P-256', kid: 'broken', x: 'AA', y: 'AA' },
    null,
    'a string',
    await jwk(good.publicKey, 'good'),
  ]);
  assert.deepEqual(
    keys.map((k) => k.kid),
    ['good'],
  );
  const weakToken = await new CompactSign(Buffer.from('{}'))
    .setProtectedHeader({ alg: 'RS256', kid: 'weak' })
    .sign(weak.privateKey)
    .catch(() => undefined);
  if (weakToken) assert.equal(verifyCompact(weakToken, keys), false, 'a token signed with the weak key');
  const ok = await new CompactSign(Buffer.from('{}'))
    .setProtectedHeader({ alg: 'ES384', kid: 'good' })
    .sign(good.privateKey);
  assert.equal(verifyCompact(ok, keys), true);
  const noKid = await new CompactSign(Buffer.from('{}')).setProtectedHeader({ alg: 'ES384' }).sign(good.privateKey);
  assert.equal(verifyCompact(noKid, keys), true, 'a token without kid is tried against every key of its type');
});

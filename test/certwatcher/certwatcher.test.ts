/**
 * The certificate watcher and the self-signed certificate generator, on real files and real crypto.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { generateCA, issueServingCert, type CertKeyPair } from '../../packages/envtest/src/pki.js';
import {
  CertWatcher,
  CertificateLoadError,
  generateSelfSignedCertificate,
  loadCertificatePair,
} from '../../packages/ctrlmetrics/src/certwatcher/index.js';
import { setLogSink } from '../../packages/ctrlmetrics/src/util/log.js';

const logs: string[] = [];
setLogSink((l) => logs.push(l));

let dir: string;
let a: CertKeyPair;
let b: CertKeyPair;
before(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'ctrlmetrics-certwatcher-test-'));
  const ca = await generateCA('certwatcher-test-ca');
  [a, b] = await Promise.all([issueServingCert(ca, ['localhost']), issueServingCert(ca, ['localhost'])]);
});
after(() => rm(dir, { recursive: true, force: true }));

function counters() {
  const c = { reads: 0, errors: 0 };
  return {
    c,
    counters: {
      readCertificateTotal: { inc: () => void c.reads++ },
      readCertificateErrorsTotal: { inc: () => void c.errors++ },
    },
  };
}

async function files(name: string, cert: string, key: string): Promise<{ certPath: string; keyPath: string }> {
  const certPath = join(dir, `${name}.crt`);
  const keyPath = join(dir, `${name}.key`);
  await writeFile(certPath, cert);
  await writeFile(keyPath, key);
  return { certPath, keyPath };
}

describe('loadCertificatePair', () => {
  test('loads a matching pair', async () => {
    const p = await files('good', a.certPem, a.keyPem);
    const pair = await loadCertificatePair(p.certPath, p.keyPath);
    assert.equal(pair.leaf.fingerprint256, new X509Certificate(a.certPem).fingerprint256);
  });

  test('names the bad file and never echoes key material', async () => {
    const missing = loadCertificatePair(join(dir, 'nope.crt'), join(dir, 'nope.key'));
    await assert.rejects(
      missing,
      (e: Error) =>
        e instanceof CertificateLoadError &&
        /cannot read certificate file .*nope\.crt: it does not exist/.test(e.message),
    );
    const badKey = await files('badkey', a.certPem, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');
    await assert.rejects(loadCertificatePair(badKey.certPath, badKey.keyPath), (e: Error) => {
      assert.match(e.message, /key file .*badkey\.key does not hold a valid PEM private key/);
      assert.doesNotMatch(e.message, /PRIVATE KEY-----|AAAA/);
      return true;
    });
    const mismatch = await files('mismatch', a.certPem, b.keyPem);
    await assert.rejects(
      loadCertificatePair(mismatch.certPath, mismatch.keyPath),
      /key file .*mismatch\.key does not match the certificate in .*mismatch\.crt/,
    );
  });
});

describe('CertWatcher', () => {
  test('counts reads and errors, and keeps the last good pair on a bad read', async () => {
    const p = await files('watched', a.certPem, a.keyPem);
    const { c, counters: cs } = counters();
    const w = new CertWatcher({ ...p, counters: cs, pollIntervalMs: 60_000 });
    try {
      await w.start();
      assert.deepEqual(c, { reads: 1, errors: 0 });
      await writeFile(p.certPath, 'garbage');
      await assert.rejects(w.readCertificate(), CertificateLoadError);
      assert.deepEqual(c, { reads: 2, errors: 1 });
      assert.equal(w.current?.leaf.fingerprint256, new X509Certificate(a.certPem).fingerprint256);
    } finally {
      w.stop();
    }
  });

  test('a listener that throws rejects the new pair', async () => {
    const p = await files('listener', a.certPem, a.keyPem);
    const { c, counters: cs } = counters();
    const w = new CertWatcher({ ...p, counters: cs, pollIntervalMs: 60_000 });
    try {
      await w.start();
      w.onChange(() => {
        throw new Error('setSecureContext failed');
      });
      await files('listener', b.certPem, b.keyPem);
      await assert.rejects(w.readCertificate(), /rejected: setSecureContext failed/);
      assert.equal(w.current?.leaf.fingerprint256, new X509Certificate(a.certPem).fingerprint256);
      assert.equal(c.errors, 1);
    } finally {
      w.stop();
    }
  });

  test('a change on disk is picked up and reported once', async () => {
    const p = await files('polled', a.certPem, a.keyPem);
    const w = new CertWatcher({ ...p, pollIntervalMs: 200, debounceMs: 10 });
    const seen: string[] = [];
    try {
      await w.start();
      w.onChange((pair) => seen.push(pair.leaf.fingerprint256));
      await files('polled', b.certPem, b.keyPem);
      const deadline = Date.now() + 5_000;
      while (w.current?.leaf.fingerprint256 !== new X509Certificate(b.certPem).fingerprint256 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      assert.equal(w.current?.leaf.fingerprint256, new X509Certificate(b.certPem).fingerprint256);
      assert.deepEqual(seen, [new X509Certificate(b.certPem).fingerprint256], 'one change reported once');
    } finally {
      w.stop();
    }
  });

  test('start refuses a missing pair (no fallback)', async () => {
    const w = new CertWatcher({ certPath: join(dir, 'absent.crt'), keyPath: join(dir, 'absent.key') });
    await assert.rejects(w.start(), /cannot read certificate file .*absent\.crt: it does not exist/);
    w.stop();
  });
});

describe('generateSelfSignedCertificate', () => {
  test('a CA and a leaf it signed, ECDSA P-256, valid from an hour ago for a year, with the extra SANs', async () => {
    const self = await generateSelfSignedCertificate({ extraDNSNames: ['svc.ns.svc'], extraIPs: ['10.0.0.1'] });
    const caCert = new X509Certificate(self.caPem);
    const leaf = new X509Certificate(self.certPem); // the first certificate of the chain
    assert.ok(caCert.ca);
    assert.ok(!leaf.ca);
    assert.ok(leaf.verify(caCert.publicKey), 'the leaf is signed by the CA');
    assert.ok(leaf.checkPrivateKey(createPrivateKey(self.keyPem)));
    assert.equal(leaf.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    const from = Date.parse(leaf.validFrom);
    const to = Date.parse(leaf.validTo);
    assert.ok(Math.abs(Date.now() - 3600_000 - from) < 120_000, `validFrom ${leaf.validFrom}`);
    assert.ok(Math.abs(to - from - 3600_000 - 365 * 86_400_000) < 120_000, `validTo ${leaf.validTo}`);
    for (const san of ['DNS:localhost', 'DNS:svc.ns.svc', 'IP Address:127.0.0.1', 'IP Address:10.0.0.1'])
      assert.ok(leaf.subjectAltName?.includes(san), san);
    assert.equal(self.certPem.match(/BEGIN CERTIFICATE/g)?.length, 2, 'the chain is leaf + CA');
  });

  test('openssl verifies the leaf strictly for TLS servers, and @peculiar/x509 reads the extensions back', async () => {
    const self = await generateSelfSignedCertificate({ extraIPs: ['fd00::10'] });
    const [leafPem] = self.certPem.split(/(?<=-----END CERTIFICATE-----\n)/);
    await writeFile(join(dir, 'ss-ca.pem'), self.caPem);
    await writeFile(join(dir, 'ss-leaf.pem'), leafPem);
    const out = execFileSync(
      'openssl',
      ['verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', join(dir, 'ss-ca.pem'), join(dir, 'ss-leaf.pem')],
      { encoding: 'utf8' },
    );
    assert.match(out, /ss-leaf\.pem: OK/);

    const ca = new x509.X509Certificate(self.caPem);
    const leaf = new x509.X509Certificate(leafPem);
    const caBasic = ca.getExtension(x509.BasicConstraintsExtension)!;
    assert.deepEqual([caBasic.ca, caBasic.pathLength, caBasic.critical], [true, 0, true]);
    assert.equal(
      ca.getExtension(x509.KeyUsagesExtension)!.usages,
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
    );
    const leafBasic = leaf.getExtension(x509.BasicConstraintsExtension)!;
    assert.deepEqual([leafBasic.ca, leafBasic.critical], [false, true]);
    assert.equal(leaf.getExtension(x509.KeyUsagesExtension)!.usages, x509.KeyUsageFlags.digitalSignature);
    assert.deepEqual([...leaf.getExtension(x509.ExtendedKeyUsageExtension)!.usages].map(String), [
      x509.ExtendedKeyUsage.serverAuth,
    ]);
    const sans = leaf
      .getExtension(x509.SubjectAlternativeNameExtension)!
      .names.toJSON()
      .map((n) => `${n.type}:${n.value}`);
    for (const want of ['dns:localhost', `dns:${os.hostname().toLowerCase()}`, 'ip:127.0.0.1', 'ip:::1', 'ip:fd00::10'])
      assert.ok(sans.includes(want), `${want} in ${sans.join(', ')}`);
    assert.equal(
      leaf.getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId,
      ca.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId,
    );
    assert.equal(leaf.issuer, ca.subject);
    assert.ok(await leaf.verify({ publicKey: ca.publicKey, signatureOnly: true }), 'signed by the CA');
  });

  test('a TLS client that trusts only the CA connects by name and by IP', async () => {
    const self = await generateSelfSignedCertificate();
    const server = createServer({ cert: self.certPem, key: self.keyPem }, (_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      for (const servername of ['localhost', '127.0.0.1']) {
        const body = await new Promise<string>((resolveBody, reject) => {
          const req = httpsRequest(
            {
              host: '127.0.0.1',
              port,
              path: '/',
              ca: self.caPem,
              servername: servername === '127.0.0.1' ? undefined : servername,
              agent: false,
            },
            (res) => {
              let b = '';
              res
                .setEncoding('utf8')
                .on('data', (d: string) => (b += d))
                .on('end', () => resolveBody(b));
            },
          );
          req.on('error', reject);
          req.end();
        });
        assert.equal(body, 'ok', servername);
      }
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

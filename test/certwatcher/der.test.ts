/**
 * The DER encoders behind the self-signed certificate, against independent references: Python's `ipaddress`
 * for address bytes, openssl's `asn1parse` for encodings, and published encodings of well-known OIDs.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  ipBytes,
  namedBits,
  oid,
  sequence,
  time,
  tlv,
  unsignedInteger,
} from '../../packages/ctrlmetrics/src/certwatcher/der.js';

function asn1parse(der: Buffer): string {
  return execFileSync('openssl', ['asn1parse', '-inform', 'DER'], { input: der, encoding: 'utf8' });
}

describe('DER encoders', () => {
  test('IP addresses are the bytes Python’s ipaddress packs', () => {
    const cases = [
      '127.0.0.1',
      '10.0.0.1',
      '255.255.255.255',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1:2',
      '2001:db8::8a2e:370:7334',
      '1:2:3:4:5:6:7:8',
      '::ffff:1.2.3.4',
      '64:ff9b::192.0.2.33',
      'FE80:0:0:0:0:0:0:1',
    ];
    const py = execFileSync(
      'python3',
      ['-c', 'import ipaddress,sys\nfor a in sys.argv[1:]: print(ipaddress.ip_address(a).packed.hex())', ...cases],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n');
    cases.forEach((ip, i) => assert.equal(ipBytes(ip).toString('hex'), py[i], ip));
  });

  test('anything else is refused', () => {
    for (const bad of [
      '1.2.3',
      '256.1.1.1',
      '01.2.3.4',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      ':::',
      'g::1',
      'localhost',
      '1:2:3:4:5:6:7::8',
    ]) {
      assert.throws(() => ipBytes(bad), /not an IP address/, bad);
    }
  });

  test('OIDs, integers and lengths as openssl reads them', () => {
    // RFC 5758: ecdsa-with-SHA256
    assert.equal(oid('1.2.840.10045.4.3.2').toString('hex'), '06082a8648ce3d040302');
    assert.match(asn1parse(oid('1.3.6.1.5.5.7.3.1')), /OBJECT\s+:TLS Web Server Authentication/);
    assert.match(asn1parse(unsignedInteger(Buffer.from([0x00, 0x00, 0x80, 0x01]))), /INTEGER\s+:8001/);
    assert.equal(
      unsignedInteger(Buffer.from([0x80])).toString('hex'),
      '02020080',
      'a zero byte keeps a high bit positive',
    );
    assert.equal(unsignedInteger(Buffer.from([0x00, 0x7f])).toString('hex'), '02017f', 'no redundant leading zero');
    for (const n of [0, 127, 128, 255, 256, 70_000]) {
      const der = tlv(0x04, Buffer.alloc(n, 0x61));
      const out = asn1parse(sequence(der));
      assert.match(out, new RegExp(`l=\\s*${n} prim: OCTET STRING`), `${n}-byte content`);
    }
  });

  test('key usage bits drop trailing zero bits into the unused-bits count', () => {
    assert.equal(namedBits([0]).toString('hex'), '03020780'); // digitalSignature
    assert.equal(namedBits([0, 5, 6]).toString('hex'), '03020186'); // + keyCertSign, cRLSign
    assert.equal(namedBits([8]).toString('hex'), '0303070080'); // decipherOnly: a second byte
  });

  test('times: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280)', () => {
    assert.match(asn1parse(time(new Date('2049-12-31T23:59:59.999Z'))), /UTCTIME\s+:491231235959Z/);
    assert.match(asn1parse(time(new Date('2050-01-01T00:00:00Z'))), /GENERALIZEDTIME\s+:20500101000000Z/);
  });
});

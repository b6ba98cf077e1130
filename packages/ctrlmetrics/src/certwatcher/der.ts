/**
 * The few ASN.1 DER encoders an X.509 v3 certificate needs (ITU-T X.690), for the self-signed serving certificate.
 *
 * Hand-written because the libraries that build certificates (`@peculiar/x509` and its ASN.1 schema and DI
 * layers, pkijs, node-forge) cost a manager 100–150 ms and ≈14 MB to load for one certificate at start,
 * while `node:crypto` already generates the keys, exports the SubjectPublicKeyInfo and signs: what is left is this
 * encoding. Tests read the output back with openssl, `node:crypto`'s X509Certificate and `@peculiar/x509`.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A tag-length-value with `content` as the value. */
export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const booleanTrue = (): Buffer => Buffer.from([0x01, 0x01, 0xff]);
/** `[n]` EXPLICIT: the constructed context-specific tag around an encoded value. */
export const explicit = (n: number, value: Buffer): Buffer => tlv(0xa0 | n, value);
/** `[n]` IMPLICIT of a primitive value: the context-specific tag replaces the value's own. */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A BIT STRING of whole bytes (no unused bits): signatures and keys. */
export const bitString = (b: Buffer): Buffer => tlv(0x03, Buffer.from([0]), b);

/**
 * A named-bit BIT STRING (key usage): bit 0 is the most significant bit of the first byte; DER drops trailing
 * zero bits and counts them in the leading unused-bits byte.
 */
export function namedBits(bits: readonly number[]): Buffer {
  const top = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(top / 8) + 1);
  for (const b of bits) bytes[b >> 3] |= 0x80 >> (b & 7);
  const unused = 7 - (top & 7);
  return tlv(0x03, Buffer.from([unused]), bytes);
}

/** A non-negative INTEGER from its big-endian magnitude (minimal: no redundant leading zero, a zero before a high bit). */
export function unsignedInteger(magnitude: Buffer): Buffer {
  let i = 0;
  while (i < magnitude.length - 1 && magnitude[i] === 0) i++;
  const m = magnitude.subarray(i);
  return tlv(0x02, m[0] & 0x80 ? Buffer.concat([Buffer.from([0]), m]) : m);
}

export const smallInteger = (n: number): Buffer => unsignedInteger(Buffer.from([n]));

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out: number[] = [arcs[0] * 40 + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const base128: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; whole seconds, `Z`. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(digits, 'ascii'));
}

/** The 4 or 16 bytes of an IPv4 or IPv6 address (a `::` run and a trailing dotted IPv4 part allowed); throws on anything else. */
export function ipBytes(ip: string): Buffer {
  const v4 = (s: string): number[] | undefined => {
    const parts = s.split('.');
    if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
    return parts.map(Number);
  };
  const four = v4(ip);
  if (four) return Buffer.from(four);
  const halves = ip.split('::');
  if (halves.length > 2) throw new Error(`not an IP address: ${ip}`);
  const groups = (s: string): number[] => {
    if (s === '') return [];
    const out: number[] = [];
    const items = s.split(':');
    items.forEach((g, i) => {
      const tail = i === items.length - 1 ? v4(g) : undefined;
      if (tail) out.push((tail[0] << 8) | tail[1], (tail[2] << 8) | tail[3]);
      else if (/^[0-9a-fA-F]{1,4}$/.test(g)) out.push(parseInt(g, 16));
      else throw new Error(`not an IP address: ${ip}`);
    });
    return out;
  };
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) throw new Error(`not an IP address: ${ip}`);
  const all = [...head, ...new Array<number>(halves.length === 2 ? fill : 0).fill(0), ...rest];
  const b = Buffer.alloc(16);
  all.forEach((g, i) => b.writeUInt16BE(g, i * 2));
  return b;
}

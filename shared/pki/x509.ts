// X.509 v3 certificates (RFC 5280) built with shared/pki/der.ts and signed by
// node:crypto: the few shapes tkube makes (a CA, serving and client leaves, the
// Go-style test certificates), with the extensions Go's crypto/x509 writes for them.
import { createHash, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import * as der from './der';

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** RFC 5280 4.2.1.3: bit numbers of KeyUsage. */
const KEY_USAGE_BITS = {
  digitalSignature: 0,
  contentCommitment: 1,
  keyEncipherment: 2,
  dataEncipherment: 3,
  keyAgreement: 4,
  keyCertSign: 5,
  cRLSign: 6,
  encipherOnly: 7,
  decipherOnly: 8,
} as const;

export type KeyUsage = keyof typeof KEY_USAGE_BITS;
export type ExtKeyUsage = 'serverAuth' | 'clientAuth';

export interface Name {
  commonName: string;
  organizations?: string[];
}

export interface Template {
  /** Unsigned big-endian; default 16 random bytes. */
  serial?: Buffer;
  subject: Name;
  notBefore: Date;
  notAfter: Date;
  publicKey: KeyObject;
  /** BasicConstraints (critical) cA; no BasicConstraints at all when undefined. */
  isCA?: boolean;
  keyUsage?: KeyUsage[];
  extKeyUsage?: ExtKeyUsage[];
  dnsNames?: string[];
  ips?: string[];
}

/** Who signs: the issuer Name as DER, its key id (the authority key id of what it signs) and key. */
export interface Issuer {
  name: Buffer;
  keyId?: Buffer;
  key: KeyObject;
}

/**
 * A Name as Go's pkix.Name writes one: each O, then the CN, every attribute its own RDN;
 * PrintableString when the value fits that alphabet, else UTF8String.
 */
export function encodeName(n: Name): Buffer {
  const atv = (type: string, v: string) =>
    der.set(der.sequence(der.oid(type), der.PRINTABLE.test(v) ? der.printableString(v) : der.utf8String(v)));
  return der.sequence(
    ...(n.organizations ?? []).map((o) => atv(OID.organization, o)),
    ...(n.commonName ? [atv(OID.commonName, n.commonName)] : []),
  );
}

/** An IP address as SAN iPAddress wants it: 4 bytes for IPv4 (and IPv4-mapped IPv6, as Go), else 16. */
export function ipBytes(ip: string): Buffer {
  const v = isIP(ip);
  if (v === 4) return Buffer.from(ip.split('.').map(Number));
  if (v !== 6) throw new Error(`invalid IP address ${JSON.stringify(ip)}`);
  let text = ip.replace(/%.*$/, '');
  // A trailing dotted quad is the last two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = text.slice(0, quad.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [head, tail] = text.split('::');
  const groups = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const hi = groups(head);
  const lo = tail === undefined ? [] : groups(tail);
  const all = [...hi, ...Array<number>(8 - hi.length - lo.length).fill(0), ...lo];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  const mapped = out.subarray(0, 12).equals(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]));
  return mapped ? out.subarray(12) : out;
}

/** dNSName is an IA5String: ASCII (an internationalized name goes in its punycode form). */
function dnsName(d: string): Buffer {
  if (!/^[\x21-\x7e]+$/.test(d)) throw new Error(`invalid DNS name ${JSON.stringify(d)}`);
  return Buffer.from(d, 'latin1');
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return der.sequence(der.oid(id), ...(critical ? [der.boolean(true)] : []), der.octetString(value));
}

/** SHA-1 of the subjectPublicKey BIT STRING's bits (RFC 5280 4.2.1.2 method 1, as Go does). */
function keyIdentifier(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const [, bits] = der.children(spki, der.read(spki));
  return createHash('sha1')
    .update(spki.subarray(bits.contentStart + 1, bits.end))
    .digest();
}

function extensions(t: Template, issuer: Issuer): Buffer[] {
  const out: Buffer[] = [];
  if (t.keyUsage?.length)
    out.push(extension(OID.keyUsage, true, der.namedBits(t.keyUsage.map((u) => KEY_USAGE_BITS[u]))));
  if (t.extKeyUsage?.length)
    out.push(extension(OID.extKeyUsage, false, der.sequence(...t.extKeyUsage.map((u) => der.oid(OID[u])))));
  if (t.isCA !== undefined)
    out.push(extension(OID.basicConstraints, true, der.sequence(...(t.isCA ? [der.boolean(true)] : []))));
  // Go gives a CA a subject key id, and a leaf its issuer's as authority key id.
  if (t.isCA)
    out.push(extension(OID.subjectKeyIdentifier, false, der.octetString(keyIdentifier(t.publicKey))));
  if (issuer.keyId)
    out.push(extension(OID.authorityKeyIdentifier, false, der.sequence(der.implicit(0, issuer.keyId))));
  const names = [
    ...(t.dnsNames ?? []).map((d) => der.implicit(2, dnsName(d))),
    ...(t.ips ?? []).map((ip) => der.implicit(7, ipBytes(ip))),
  ];
  if (names.length) out.push(extension(OID.subjectAltName, false, der.sequence(...names)));
  return out;
}

/** The signature algorithm (AlgorithmIdentifier DER) and hash a key signs with, as Go picks them. */
function signatureAlgorithm(key: KeyObject): { algId: Buffer; hash: string | null } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { algId: der.sequence(der.oid('1.2.840.113549.1.1.11'), der.nullValue()), hash: 'sha256' };
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      const [oid, hash] =
        curve === 'secp384r1'
          ? ['1.2.840.10045.4.3.3', 'sha384']
          : curve === 'secp521r1'
            ? ['1.2.840.10045.4.3.4', 'sha512']
            : ['1.2.840.10045.4.3.2', 'sha256'];
      return { algId: der.sequence(der.oid(oid)), hash };
    }
    case 'ed25519':
      return { algId: der.sequence(der.oid('1.3.101.112')), hash: null };
    default:
      throw new Error(`cannot sign certificates with a ${key.asymmetricKeyType} key`);
  }
}

export function randomSerial(): Buffer {
  return randomBytes(16);
}

/** A signed certificate as DER. */
function certificateDer(t: Template, issuer: Issuer): Buffer {
  const { algId, hash } = signatureAlgorithm(issuer.key);
  const exts = extensions(t, issuer);
  const tbs = der.sequence(
    der.explicit(0, der.integer(2)), // v3
    der.integer(t.serial ?? randomSerial()),
    algId,
    issuer.name,
    der.sequence(der.time(t.notBefore), der.time(t.notAfter)),
    encodeName(t.subject),
    t.publicKey.export({ type: 'spki', format: 'der' }),
    ...(exts.length ? [der.explicit(3, der.sequence(...exts))] : []),
  );
  const signature = sign(hash, tbs, { key: issuer.key, dsaEncoding: 'der' });
  return der.sequence(tbs, algId, der.bitString(signature));
}

function toPem(certDer: Buffer): string {
  const b64 = certDer
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`;
}

/** A certificate (PEM) of template t signed by issuer. */
export function signed(t: Template, issuer: Issuer): string {
  return toPem(certificateDer(t, issuer));
}

/** A self-signed certificate (PEM) of template t, signed by key (t.publicKey's private half). */
export function selfSigned(t: Template, key: KeyObject): string {
  return signed(t, { name: encodeName(t.subject), key });
}

/**
 * The issuer a CA certificate (PEM, its first certificate) and its private key make: the CA's
 * subject Name byte for byte (a leaf's issuer must match it, whatever string types the CA used)
 * and its subject key id, if it has one.
 */
export function issuerFrom(caPem: string, key: KeyObject): Issuer {
  const ca = new X509Certificate(caPem);
  if (!ca.checkPrivateKey(key)) throw new Error('the CA key does not match the CA certificate');
  const raw = ca.raw;
  const [tbs] = der.children(raw, der.read(raw));
  const fields = der.children(raw, tbs);
  // version [0] is optional (v1 certificates); then serial, signature, issuer, validity, subject.
  const at = fields[0].tag === 0xa0 ? 1 : 0;
  const subject = fields[at + 4];
  const exts = fields.find((f) => f.tag === 0xa3);
  let keyId: Buffer | undefined;
  if (exts) {
    const skiOid = der.oid(OID.subjectKeyIdentifier);
    for (const ext of der.children(raw, der.children(raw, exts)[0])) {
      const parts = der.children(raw, ext);
      if (!der.bytesOf(raw, parts[0]).equals(skiOid)) continue;
      const value = der.contentOf(raw, parts[parts.length - 1]);
      keyId = Buffer.from(der.contentOf(value, der.read(value)));
    }
  }
  return { name: Buffer.from(der.bytesOf(raw, subject)), keyId, key };
}

// Certificates for tkube's own use: a cluster CA, self-signed serving
// certificates (apiserver, nodeagent) and client certificates (admin
// kubeconfig), ECDSA P-256 through WebCrypto and @peculiar/x509 (which needs
// reflect-metadata). The library is loaded only when a certificate is made:
// starting with existing certificates skips its ~60 ms of module loading.
import { webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type * as X509 from '@peculiar/x509';

let x509lib: typeof X509 | undefined;

async function loadX509(): Promise<typeof X509> {
  if (!x509lib) {
    // require, not import(): import() takes the package's ES build, and every CommonJS module
    // under it then goes through the ESM loader's lexer — ~150 ms more CPU than the CJS build.
    /* eslint-disable @typescript-eslint/no-require-imports */
    require('reflect-metadata');
    x509lib = require('@peculiar/x509') as typeof X509;
    /* eslint-enable @typescript-eslint/no-require-imports */
    x509lib.cryptoProvider.set(webcrypto as any);
  }
  return x509lib;
}

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export interface SubjectInfo {
  commonName: string;
  organizations?: string[];
}

export interface ServingOptions {
  dnsNames?: string[];
  ips?: string[];
  days?: number;
}

function subjectString(s: SubjectInfo): string {
  const esc = (v: string) => v.replace(/([,+"\\<>;=])/g, '\\$1');
  return [`CN=${esc(s.commonName)}`, ...(s.organizations ?? []).map((o) => `O=${esc(o)}`)].join(', ');
}

async function exportKey(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

async function importKey(pem: string): Promise<CryptoKey> {
  const b64 = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, '').replace(/\s+/g, '');
  return (await webcrypto.subtle.importKey('pkcs8', Buffer.from(b64, 'base64'), ALG, true, [
    'sign',
  ])) as CryptoKey;
}

const serial = () =>
  Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

/** A new self-signed CA. */
export async function createCA(commonName: string, days = 3650): Promise<KeyPair> {
  const x509 = await loadX509();
  const keys = await newKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: subjectString({ commonName }),
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + days * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKey(keys.privateKey) };
}

async function issue(
  ca: KeyPair,
  subject: SubjectInfo,
  usage: 'server' | 'client',
  opts: ServingOptions = {},
): Promise<KeyPair> {
  const x509 = await loadX509();
  const keys = await newKeys();
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await importKey(ca.keyPem);
  const now = Date.now();
  const extensions: X509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
      true,
    ),
    new x509.ExtendedKeyUsageExtension([
      usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
    ]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
  ];
  if (usage === 'server') {
    const names: X509.JsonGeneralName[] = [
      ...(opts.dnsNames ?? []).map((d) => ({ type: 'dns' as const, value: d })),
      ...(opts.ips ?? []).map((ip) => ({ type: 'ip' as const, value: ip })),
    ];
    if (names.length) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: subjectString(subject),
    issuer: caCert.subject,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + (opts.days ?? 365) * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions,
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKey(keys.privateKey) };
}

export const createServingCert = (ca: KeyPair, commonName: string, opts: ServingOptions) =>
  issue(ca, { commonName }, 'server', opts);

export const createClientCert = (ca: KeyPair, subject: SubjectInfo, days = 365) =>
  issue(ca, subject, 'client', { days });

function writeSecret(path: string, data: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data, { mode: 0o600 });
}

/** Loads dir/name.crt + dir/name.key, or creates and writes them with make(). */
export async function loadOrCreate(
  dir: string,
  name: string,
  make: () => Promise<KeyPair>,
): Promise<KeyPair & { certFile: string; keyFile: string }> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  if (existsSync(certFile) && existsSync(keyFile)) {
    return {
      certPem: readFileSync(certFile, 'utf8'),
      keyPem: readFileSync(keyFile, 'utf8'),
      certFile,
      keyFile,
    };
  }
  const kp = await make();
  writeSecret(keyFile, kp.keyPem);
  writeSecret(certFile, kp.certPem);
  return { ...kp, certFile, keyFile };
}

/** True when the certificate in PEM covers every given DNS name and IP. */
export function certCovers(certPem: string, dnsNames: string[], ips: string[]): boolean {
  try {
    const c = new X509Certificate(certPem);
    if (Date.parse(c.validTo) < Date.now() + DAY) return false;
    return (
      dnsNames.every((d) => c.checkHost(d) !== undefined) && ips.every((ip) => c.checkIP(ip) !== undefined)
    );
  } catch {
    return false;
  }
}

/** Whether caPem issued certPem (its issuer and signature). */
export function signedBy(certPem: string, caPem: string): boolean {
  try {
    const c = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    return c.checkIssued(ca) && c.verify(ca.publicKey);
  } catch {
    return false;
  }
}

/** Subject CN and O values of a certificate (client identities). */
export function subjectOf(cert: { subject: string | Record<string, string | string[]> }): SubjectInfo {
  const s = cert.subject;
  if (typeof s === 'string') {
    const cn = /(?:^|\n)CN=([^\n]*)/.exec(s)?.[1] ?? '';
    const orgs = [...s.matchAll(/(?:^|\n)O=([^\n]*)/g)].map((m) => m[1]);
    return { commonName: cn, organizations: orgs };
  }
  const toList = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  return { commonName: toList(s.CN)[0] ?? '', organizations: toList(s.O) };
}

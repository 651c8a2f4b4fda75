// Certificates for tkube's own use: a cluster CA, serving certificates
// (apiserver, nodeagent) and client certificates (admin kubeconfig), ECDSA
// P-256 keys from node:crypto, the certificates built by shared/pki/x509.ts.
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { issuerFrom, selfSigned, signed, type Name } from './x509';

const DAY = 24 * 3600 * 1000;
/** Back-dated an hour: a peer whose clock is a little behind still accepts a new certificate. */
const SKEW = 3600_000;

export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export type SubjectInfo = Name;

export interface ServingOptions {
  dnsNames?: string[];
  ips?: string[];
  days?: number;
}

function newKeys() {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

const pkcs8 = (k: ReturnType<typeof newKeys>['privateKey']) =>
  k.export({ type: 'pkcs8', format: 'pem' }) as string;

/** A new self-signed CA. */
export async function createCA(commonName: string, days = 3650): Promise<KeyPair> {
  const { publicKey, privateKey } = newKeys();
  const now = Date.now();
  const certPem = selfSigned(
    {
      subject: { commonName },
      notBefore: new Date(now - SKEW),
      notAfter: new Date(now + days * DAY),
      publicKey,
      isCA: true,
      keyUsage: ['digitalSignature', 'keyCertSign', 'cRLSign'],
    },
    privateKey,
  );
  return { certPem, keyPem: pkcs8(privateKey) };
}

/** A leaf signed by ca: its key may be EC or RSA (a CA from disk), in PKCS#8, SEC1 or PKCS#1 PEM. */
async function issue(
  ca: KeyPair,
  subject: SubjectInfo,
  usage: 'server' | 'client',
  opts: ServingOptions = {},
): Promise<KeyPair> {
  const issuer = issuerFrom(ca.certPem, createPrivateKey(ca.keyPem));
  const { publicKey, privateKey } = newKeys();
  const now = Date.now();
  const certPem = signed(
    {
      subject,
      notBefore: new Date(now - SKEW),
      notAfter: new Date(now + (opts.days ?? 365) * DAY),
      publicKey,
      isCA: false,
      keyUsage: ['digitalSignature', 'keyEncipherment'],
      extKeyUsage: [usage === 'server' ? 'serverAuth' : 'clientAuth'],
      ...(usage === 'server' ? { dnsNames: opts.dnsNames, ips: opts.ips } : {}),
    },
    issuer,
  );
  return { certPem, keyPem: pkcs8(privateKey) };
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

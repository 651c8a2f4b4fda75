// Service-account keys: the signing key (--service-account-signing-key-file),
// the verification keys (--service-account-key-file: PEM public or private
// keys, or certificates), and the pair tkube generates into --cert-dir
// (sa.key / sa.pub) so tokens work out of the box.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  X509Certificate,
  type KeyObject,
} from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keyID } from '../authn/jwt';

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;

/** Public keys of every PEM block of a file. */
export function publicKeysFromPEM(pem: string, source = 'key file'): KeyObject[] {
  const keys: KeyObject[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const block = m[0];
    const type = m[1];
    if (type === 'CERTIFICATE') keys.push(new X509Certificate(block).publicKey);
    else if (type.endsWith('PRIVATE KEY')) keys.push(createPublicKey(createPrivateKey(block)));
    else if (type.endsWith('PUBLIC KEY')) keys.push(createPublicKey(block));
  }
  if (!keys.length) throw new Error(`data does not contain any valid RSA or ECDSA public keys (${source})`);
  return keys;
}

export function loadPublicKeys(files: string[]): KeyObject[] {
  return files.flatMap((f) => publicKeysFromPEM(readFileSync(f, 'utf8'), f));
}

export function loadPrivateKey(file: string): KeyObject {
  const pem = readFileSync(file, 'utf8');
  for (const m of pem.matchAll(PEM_BLOCK)) if (m[1].endsWith('PRIVATE KEY')) return createPrivateKey(m[0]);
  throw new Error(`failed to parse service-account signing key file ${file}: no private key`);
}

/** sa.key (RSA 2048, PKCS#1) and sa.pub in the cert dir, created once. */
export function ensureGeneratedKeyPair(certDir: string): { keyFile: string; pubFile: string } {
  const keyFile = join(certDir, 'sa.key');
  const pubFile = join(certDir, 'sa.pub');
  if (!existsSync(keyFile)) {
    mkdirSync(certDir, { recursive: true });
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(keyFile, privateKey.export({ type: 'pkcs1', format: 'pem' }) as string, { mode: 0o600 });
    writeFileSync(pubFile, publicKey.export({ type: 'spki', format: 'pem' }) as string, { mode: 0o644 });
  } else if (!existsSync(pubFile)) {
    writeFileSync(
      pubFile,
      createPublicKey(loadPrivateKey(keyFile)).export({ type: 'spki', format: 'pem' }) as string,
    );
  }
  return { keyFile, pubFile };
}

/** Public keys without duplicates (by key id). */
export function uniqueKeys(keys: KeyObject[]): KeyObject[] {
  const seen = new Set<string>();
  return keys.filter((k) => {
    const id = keyID(k);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

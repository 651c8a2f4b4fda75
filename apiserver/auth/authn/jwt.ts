// JSON Web Tokens with node:crypto: compact JWS parsing, RS/PS/ES signatures,
// key ids (base64url SHA-256 of the public key's DER, as kube-apiserver
// computes them) and JWK export/import.
import {
  constants,
  createHash,
  createPublicKey,
  sign as cryptoSign,
  verify as cryptoVerify,
  type JsonWebKey,
  type KeyObject,
} from 'node:crypto';

export interface ParsedJWT {
  header: Record<string, any>;
  payload: Record<string, any>;
  signingInput: string;
  signature: Buffer;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeJSON(part: string): any {
  if (!B64URL.test(part)) return undefined;
  try {
    const v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A compact JWS with JSON header and payload, or null when the token is not one. */
export function parseJWT(token: string): ParsedJWT | null {
  const parts = token.split('.');
  if (parts.length !== 3 || !B64URL.test(parts[2])) return null;
  const header = decodeJSON(parts[0]);
  const payload = decodeJSON(parts[1]);
  if (!header || !payload || typeof header.alg !== 'string') return null;
  return {
    header,
    payload,
    signingInput: `${parts[0]}.${parts[1]}`,
    signature: Buffer.from(parts[2], 'base64url'),
  };
}

interface AlgSpec {
  hash: string;
  kind: 'rsa' | 'pss' | 'ec';
  curve?: string;
}

export const ALGORITHMS: Record<string, AlgSpec> = {
  RS256: { hash: 'sha256', kind: 'rsa' },
  RS384: { hash: 'sha384', kind: 'rsa' },
  RS512: { hash: 'sha512', kind: 'rsa' },
  PS256: { hash: 'sha256', kind: 'pss' },
  PS384: { hash: 'sha384', kind: 'pss' },
  PS512: { hash: 'sha512', kind: 'pss' },
  ES256: { hash: 'sha256', kind: 'ec', curve: 'prime256v1' },
  ES384: { hash: 'sha384', kind: 'ec', curve: 'secp384r1' },
  ES512: { hash: 'sha512', kind: 'ec', curve: 'secp521r1' },
};

const DIGEST_BYTES: Record<string, number> = { sha256: 32, sha384: 48, sha512: 64 };

function keyFits(key: KeyObject, a: AlgSpec): boolean {
  const t = key.asymmetricKeyType;
  if (a.kind === 'ec') return t === 'ec' && key.asymmetricKeyDetails?.namedCurve === a.curve;
  return t === 'rsa' || (a.kind === 'pss' && t === 'rsa-pss');
}

/** Whether the token's signature verifies with the key under its header's algorithm. */
export function verifyJWS(jwt: ParsedJWT, key: KeyObject): boolean {
  const a = ALGORITHMS[jwt.header.alg];
  if (!a || !keyFits(key, a)) return false;
  const data = Buffer.from(jwt.signingInput);
  try {
    if (a.kind === 'ec') return cryptoVerify(a.hash, data, { key, dsaEncoding: 'ieee-p1363' }, jwt.signature);
    if (a.kind === 'pss')
      return cryptoVerify(
        a.hash,
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: DIGEST_BYTES[a.hash] },
        jwt.signature,
      );
    return cryptoVerify(a.hash, data, key, jwt.signature);
  } catch {
    return false;
  }
}

/** The signing algorithm kube-apiserver uses for a key: RS256 for RSA, ES256/384/512 by curve. */
export function algorithmFor(key: KeyObject): string {
  if (key.asymmetricKeyType === 'ec') {
    switch (key.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return 'ES256';
      case 'secp384r1':
        return 'ES384';
      case 'secp521r1':
        return 'ES512';
    }
    throw new Error(`unsupported elliptic curve ${key.asymmetricKeyDetails?.namedCurve}`);
  }
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  throw new Error(`unsupported key type ${key.asymmetricKeyType}`);
}

/** JSON with object keys sorted at every level (Go's encoding of merged claim maps). */
export function sortedJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJSON).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJSON(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function signJWS(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: KeyObject,
): string {
  const a = ALGORITHMS[String(header.alg)];
  if (!a) throw new Error(`unsupported algorithm ${String(header.alg)}`);
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(sortedJSON(payload)).toString('base64url')}`;
  const data = Buffer.from(input);
  const sig =
    a.kind === 'ec'
      ? cryptoSign(a.hash, data, { key, dsaEncoding: 'ieee-p1363' })
      : a.kind === 'pss'
        ? cryptoSign(a.hash, data, {
            key,
            padding: constants.RSA_PKCS1_PSS_PADDING,
            saltLength: DIGEST_BYTES[a.hash],
          })
        : cryptoSign(a.hash, data, key);
  return `${input}.${sig.toString('base64url')}`;
}

/** base64url(SHA-256(DER of the public key)). */
export function keyID(pub: KeyObject): string {
  const der = pub.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(der).digest('base64url');
}

/** The public JWK a JWKS document lists. */
export function publicJWK(pub: KeyObject): Record<string, unknown> {
  const jwk = pub.export({ format: 'jwk' }) as JsonWebKey;
  const base = { use: 'sig', kty: jwk.kty, kid: keyID(pub), alg: algorithmFor(pub) };
  if (jwk.kty === 'EC') return { ...base, crv: jwk.crv, x: jwk.x, y: jwk.y };
  return { ...base, n: jwk.n, e: jwk.e };
}

/** A public key from a JWK (OIDC providers' key sets); null when unusable. */
export function keyFromJWK(jwk: any): KeyObject | null {
  try {
    if (jwk?.use && jwk.use !== 'sig') return null;
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    return null;
  }
}

/** The audiences of an "aud" claim (string or list). */
export function audiencesOf(aud: unknown): string[] {
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === 'string');
  return [];
}

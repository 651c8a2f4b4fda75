// Service-account issuer discovery: /.well-known/openid-configuration and
// /openid/v1/jwks, so relying parties can verify our tokens. Served when the
// issuer is an https URL (or --service-account-jwks-uri is set).
import type { KeyObject } from 'node:crypto';
import { send } from '../../server/http';
import type { Route } from '../types';
import { publicJWK, algorithmFor } from '../authn/jwt';

export const OPENID_CONFIG_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';

export interface DiscoveryOptions {
  issuer: string;
  jwksURI?: string;
  keys: KeyObject[];
}

/** The discovery document, or null when the issuer cannot be published. */
export function discoveryDocument(o: DiscoveryOptions): Record<string, unknown> | null {
  let issuerURL: URL;
  try {
    issuerURL = new URL(o.issuer);
  } catch {
    return null;
  }
  if (issuerURL.protocol !== 'https:') return null;
  let jwks = o.jwksURI;
  if (!jwks) jwks = new URL(JWKS_PATH, issuerURL).toString();
  const algs = [...new Set(o.keys.map(algorithmFor))].sort();
  return {
    issuer: o.issuer,
    jwks_uri: jwks,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs,
  };
}

export function discoveryRoutes(o: DiscoveryOptions): Route[] {
  const doc = discoveryDocument(o);
  if (!doc) return [];
  const config = JSON.stringify(doc);
  const jwks = JSON.stringify({ keys: o.keys.map(publicJWK) });
  const headers = { 'cache-control': 'public, max-age=3600' };
  return [
    async (req, res, path) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      const p = path.length > 1 ? path.replace(/\/$/, '') : path;
      if (p === OPENID_CONFIG_PATH) {
        send(res, 200, 'application/json', config, headers);
        return true;
      }
      if (p === JWKS_PATH) {
        send(res, 200, 'application/jwk-set+json', jwks, headers);
        return true;
      }
      return false;
    },
  ];
}

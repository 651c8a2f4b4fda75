// Service accounts from the flags: issuers, signing and verification keys,
// API audiences; the token authenticator, the TokenRequest subresource and the
// issuer discovery routes.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { logger } from '../../../shared/log';
import type { ResourceBehaviour } from '../../registry/registry';
import type { Route, SecurityDeps } from '../types';
import {
  ensureGeneratedKeyPair,
  loadPrivateKey,
  loadPublicKeys,
  publicKeysFromPEM,
  uniqueKeys,
} from './keys';
import { ServiceAccountTokenAuthenticator, TokenIssuer } from './tokens';
import { tokenRequestSubresource } from './token-request';
import { discoveryRoutes } from './discovery';

const log = logger('auth/serviceaccount');

export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface ServiceAccounts {
  issuers: string[];
  apiAudiences: string[];
  issuer?: TokenIssuer;
  /** Undefined when no verification key is known (service-account tokens disabled). */
  authenticator?: ServiceAccountTokenAuthenticator;
  behaviours: Record<string, ResourceBehaviour>;
  routes: Route[];
}

export function buildServiceAccounts(deps: SecurityDeps): ServiceAccounts {
  const v = deps.values;
  let issuers: string[] = ((v.serviceAccountIssuer as string[] | undefined) ?? []).filter(Boolean);
  let signingKeyFile = v.serviceAccountSigningKeyFile as string | undefined;
  let keyFiles: string[] = ((v.serviceAccountKeyFile as string[] | undefined) ?? []).filter(Boolean);
  const generatedTLS = !!deps.tls.clusterCA;

  // tkube generated the cluster's certificates: generate the service-account key pair too.
  if (generatedTLS && !signingKeyFile && v.certDir) {
    signingKeyFile = ensureGeneratedKeyPair(v.certDir as string).keyFile;
    if (!issuers.length) issuers = [DEFAULT_ISSUER];
  }

  const verification: KeyObject[] = [];
  if (keyFiles.length) verification.push(...loadPublicKeys(keyFiles));
  else if (v.tlsPrivateKeyFile) {
    keyFiles = [v.tlsPrivateKeyFile as string];
    try {
      verification.push(...loadPublicKeys(keyFiles));
    } catch {
      log.warn('No TLS key provided, service account token authentication disabled');
    }
  } else if (deps.tls.keyPem) {
    try {
      verification.push(...publicKeysFromPEM(deps.tls.keyPem, 'TLS key'));
    } catch {
      // the serving key is not usable for tokens
    }
  }

  let issuer: TokenIssuer | undefined;
  if (signingKeyFile && issuers.length) {
    const key = loadPrivateKey(signingKeyFile);
    const pub = createPublicKey(key);
    verification.push(pub);
    issuer = new TokenIssuer(key, pub, issuers[0]);
  } else if (issuers.length && !signingKeyFile) {
    log.warn('--service-account-signing-key-file is not set: the TokenRequest API is disabled');
  }

  const apiAudiences: string[] = (v.apiAudiences as string[] | undefined)?.length
    ? (v.apiAudiences as string[])
    : [...issuers];
  const keys = uniqueKeys(verification);

  const behaviours: Record<string, ResourceBehaviour> = {};
  let routes: Route[] = [];
  if (issuer) {
    behaviours['/serviceaccounts'] = {
      subresources: {
        token: {
          custom: tokenRequestSubresource({
            issuer,
            apiAudiences,
            maxExpirationSeconds: Math.floor(((v.serviceAccountMaxTokenExpiration as number) ?? 0) / 1000),
            extendExpiration: v.serviceAccountExtendTokenExpiration !== false,
            registry: deps.registry,
          }),
        },
      },
    };
    routes = discoveryRoutes({
      issuer: issuer.issuer,
      jwksURI: (v.serviceAccountJwksUri as string | undefined) || undefined,
      keys,
    });
  }

  const authenticator = keys.length
    ? new ServiceAccountTokenAuthenticator({
        issuers,
        keys,
        apiAudiences,
        lookup: v.serviceAccountLookup !== false,
        registry: deps.registry,
      })
    : undefined;
  return { issuers, apiAudiences, issuer, authenticator, behaviours, routes };
}

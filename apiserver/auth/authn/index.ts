// Authentication from the flags, in kube-apiserver's order: front proxy
// (--requestheader-*), client certificates, then bearer tokens (static file,
// service accounts, bootstrap tokens, OIDC, webhook), then anonymous.
import { readFileSync } from 'node:fs';
import type { SecurityDeps, Route, PostStartHook } from '../types';
import type { ResourceBehaviour } from '../../registry/registry';
import {
  AuthenticatorChain,
  BearerTokenAuthenticator,
  TokenUnion,
  audienceAgnostic,
  type RequestAuthenticator,
  type TokenAuthenticator,
} from './authenticator';
import { CertPool, RequestHeaderAuthenticator, X509Authenticator } from './x509';
import { TokenFileAuthenticator } from './token-file';
import { LoopbackTokenAuthenticator } from './loopback';
import { BootstrapTokenAuthenticator } from './bootstrap-token';
import { OIDCAuthenticator } from './oidc';
import { WebhookTokenAuthenticator } from './webhook';
import { buildServiceAccounts } from '../serviceaccount';
import { authenticationReviews } from '../reviews/authentication';
import { logger } from '../../../shared/log';

const log = logger('auth/authn');

export interface Authentication {
  authenticator: AuthenticatorChain;
  routes: Route[];
  behaviours: Record<string, ResourceBehaviour>;
  postStartHooks: PostStartHook[];
  /** The bearer-token authenticators (TokenReview uses them). */
  tokens?: TokenUnion;
  /** The bearer token of the apiserver's own loopback client (system:apiserver, system:masters). */
  loopbackToken: string;
  stop?(): Promise<void>;
}

const list = (v: unknown): string[] => ((v as string[] | undefined) ?? []).filter(Boolean);

export async function buildAuthentication(deps: SecurityDeps): Promise<Authentication> {
  const v = deps.values;
  const methods: RequestAuthenticator[] = [];
  const closers: (() => void)[] = [];
  const sa = buildServiceAccounts(deps);
  const apiAudiences = sa.apiAudiences;

  let proxy: RequestHeaderAuthenticator | undefined;
  if (v.requestheaderClientCaFile) {
    proxy = new RequestHeaderAuthenticator({
      pool: new CertPool(readFileSync(v.requestheaderClientCaFile as string, 'utf8')),
      allowedNames: list(v.requestheaderAllowedNames),
      usernameHeaders: list(v.requestheaderUsernameHeaders),
      uidHeaders: list(v.requestheaderUidHeaders),
      groupHeaders: list(v.requestheaderGroupHeaders),
      extraPrefixes: list(v.requestheaderExtraHeadersPrefix),
    });
    methods.push(proxy);
  }
  if (deps.tls.clientCaPem) methods.push(new X509Authenticator(new CertPool(deps.tls.clientCaPem), proxy));

  // First, as kube-apiserver puts it in front of every other authenticator.
  const loopback = new LoopbackTokenAuthenticator();
  const tokens: TokenAuthenticator[] = [loopback];
  if (v.tokenAuthFile)
    tokens.push(audienceAgnostic(new TokenFileAuthenticator(v.tokenAuthFile as string), apiAudiences));
  if (sa.authenticator) tokens.push(sa.authenticator);
  if (v.enableBootstrapTokenAuth)
    tokens.push(audienceAgnostic(new BootstrapTokenAuthenticator(deps.registry), apiAudiences));
  if (v.oidcIssuerUrl) {
    const oidc = new OIDCAuthenticator({
      issuerURL: v.oidcIssuerUrl as string,
      clientID: (v.oidcClientId as string) ?? '',
      caPem: v.oidcCaFile ? readFileSync(v.oidcCaFile as string, 'utf8') : undefined,
      usernameClaim: (v.oidcUsernameClaim as string) || 'sub',
      usernamePrefix: v.oidcUsernamePrefix as string | undefined,
      groupsClaim: (v.oidcGroupsClaim as string) || undefined,
      groupsPrefix: (v.oidcGroupsPrefix as string) || undefined,
      requiredClaims: (v.oidcRequiredClaim as Record<string, string> | undefined) ?? {},
      signingAlgs: list(v.oidcSigningAlgs).length ? list(v.oidcSigningAlgs) : ['RS256'],
    });
    void oidc.init();
    closers.push(() => oidc.stop());
    tokens.push(audienceAgnostic(oidc, apiAudiences));
  }
  if (v.authenticationTokenWebhookConfigFile) {
    const webhook = new WebhookTokenAuthenticator({
      configFile: v.authenticationTokenWebhookConfigFile as string,
      version: (v.authenticationTokenWebhookVersion as 'v1' | 'v1beta1') ?? 'v1beta1',
      cacheTTLMs: (v.authenticationTokenWebhookCacheTtl as number) ?? 120_000,
      implicitAudiences: apiAudiences,
    });
    closers.push(() => webhook.close());
    tokens.push(webhook);
  }
  const union = new TokenUnion(tokens);
  methods.push(new BearerTokenAuthenticator(union));

  // kube-apiserver stomps --anonymous-auth to false when AlwaysAllow is among the authorization modes.
  let anonymous = v.anonymousAuth !== false;
  if (anonymous && list(v.authorizationMode).includes('AlwaysAllow')) {
    log.warn(
      'AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer',
    );
    anonymous = false;
  }

  return {
    authenticator: new AuthenticatorChain(methods, anonymous, apiAudiences),
    routes: sa.routes,
    behaviours: {
      ...sa.behaviours,
      ...authenticationReviews({ tokens: () => union, apiAudiences }),
    },
    postStartHooks: [],
    tokens: union,
    loopbackToken: loopback.token,
    async stop() {
      for (const c of closers) c();
    },
  };
}

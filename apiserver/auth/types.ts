// The security bundle the server is built with (authentication, impersonation,
// authorization, admission, audit, transport rules), and what each part gets
// to build itself. apiserver/auth/index.ts composes it from the parts.
import type { SecureServerOptions } from 'node:http2';
import type { FlagValues } from '../../shared/options/flags';
import type { UserInfo } from '../registry/context';
import type { Registry, ResourceBehaviour } from '../registry/registry';
import type { Storage } from '../storage/interface';
import type { RequestInfo } from '../endpoints/request-info';
import type { Req, Res } from '../server/http';
import type { ServingTLS } from '../server/tls';
import type { AdmissionChain } from './admission/types';
import type { WebhookServiceResolver } from '../aggregator/service-resolver';

export interface SecurityDeps {
  values: FlagValues;
  tls: ServingTLS;
  storage: Storage;
  /** Late-bound: the registry exists once behaviours are collected. */
  registry(): Registry;
  /** Where admission webhooks given as a Service are reached. */
  services: WebhookServiceResolver;
}

/** A non-resource route: returns true when it answered. */
export type Route = (
  req: Req,
  res: Res,
  path: string,
  query: URLSearchParams,
  user: UserInfo,
) => Promise<boolean>;

export interface PostStartHook {
  name: string;
  run(): Promise<void>;
}

/** One request's audit record, from RequestReceived to ResponseComplete. */
export interface AuditHandle {
  /** Annotations added while serving (k8s.io/deprecated ...): the request context writes here. */
  annotations: Record<string, string>;
  /** The user is known (after authentication/impersonation). */
  setUser(user: UserInfo, impersonated?: UserInfo): void;
  /** The request ended (status written or connection closed). */
  end(status: number): void;
}

export interface Auditor {
  /** user: the authenticated user (the policy matches on it, before impersonation). */
  begin(req: Req, res: Res, info: RequestInfo, user?: UserInfo): AuditHandle;
  stop(): Promise<void>;
}

export interface Security {
  authenticate(req: Req): Promise<UserInfo>;
  /** The in-memory bearer token of the apiserver's loopback client (system:apiserver). */
  loopbackToken: string;
  /** Applies Impersonate-* headers (authorizing the impersonation); returns the effective user. */
  impersonate(req: Req, user: UserInfo, info: RequestInfo): Promise<UserInfo>;
  /** Throws a 403 StatusError when the user may not make the request. */
  authorize(user: UserInfo, info: RequestInfo, req: Req): Promise<void>;
  admission: AdmissionChain;
  auditor?: Auditor;
  /** HSTS, CORS: runs first; returns true when it answered (a CORS preflight). */
  httpFilter?(req: Req, res: Res): boolean;
  /** TLS options of the listener (min version, cipher suites, SNI certificates). */
  tlsOptions?: Partial<SecureServerOptions>;
  routes: Route[];
  /** Behaviours keyed "group/resource" (virtual review resources, serviceaccounts/token ...). */
  behaviours: Record<string, ResourceBehaviour>;
  postStartHooks: PostStartHook[];
  stop(): Promise<void>;
}

// Delegated authentication of an extension apiserver (k8s.io/apiserver's
// requestheader authenticator): a caller's X-Remote-* headers are believed only
// when it presents a client certificate verified by the requestheader CA that
// kube-system/extension-apiserver-authentication publishes, with an allowed
// name; the header names are the ones that ConfigMap lists.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  userFromRequestHeaders,
  type HeaderUser,
  type RequestHeaderNames,
} from '../shared/auth/request-headers';

export interface RequestHeaderConfig extends RequestHeaderNames {
  caPem: string;
  allowedNames: string[];
}

const list = (s: string | undefined): string[] => (s ? JSON.parse(s) : []);

/** The front-proxy settings from the ConfigMap's data. */
export function requestHeaderConfigFrom(data: Record<string, string>): RequestHeaderConfig {
  return {
    caPem: data['requestheader-client-ca-file'] ?? '',
    allowedNames: list(data['requestheader-allowed-names']),
    usernameHeaders: list(data['requestheader-username-headers']),
    uidHeaders: list(data['requestheader-uid-headers']),
    groupHeaders: list(data['requestheader-group-headers']),
    extraPrefixes: list(data['requestheader-extra-headers-prefix']),
  };
}

export type Caller = HeaderUser;

/** The user the front proxy names, or undefined when the caller is not a trusted proxy. */
export function callerOf(req: IncomingMessage, cfg: RequestHeaderConfig): Caller | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const cn = socket.getPeerCertificate()?.subject?.CN;
  if (cfg.allowedNames.length && !cfg.allowedNames.includes(String(cn))) return undefined;
  return userFromRequestHeaders(req.rawHeaders, cfg);
}

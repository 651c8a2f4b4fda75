// Delegated authentication of an extension apiserver (k8s.io/apiserver's
// requestheader authenticator): a caller's X-Remote-* headers are believed only
// when it presents a client certificate verified by the requestheader CA that
// kube-system/extension-apiserver-authentication publishes, with an allowed
// name; the header names are the ones that ConfigMap lists.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

export interface RequestHeaderConfig {
  caPem: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraPrefixes: string[];
}

const list = (s: string | undefined): string[] => (s ? JSON.parse(s) : []);

/** The front-proxy settings from the ConfigMap's data. */
export function requestHeaderConfigFrom(data: Record<string, string>): RequestHeaderConfig {
  return {
    caPem: data['requestheader-client-ca-file'] ?? '',
    allowedNames: list(data['requestheader-allowed-names']),
    usernameHeaders: list(data['requestheader-username-headers']),
    groupHeaders: list(data['requestheader-group-headers']),
    extraPrefixes: list(data['requestheader-extra-headers-prefix']),
  };
}

export interface Caller {
  name: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The user the front proxy names, or undefined when the caller is not a trusted proxy. */
export function callerOf(req: IncomingMessage, cfg: RequestHeaderConfig): Caller | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const cn = socket.getPeerCertificate()?.subject?.CN;
  if (cfg.allowedNames.length && !cfg.allowedNames.includes(String(cn))) return undefined;
  const values = (h: string): string[] => req.headersDistinct[h.toLowerCase()] ?? [];
  const name = cfg.usernameHeaders.map((h) => values(h)[0]).find(Boolean);
  if (!name) return undefined;
  const groups = cfg.groupHeaders.flatMap(values);
  const extra: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(req.headersDistinct)) {
    const p = cfg.extraPrefixes.find((x) => k.startsWith(x.toLowerCase()));
    if (p && v) extra[decodeURIComponent(k.slice(p.length)).toLowerCase()] = v;
  }
  return { name, groups, extra };
}

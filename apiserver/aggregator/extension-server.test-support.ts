// An extension apiserver for tests, as k8s.io/apiserver's delegated
// authentication builds one: HTTPS on 127.0.0.1, it trusts a caller's
// X-Remote-* headers only when the caller presents a client certificate
// verified by the requestheader CA of kube-system/extension-apiserver-authentication
// (with an allowed name), using the header names that ConfigMap lists.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';

export interface AuthConfig {
  caPem: string;
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraPrefixes: string[];
}

/** The front-proxy settings an extension server reads from the ConfigMap's data. */
export function authConfigFrom(data: Record<string, string>): AuthConfig {
  return {
    caPem: data['requestheader-client-ca-file'],
    allowedNames: JSON.parse(data['requestheader-allowed-names'] ?? '[]'),
    usernameHeaders: JSON.parse(data['requestheader-username-headers'] ?? '[]'),
    groupHeaders: JSON.parse(data['requestheader-group-headers'] ?? '[]'),
    extraPrefixes: JSON.parse(data['requestheader-extra-headers-prefix'] ?? '[]'),
  };
}

export interface CallerInfo {
  name: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/** The user the front proxy named, or undefined when the caller is not a trusted proxy. */
export function callerOf(req: IncomingMessage, auth: AuthConfig): CallerInfo | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const cn = socket.getPeerCertificate()?.subject?.CN;
  if (auth.allowedNames.length && !auth.allowedNames.includes(String(cn))) return undefined;
  const values = (h: string): string[] => {
    const v = req.headersDistinct[h.toLowerCase()];
    return v ? v.flatMap((x) => x.split(',').map((s) => s.trim())) : [];
  };
  const name = auth.usernameHeaders.map((h) => values(h)[0]).find(Boolean);
  if (!name) return undefined;
  const groups = auth.groupHeaders.flatMap(values);
  const extra: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(req.headersDistinct)) {
    const p = auth.extraPrefixes.find((x) => k.startsWith(x.toLowerCase()));
    if (p && v) extra[decodeURIComponent(k.slice(p.length))] = v;
  }
  return { name, groups, extra };
}

export type Handler = (req: IncomingMessage, res: ServerResponse, caller: CallerInfo) => void;

export interface ExtensionServer {
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1; untrusted callers get 401 as a Status. */
export async function startExtensionServer(
  tls: { certPem: string; keyPem: string },
  auth: AuthConfig,
  handler: Handler,
): Promise<ExtensionServer> {
  const server = createServer(
    { cert: tls.certPem, key: tls.keyPem, ca: auth.caPem, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      const caller = callerOf(req, auth);
      if (!caller) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: 'Unauthorized',
            reason: 'Unauthorized',
            code: 401,
          }),
        );
        return;
      }
      handler(req, res, caller);
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

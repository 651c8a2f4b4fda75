// An extension apiserver for tests, as k8s.io/apiserver's delegated
// authentication builds one: HTTPS on 127.0.0.1, it trusts a caller's
// X-Remote-* headers only when the caller presents a client certificate
// verified by the requestheader CA of kube-system/extension-apiserver-authentication
// (with an allowed name), using the header names that ConfigMap lists.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  callerOf,
  requestHeaderConfigFrom,
  type Caller,
  type RequestHeaderConfig,
} from '../../metrics-server/requestheader';

export const authConfigFrom = requestHeaderConfigFrom;
export type AuthConfig = RequestHeaderConfig;
export type CallerInfo = Caller;

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

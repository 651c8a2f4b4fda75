// The upgrade-aware proxy of the connect subresources (kube-apiserver's
// UpgradeAwareHandler): an upgrade request is sent on to the upstream with the
// client's headers (less its credentials), and the upstream's answer — a 101
// followed by the spliced connection, or an error response — goes back as it came.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { StatusError } from '../../../shared/api/status';
import {
  dialUpgrade,
  readRest,
  splice,
  type UpgradeResponse,
  type UpgradeTarget,
} from '../../../shared/streaming/upgrade';
import type { Upgrade } from '../../server/http';
import type { Scope } from '../scope';

// Headers that describe the client's own connection or identity: never sent on.
const DROPPED = new Set(['host', 'authorization', 'proxy-authorization', 'keep-alive', 'te', 'trailer']);

/** The client's request headers as the node agent gets them (X-Forwarded-For appended). */
export function forwardedHeaders(req: IncomingMessage): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const k = req.rawHeaders[i];
    const l = k.toLowerCase();
    if (DROPPED.has(l) || l.startsWith('impersonate-') || l === 'x-forwarded-for') continue;
    out.push([k, req.rawHeaders[i + 1]]);
  }
  const prior = req.headers['x-forwarded-for'];
  const ip = req.socket.remoteAddress ?? '';
  out.push(['X-Forwarded-For', prior ? `${String(prior)}, ${ip}` : ip]);
  return out;
}

/** The node agent could not be reached: Kubernetes' "error dialing backend" (500, no reason). */
export function dialFailed(e: Error): StatusError {
  return new StatusError(500, '', `error dialing backend: ${e.message}`);
}

/** From here on the handler owns the socket: the response object must not write to it. */
export function takeOver(s: Scope, status: number): void {
  const res = s.res as ServerResponse;
  res.statusCode = status;
  if (res.socket) res.detachSocket(res.socket);
}

/** Answers the upgrade as a WebSocket with the given subprotocol ("": none) and takes the socket over. */
export async function acceptWebSocket(s: Scope, up: Upgrade, protocol: string): Promise<WebSocket> {
  takeOver(s, 101);
  // ws is loaded by the first WebSocket, not at the apiserver's start; the socket buffers meanwhile.
  const { WebSocketServer } = await import('ws');
  const server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: () => protocol || false,
  });
  return new Promise((resolve) =>
    server.handleUpgrade(s.req as IncomingMessage, up.socket, up.head, (ws) => resolve(ws)),
  );
}

/** Sends the upgrade on unchanged; the upstream's answer comes back as it is (also the proxy subresources'). */
export async function passThrough(s: Scope, loc: UpgradeTarget, up: Upgrade): Promise<void> {
  const req = s.req as IncomingMessage;
  let r: UpgradeResponse;
  try {
    r = await dialUpgrade(loc, req.method ?? 'GET', forwardedHeaders(req), s.ctx.signal);
  } catch (e) {
    throw dialFailed(e as Error);
  }
  if (r.statusCode === 101) {
    takeOver(s, 101);
    up.socket.write(r.rawHead);
    if (r.rest.length) up.socket.write(r.rest);
    if (up.head.length) r.socket.write(up.head);
    await splice(up.socket, r.socket);
    return;
  }
  return relayFailure(s, up, r);
}

/** A refused upgrade: an error response is copied to the client; anything else is a 500. */
export async function relayFailure(s: Scope, up: Upgrade, r: UpgradeResponse): Promise<void> {
  if (r.statusCode < 400) {
    r.socket.destroy();
    throw new StatusError(500, '', `invalid upgrade response: status code ${r.statusCode}`);
  }
  const body = await readRest(r);
  takeOver(s, r.statusCode);
  up.socket.end(Buffer.concat([r.rawHead, body]));
}

// pods/exec, pods/attach and pods/portforward: the upgrade-aware proxy to the
// node agent, as kube-apiserver's. A SPDY/3.1 upgrade is passed through byte
// for byte (the node agent's 101, or its error response, goes back as it came);
// WebSocket upgrades are served here and spoken to the node agent as SPDY:
// the remote-command channel protocols (v5/v4/base64 ... channel.k8s.io) and
// WebSocket port-forwarding by translation, "SPDY/3.1+portforward.k8s.io" as a
// tunnel of the SPDY bytes in binary messages (kubectl's port-forward).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, StatusError } from '../../../shared/api/status';
import {
  dialUpgrade,
  readRest,
  splice,
  type UpgradeResponse,
  type UpgradeTarget,
} from '../../../shared/streaming/upgrade';
import type { Upgrade } from '../../server/http';
import type { Scope } from '../scope';
import { forwardPorts, streamBool, type StreamKind } from '../../registry/strategies/pod-stream';
import { translatePortForward, translateRemoteCommand, tunnelPortForward } from './stream-translator';

export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';
/** The remote-command WebSocket protocols served here, best first. */
export const REMOTE_COMMAND_WS_PROTOCOLS = [
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
];
/** WebSocket port-forward (the kubelet's protocols; the client's order decides). */
export const PORT_FORWARD_WS_PROTOCOLS = [
  'v4.channel.k8s.io',
  'v4.base64.channel.k8s.io',
  'channel.k8s.io',
  'base64.channel.k8s.io',
];

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

export const offeredProtocols = (req: IncomingMessage): string[] =>
  String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

const isWebSocket = (req: IncomingMessage) => String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';

/** From here on the handler owns the socket: the response object must not write to it. */
export function takeOver(s: Scope, status: number): void {
  const res = s.res as ServerResponse;
  res.statusCode = status;
  if (res.socket) res.detachSocket(res.socket);
}

export async function handleStream(
  s: Scope,
  loc: UpgradeTarget,
  up: Upgrade | undefined,
  kind: StreamKind,
): Promise<void> {
  const req = s.req as IncomingMessage;
  if (!up || !req.headers.upgrade) throw badRequest('Upgrade request required');
  if (isWebSocket(req)) {
    const offered = offeredProtocols(req);
    if (kind === 'portforward') {
      if (offered.includes(PORT_FORWARD_TUNNEL_PROTOCOL)) return tunnelPortForward(s, loc, up);
      const p = offered.find((x) => PORT_FORWARD_WS_PROTOCOLS.includes(x));
      if (p !== undefined || !offered.length) {
        const ports = forwardPorts(s.query);
        if (!ports.length) throw badRequest('query parameter "port" is required');
        return translatePortForward(s, loc, up, p ?? '', ports);
      }
    } else {
      const p = offered.find((x) => REMOTE_COMMAND_WS_PROTOCOLS.includes(x));
      if (p !== undefined || !offered.length)
        return translateRemoteCommand(s, loc, up, p ?? '', {
          stdin: streamBool(s.query.get('stdin')),
          stdout: streamBool(s.query.get('stdout')),
          stderr: streamBool(s.query.get('stderr')),
          tty: streamBool(s.query.get('tty')),
        });
    }
  }
  return passThrough(s, loc, up);
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

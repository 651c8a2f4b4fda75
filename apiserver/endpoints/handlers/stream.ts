// pods/exec, pods/attach and pods/portforward: the upgrade-aware proxy to the
// node agent, as kube-apiserver's. A SPDY/3.1 upgrade is passed through byte
// for byte (the node agent's 101, or its error response, goes back as it came);
// WebSocket upgrades are served here and spoken to the node agent as SPDY:
// the remote-command channel protocols (v5/v4/base64 ... channel.k8s.io) and
// WebSocket port-forwarding by translation, "SPDY/3.1+portforward.k8s.io" as a
// tunnel of the SPDY bytes in binary messages (kubectl's port-forward).
import type { IncomingMessage } from 'node:http';
import { badRequest } from '../../../shared/api/status';
import type { UpgradeTarget } from '../../../shared/streaming/upgrade';
import type { Upgrade } from '../../server/http';
import type { Scope } from '../scope';
import { forwardPorts, streamBool, type StreamKind } from '../../registry/strategies/pod-stream';
import {
  PORT_FORWARD_TUNNEL_PROTOCOL,
  translatePortForward,
  translateRemoteCommand,
  tunnelPortForward,
} from './stream-translator';
import { passThrough } from './upgrade';

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

export const offeredProtocols = (req: IncomingMessage): string[] =>
  String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);

const isWebSocket = (req: IncomingMessage) => String(req.headers.upgrade ?? '').toLowerCase() === 'websocket';

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

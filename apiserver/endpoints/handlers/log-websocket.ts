// pods/log to a WebSocket client (Kubernetes' StreamObject with wsstream's
// Reader): clients without SPDY (browsers, some language clients) upgrade
// GET .../pods/NAME/log to a WebSocket and get the log as messages. Protocols:
// "binary.k8s.io" (and none) send the bytes in binary messages,
// "base64.binary.k8s.io" in base64 text messages. An empty message comes
// first, then one message per chunk of at most 2048 bytes (the Reader's
// buffer), and a close (1000) when the log ends; what the client sends is
// ignored. The kubelet is asked first: its refusals answer the upgrade as
// plain HTTP errors, as in Kubernetes.
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';
import { writeRawResponse } from '../../../shared/streaming/upgrade';
import type { Req, Upgrade } from '../../server/http';
import type { Scope } from '../scope';
import { offeredProtocols } from './stream';
import { acceptWebSocket, takeOver } from './upgrade';
import type { AnswerSink } from './proxy';

/** wsstream.NewDefaultReaderProtocols: protocol → whether its messages are binary. */
const READER_PROTOCOLS: Record<string, boolean> = {
  '': true,
  'binary.k8s.io': true,
  'base64.binary.k8s.io': false,
};

/** The Reader's buffer: no message carries more. */
const MESSAGE_BYTES = 2048;

/** wsstream.IsWebSocketRequest: Upgrade: websocket and a Connection header naming upgrade. */
export function isWebSocketRequest(req: Req): boolean {
  if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return false;
  return /(^|,)\s*upgrade\s*($|,)/.test(String(req.headers.connection ?? '').toLowerCase());
}

/** The first protocol the client offers that is served ("" when it offers none); undefined: none served. */
export function logWebSocketProtocol(req: IncomingMessage): string | undefined {
  const offered = offeredProtocols(req);
  if (!offered.length) return '';
  return offered.find((p) => p in READER_PROTOCOLS);
}

/** No offered protocol is served: golang.org/x/net/websocket's handshake failure, a bare 403. */
export function refuseWebSocket(s: Scope, up: Upgrade): void {
  takeOver(s, 403);
  writeRawResponse(up.socket, 403, 'Forbidden', {}, '');
}

/** Sends the kubelet's log answer to the client as WebSocket messages of the protocol. */
export function webSocketLogSink(s: Scope, up: Upgrade, protocol: string): AnswerSink {
  const binary = READER_PROTOCOLS[protocol];
  return async (body, abort) => {
    const ws = await acceptWebSocket(s, up, protocol);
    let open = true;
    ws.once('close', () => {
      open = false;
      abort();
    });
    const send = (data: Buffer) => sendMessage(ws, binary ? data : data.toString('base64'));
    try {
      // The Reader's "ping": an empty message before the stream.
      await send(Buffer.alloc(0));
      for await (const chunk of body) {
        for (let i = 0; i < chunk.length && open; i += MESSAGE_BYTES)
          await send(chunk.subarray(i, i + MESSAGE_BYTES));
        if (!open) break;
      }
    } catch {
      // The kubelet cut the stream short, or the client left: close all the same.
    }
    if (open) ws.close(1000);
  };
}

/** Resolves once the message is handed to the socket (a slow client slows the kubelet's stream down). */
function sendMessage(ws: WebSocket, data: Buffer | string): Promise<void> {
  if (ws.readyState !== ws.OPEN) return Promise.resolve();
  return new Promise((resolve) => ws.send(data, () => resolve()));
}

// WebSocket clients of exec, attach and port-forward, spoken to the node agent
// as SPDY (Kubernetes' StreamTranslatorHandler and TunnelingHandler).
//
// Remote command: the WebSocket is accepted first; each binary message is one
// channel byte (0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; 255 closes a
// channel in v5) and its data, base64 protocols send the channel as a digit and
// the data in base64 text. The session's end is a Status on the error channel
// (v4/v5; the older protocols carry only a failure's message), then a close.
import type { IncomingMessage } from 'node:http';
import type { Duplex, Writable } from 'node:stream';
import type { WebSocket, RawData } from 'ws';
import { internalError, StatusError } from '../../../shared/api/status';
import { SpdyConnection, type SpdyStream } from '../../../shared/streaming/spdy';
import {
  dialUpgrade,
  readRest,
  type UpgradeResponse,
  type UpgradeTarget,
} from '../../../shared/streaming/upgrade';
import type { Upgrade } from '../../server/http';
import type { Scope } from '../scope';
import { acceptWebSocket as accept, dialFailed, relayFailure } from './upgrade';

export const PORT_FORWARD_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

const CH_STDIN = 0;
const CH_STDOUT = 1;
const CH_STDERR = 2;
const CH_ERROR = 3;
const CH_RESIZE = 4;
const CH_CLOSE = 255;

/** The SPDY remote-command versions asked of the node agent, best first. */
const SPDY_REMOTE_COMMAND = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];
const SPDY_PORT_FORWARD = 'portforward.k8s.io';
const SUCCESS = JSON.stringify({ metadata: {}, status: 'Success' });

export interface RemoteCommandOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

/** Bytes queued on a WebSocket before the source feeding it is paused. */
const WS_HIGH_WATER = 1024 * 1024;

/**
 * Sends a readable's data as messages, pausing the readable while the
 * WebSocket holds more than WS_HIGH_WATER unsent bytes (a slow client then
 * slows the node agent down instead of filling the apiserver's memory).
 */
function relay(from: Duplex, ws: WebSocket, send: (d: Buffer) => Promise<void>): void {
  from.on('data', (d: Buffer) => {
    const sent = send(d);
    if (ws.bufferedAmount > WS_HIGH_WATER && !from.isPaused()) {
      from.pause();
      void sent.then(() => from.resume());
    }
  });
}

/** Writes to a stream; while it cannot take more, the WebSocket is not read (TCP pushes back on the client). */
function writeFromClient(ws: WebSocket, to: Writable, data: Buffer): void {
  if (!to.write(data) && !ws.isPaused) {
    ws.pause();
    to.once('drain', () => ws.resume());
  }
}

/** Channel framing of one WebSocket protocol. */
function channels(ws: WebSocket, protocol: string) {
  const base64 = protocol.includes('base64');
  return {
    /** Resolves once the message is handed to the socket. */
    send(ch: number, data: Buffer): Promise<void> {
      if (ws.readyState !== ws.OPEN) return Promise.resolve();
      const msg = base64
        ? String.fromCharCode(48 + ch) + data.toString('base64')
        : Buffer.concat([Buffer.from([ch]), data]);
      return new Promise((r) => ws.send(msg, () => r()));
    },
    decode(raw: RawData, isBinary: boolean): { ch: number; data: Buffer } | undefined {
      const b = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as ArrayBuffer);
      if (!b.length) return undefined;
      if (!isBinary && base64) {
        const ch = b[0] - 48;
        return { ch, data: Buffer.from(b.subarray(1).toString('latin1'), 'base64') };
      }
      return { ch: b[0], data: b.subarray(1) };
    },
  };
}

/** Dials the node agent for a SPDY session with the given protocol versions. */
async function dialSpdy(
  s: Scope,
  loc: UpgradeTarget,
  versions: string[],
): Promise<{ ok: true; r: UpgradeResponse } | { ok: false; r: UpgradeResponse }> {
  const headers: [string, string][] = [
    ['Connection', 'Upgrade'],
    ['Upgrade', 'SPDY/3.1'],
    ...versions.map((v): [string, string] => ['X-Stream-Protocol-Version', v]),
    ['X-Forwarded-For', (s.req as IncomingMessage).socket.remoteAddress ?? ''],
  ];
  const r = await dialUpgrade(loc, 'POST', headers, s.ctx.signal);
  return { ok: r.statusCode === 101, r };
}

/** client-go's reading of a refused SPDY upgrade: the Status it carries, or its text. */
async function refusal(r: UpgradeResponse): Promise<StatusError> {
  const body = (await readRest(r)).toString('utf8').trim();
  try {
    const st = JSON.parse(body);
    if (st?.kind === 'Status' && st.status === 'Failure')
      return new StatusError(st.code ?? 500, st.reason ?? '', st.message ?? '', st.details);
  } catch {
    // not a Status
  }
  return internalError(new Error(`unable to upgrade connection: ${body}`));
}

export async function translateRemoteCommand(
  s: Scope,
  loc: UpgradeTarget,
  up: Upgrade,
  protocol: string,
  o: RemoteCommandOptions,
): Promise<void> {
  const ws = await accept(s, up, protocol);
  const chan = channels(ws, protocol);
  const statusJSON = protocol.startsWith('v4.') || protocol.startsWith('v5.');
  // Tells the client the session is up: an empty message on the lowest channel it reads.
  void chan.send(o.stdout ? CH_STDOUT : o.stderr ? CH_STDERR : CH_ERROR, Buffer.alloc(0));

  // Set once the node agent answered.
  const session: { conn?: SpdyConnection } = {};
  let stdin: SpdyStream | undefined;
  let resize: SpdyStream | undefined;
  const early: { ch: number; data: Buffer }[] = [];
  let clientGone = false;
  let ready = false;
  const route = (m: { ch: number; data: Buffer }) => {
    if (m.ch === CH_STDIN) {
      if (stdin) writeFromClient(ws, stdin, m.data);
    } else if (m.ch === CH_RESIZE) resize?.write(m.data);
    else if (m.ch === CH_CLOSE && m.data[0] === CH_STDIN) stdin?.end();
  };
  ws.on('message', (raw, isBinary) => {
    const m = chan.decode(raw, isBinary);
    if (!m) return;
    // Until every stream is open, messages wait (stdin may come before its stream exists).
    if (!ready) early.push(m);
    else route(m);
  });
  const closed = new Promise<void>((r) =>
    ws.once('close', () => {
      clientGone = true;
      session.conn?.close();
      r();
    }),
  );

  const finish = async (status: StatusError | undefined) => {
    if (!clientGone) {
      // The close frame follows in a write of its own: a client that polls its socket between
      // frames (the Python client) would not see a close frame sharing the status's TLS record.
      if (statusJSON)
        await chan.send(CH_ERROR, Buffer.from(status ? JSON.stringify(status.status) : SUCCESS));
      else if (status) await chan.send(CH_ERROR, Buffer.from(status.message));
      ws.close(1000);
    }
    session.conn?.close();
    // The client closes once it has read everything; a client that never does is cut off.
    const t = setTimeout(() => ws.terminate(), 60_000);
    await closed;
    clearTimeout(t);
  };

  let dialed: Awaited<ReturnType<typeof dialSpdy>>;
  try {
    dialed = await dialSpdy(s, loc, SPDY_REMOTE_COMMAND);
  } catch (e) {
    return finish(internalError(dialFailed(e as Error)));
  }
  if (!dialed.ok) return finish(await refusal(dialed.r));
  const version = dialed.r.headers['x-stream-protocol-version']?.[0] ?? '';
  const c = new SpdyConnection(dialed.r.socket, 'client', dialed.r.rest);
  session.conn = c;
  if (clientGone) c.close();
  try {
    const error = await c.createStream({ streamtype: 'error' });
    error.end();
    if (o.stdin) stdin = await c.createStream({ streamtype: 'stdin' });
    const stdout = o.stdout ? await c.createStream({ streamtype: 'stdout' }) : undefined;
    const stderr = o.stderr && !o.tty ? await c.createStream({ streamtype: 'stderr' }) : undefined;
    if (o.tty && version !== 'channel.k8s.io' && version !== 'v2.channel.k8s.io')
      resize = await c.createStream({ streamtype: 'resize' });
    ready = true;
    for (const m of early.splice(0)) route(m);
    const errorText = collect(error);
    const copied = [stdout, stderr].map((st, i) => {
      if (!st) return Promise.resolve();
      relay(st, ws, (d) => chan.send(i === 0 ? CH_STDOUT : CH_STDERR, d));
      return ended(st);
    });
    await Promise.race([Promise.all(copied), closed]);
    const text = await Promise.race([errorText, closed.then(() => '')]);
    return finish(remoteStatus(text, version));
  } catch (e) {
    return finish(clientGone ? undefined : internalError(e));
  }
}

/** The error stream's content as the client's Status (undefined: success). */
function remoteStatus(text: string, version: string): StatusError | undefined {
  if (!text.trim()) return undefined;
  if (version === 'v4.channel.k8s.io') {
    try {
      const st = JSON.parse(text);
      if (st.status === 'Success') return undefined;
      return new StatusError(st.code ?? 500, st.reason ?? '', st.message ?? '', st.details);
    } catch {
      // fall through: text
    }
  }
  return internalError(new Error(`error executing remote command: ${text}`));
}

function collect(st: Duplex): Promise<string> {
  const parts: Buffer[] = [];
  st.on('data', (d: Buffer) => parts.push(d));
  return ended(st).then(() => Buffer.concat(parts).toString('utf8'));
}

const ended = (st: Duplex) =>
  new Promise<void>((r) => {
    if (st.readableEnded || st.destroyed) return r();
    st.once('end', r);
    st.once('close', r);
  });

/**
 * kubectl's port-forward over WebSocket: the SPDY session to the node agent is
 * dialed first (a refusal goes back as the upgrade's answer, so the client falls
 * back to SPDY), then the WebSocket carries its bytes in binary messages.
 */
export async function tunnelPortForward(s: Scope, loc: UpgradeTarget, up: Upgrade): Promise<void> {
  let dialed: Awaited<ReturnType<typeof dialSpdy>>;
  try {
    dialed = await dialSpdy(s, loc, [SPDY_PORT_FORWARD]);
  } catch (e) {
    throw dialFailed(e as Error);
  }
  if (!dialed.ok) return relayFailure(s, up, dialed.r);
  const backend = dialed.r.socket;
  const ws = await accept(s, up, PORT_FORWARD_TUNNEL_PROTOCOL);
  if (dialed.r.rest.length) ws.send(dialed.r.rest);
  await tunnel(ws, backend);
}

/**
 * Carries a connection's bytes in binary WebSocket messages both ways until either side
 * closes. A connection that fails still closes the WebSocket in order: what was read from
 * it is already queued there and reaches the client before the close frame.
 */
export function tunnel(ws: WebSocket, backend: Duplex): Promise<void> {
  ws.on('message', (raw) =>
    writeFromClient(ws, backend, Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw as ArrayBuffer)),
  );
  relay(backend, ws, (d) =>
    ws.readyState === ws.OPEN ? new Promise<void>((r) => ws.send(d, () => r())) : Promise.resolve(),
  );
  // 'close' follows an error; that is where the WebSocket is closed.
  backend.on('error', () => {});
  return new Promise<void>((resolve) => {
    ws.once('close', () => {
      backend.end();
      setTimeout(() => backend.destroy(), 5000).unref();
      resolve();
    });
    backend.once('close', () => {
      if (ws.readyState === ws.OPEN) ws.close(1000);
      setTimeout(() => ws.terminate(), 5000).unref();
    });
  });
}

/**
 * WebSocket port-forwarding (the kubelet's protocol, which the Python and
 * JavaScript clients speak): for the i-th port, channel 2i carries data and
 * 2i+1 errors; each channel starts with the port number (16 bits, little
 * endian). Toward the node agent: one SPDY data and error stream per port.
 */
export async function translatePortForward(
  s: Scope,
  loc: UpgradeTarget,
  up: Upgrade,
  protocol: string,
  ports: number[],
): Promise<void> {
  const ws = await accept(s, up, protocol);
  const chan = channels(ws, protocol);
  for (let i = 0; i < ports.length; i++) {
    const p = Buffer.alloc(2);
    p.writeUInt16LE(ports[i]);
    void chan.send(2 * i, p);
    void chan.send(2 * i + 1, p);
  }
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  const data: (SpdyStream | undefined)[] = [];
  const early: { ch: number; data: Buffer }[] = [];
  let ready = false;
  ws.on('message', (raw, isBinary) => {
    const m = chan.decode(raw, isBinary);
    if (!m || m.ch % 2 !== 0) return;
    if (!ready) early.push(m);
    else {
      const d = data[m.ch / 2];
      if (d) writeFromClient(ws, d, m.data);
    }
  });
  const fail = (text: string) => {
    for (let i = 0; i < ports.length; i++) void chan.send(2 * i + 1, Buffer.from(text));
    ws.close(1000);
  };
  let dialed: Awaited<ReturnType<typeof dialSpdy>>;
  try {
    dialed = await dialSpdy(s, loc, [SPDY_PORT_FORWARD]);
  } catch (e) {
    fail(dialFailed(e as Error).message);
    return closed;
  }
  if (!dialed.ok) {
    fail((await refusal(dialed.r)).message);
    return closed;
  }
  const conn = new SpdyConnection(dialed.r.socket, 'client', dialed.r.rest);
  void closed.then(() => conn.close());
  try {
    const done: Promise<void>[] = [];
    for (let i = 0; i < ports.length; i++) {
      const h = { port: String(ports[i]), requestid: String(i) };
      const err = await conn.createStream({ streamtype: 'error', ...h });
      err.end();
      err.on('data', (d: Buffer) => void chan.send(2 * i + 1, d));
      const d = await conn.createStream({ streamtype: 'data', ...h });
      relay(d, ws, (b) => chan.send(2 * i, b));
      data[i] = d;
      done.push(ended(d));
    }
    ready = true;
    for (const m of early.splice(0)) data[m.ch / 2]?.write(m.data);
    await Promise.race([Promise.all(done), closed]);
  } catch (e) {
    fail(String((e as Error).message));
  }
  if (ws.readyState === ws.OPEN) ws.close(1000);
  conn.close();
  const t = setTimeout(() => ws.terminate(), 60_000);
  await closed;
  clearTimeout(t);
}

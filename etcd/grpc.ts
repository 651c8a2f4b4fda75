// gRPC on a stream of tkube's own HTTP/2 server (shared/http2/server-session.ts): the
// messages in (5-byte length prefix), the messages out, and the status in trailers. Unary
// methods answer one message; streaming ones (Watch, LeaseKeepAlive) talk both ways until
// either side ends. No compression: etcd's clients ask for none.
import { ErrorCode } from '../shared/http2/frames';
import type { ServerStream } from '../shared/http2/server-session';
import { GrpcStatus } from '../shared/etcd/grpc-status';
import { grpcFramed } from '../shared/etcd/grpc-framing';
import { type Fields, encode } from '../shared/etcd/wire';

export type Unary = (msg: Buffer) => Fields | Promise<Fields>;

export interface StreamHandler {
  onMessage(msg: Buffer): void;
  close(): void;
}
export type Streaming = (send: (msg: Buffer) => void) => StreamHandler;

/**
 * What a streaming call may have queued for a client that does not read (its flow-control
 * window is full) before the stream is reset: etcd holds a slow watcher back instead, but here
 * the responses would pile up in memory without bound. The client re-watches from where it was.
 */
export const MAX_STREAM_PENDING = 64 << 20;

export interface Routes {
  unary: ReadonlyMap<string, Unary>;
  streaming: ReadonlyMap<string, Streaming>;
  /** Requests above this size are refused (etcd's --max-request-bytes). */
  maxRequestBytes: number;
  /** The message of a refused large request. */
  tooLarge: { code: number; message: string };
}

/** A failure that carries its gRPC status (etcd's errors do). */
interface Coded {
  code: number;
  message: string;
}

const isCoded = (e: unknown): e is Coded =>
  e instanceof Error && typeof (e as Partial<Coded>).code === 'number';

/** grpc-message: percent-encoded outside printable ASCII (and '%'). */
function grpcMessage(s: string): string {
  return s.replace(/[^\x20-\x24\x26-\x7e]/gu, (c) => encodeURIComponent(c));
}

const GRPC_HEADERS: [string, string][] = [['content-type', 'application/grpc']];
const OK_TRAILERS: [string, string][] = [['grpc-status', '0']];

/** Ends a call with an error status: trailers-only when nothing was sent yet. */
function fail(s: ServerStream, code: number, message: string): void {
  const status: [string, string][] = [
    ['grpc-status', String(code)],
    ['grpc-message', grpcMessage(message)],
  ];
  if (s.headersSent) s.trailers(status);
  else s.respond(200, [...GRPC_HEADERS, ...status], true);
}

function failWith(s: ServerStream, err: unknown): void {
  if (isCoded(err)) fail(s, err.code, err.message);
  else fail(s, GrpcStatus.UNKNOWN, err instanceof Error ? err.message : String(err));
}

/** Cuts received bytes into messages. */
class Deframer {
  private parts: Buffer[] = [];
  private have = 0;

  /** Calls each with every whole message; false on a compressed message. */
  push(chunk: Buffer, each: (msg: Buffer) => void): boolean {
    this.parts.push(chunk);
    this.have += chunk.length;
    while (this.have >= 5) {
      const all = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.have);
      this.parts = [all];
      if (all[0] !== 0) return false;
      const len = all.readUInt32BE(1);
      if (this.have < 5 + len) return true;
      // Its own copy: the connection's read buffer is reused, and values are kept.
      each(Buffer.from(all.subarray(5, 5 + len)));
      const rest = all.subarray(5 + len);
      this.parts = rest.length ? [rest] : [];
      this.have = rest.length;
    }
    return true;
  }
}

export function serveGrpc(s: ServerStream, path: string, routes: Routes): void {
  const unary = routes.unary.get(path);
  const streaming = unary ? undefined : routes.streaming.get(path);
  if (!unary && !streaming) {
    s.onEnd = () => {};
    fail(s, GrpcStatus.UNIMPLEMENTED, `unknown method ${path}`);
    return;
  }
  const deframer = new Deframer();
  if (unary) {
    const msgs: Buffer[] = [];
    s.onData = (chunk) => {
      s.consumed(chunk.length);
      if (!deframer.push(chunk, (m) => msgs.push(m)))
        fail(s, GrpcStatus.UNIMPLEMENTED, 'compression is not supported');
    };
    s.onEnd = () => {
      if (s.closed) return;
      if (msgs.length !== 1) {
        fail(s, GrpcStatus.INTERNAL, `expected one request message, got ${msgs.length}`);
        return;
      }
      if (msgs[0].length > routes.maxRequestBytes) {
        fail(s, routes.tooLarge.code, routes.tooLarge.message);
        return;
      }
      Promise.resolve()
        .then(() => unary(msgs[0]))
        .then(
          (f) => {
            s.respond(200, GRPC_HEADERS, false);
            s.write(grpcFramed(encode(f)));
            s.trailers(OK_TRAILERS);
          },
          (err) => failWith(s, err),
        );
    };
    return;
  }
  s.respond(200, GRPC_HEADERS, false);
  const handler = streaming!((msg) => {
    if (s.closed) return;
    s.write(grpcFramed(msg));
    if (s.pending > MAX_STREAM_PENDING) {
      handler.close();
      s.reset(ErrorCode.ENHANCE_YOUR_CALM);
    }
  });
  s.onData = (chunk) => {
    s.consumed(chunk.length);
    const ok = deframer.push(chunk, (m) => {
      try {
        handler.onMessage(m);
      } catch (err) {
        handler.close();
        failWith(s, err);
      }
    });
    if (!ok) {
      handler.close();
      fail(s, GrpcStatus.UNIMPLEMENTED, 'compression is not supported');
    }
  };
  s.onEnd = () => {
    handler.close();
    s.trailers(OK_TRAILERS);
  };
  s.onClose = () => handler.close();
}

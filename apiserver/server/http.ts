// The few things every handler does with a raw request/response, for both
// HTTP/1.1 (node:http) and HTTP/2 (h2-exchange.ts, the same shape).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { H2Request, H2Response } from './h2-exchange';
import type { Duplex } from 'node:stream';
import { goStatus, requestEntityTooLarge, StatusError, type Status } from '../../shared/api/status';
import { stringifyJSONInt64 } from '../../shared/codec/json-int64';

export type Req = IncomingMessage | H2Request;
export type Res = ServerResponse | H2Response;

/** An HTTP/1.1 request asking for an upgrade: the raw socket, and bytes the client sent after the head. */
export interface Upgrade {
  socket: Duplex;
  head: Buffer;
}

/** The upgrade of an upgrade request (see UPGRADE); undefined for ordinary requests. */
export function upgradeOf(req: Req): Upgrade | undefined {
  return (req as UpgradeRequest)[UPGRADE];
}

/** Reads the whole body, refusing more than limit bytes with 413. */
export function readBody(req: Req, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(requestEntityTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > limit) {
        done = true;
        reject(requestEntityTooLarge(limit));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!done) {
        done = true;
        resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      }
    });
    req.on('error', (e) => {
      if (!done) {
        done = true;
        reject(e);
      }
    });
    req.on('aborted', () => {
      if (!done) {
        done = true;
        reject(new Error('client aborted the request'));
      }
    });
  });
}

/** A response body: bytes, or parts written in order (a list spliced from cached item encodings). */
export type Body = Buffer | string | Buffer[];

export const bodyLength = (b: Buffer[]) => b.reduce((n, p) => n + p.length, 0);

/** Writes a complete response unless the client is gone. */
export function send(
  res: Res,
  code: number,
  contentType: string,
  body: Body,
  headers: Record<string, string | string[]> = {},
): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const text = typeof body === 'string';
  (res as ServerResponse).writeHead(code, {
    'cache-control': 'no-cache, private',
    ...headers,
    'content-type': contentType,
    'content-length': String(
      text ? Buffer.byteLength(body) : Array.isArray(body) ? bodyLength(body) : body.length,
    ),
  });
  // Text goes as it is: node:http writes it in one piece with the header block, encoded once.
  if (!Array.isArray(body)) {
    res.end(body);
    return;
  }
  if (body.length === 1) {
    res.end(body[0]);
    return;
  }
  const parts = body;
  // Corked, the parts leave in one writev (HTTP/1.1) or one stream write (h2), with no
  // copy of the whole body: a 40 MB list goes out as fast as one prebuilt buffer.
  const out = res as ServerResponse;
  out.cork();
  for (const p of parts) out.write(p);
  out.end();
  out.uncork();
}

export function sendJSON(
  res: Res,
  code: number,
  obj: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  send(res, code, 'application/json', stringifyJSONInt64(obj), headers);
}

export function statusHeaders(status: Status): Record<string, string> {
  const h: Record<string, string> = {};
  if (status.details?.retryAfterSeconds) h['retry-after'] = String(status.details.retryAfterSeconds);
  return h;
}

/** Writes a Status error as JSON (handlers with negotiation use their own encoder). */
export function sendStatusJSON(res: Res, err: StatusError): void {
  // As Kubernetes' serializer writes it: Go's field order and json.Encoder's closing newline.
  send(
    res,
    err.code,
    'application/json',
    JSON.stringify(goStatus(err.status)) + '\n',
    statusHeaders(err.status),
  );
}

/** Where an upgrade request carries its socket and the bytes read past its headers. */
export const UPGRADE = Symbol('upgrade');
export type UpgradeRequest = IncomingMessage & { [UPGRADE]?: Upgrade };

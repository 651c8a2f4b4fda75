// The few things every handler does with a raw request/response, for both
// HTTP/1.1 and HTTP/2 (node:http2 compatibility API).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { requestEntityTooLarge, StatusError, type Status } from '../../shared/api/status';

export type Req = IncomingMessage | Http2ServerRequest;
export type Res = ServerResponse | Http2ServerResponse;

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

/** Writes a complete response unless the client is gone. */
/** A response body: bytes, or parts written in order (a list spliced from cached item encodings). */
export type Body = Buffer | string | Buffer[];

// Parts go out in writes of about this size: fewer TLS records than one write
// per part, without one huge allocation for the whole body.
const WRITE_CHUNK = 256 * 1024;

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
  const parts = Array.isArray(body) ? body : [typeof body === 'string' ? Buffer.from(body) : body];
  (res as ServerResponse).writeHead(code, {
    'cache-control': 'no-cache, private',
    ...headers,
    'content-type': contentType,
    'content-length': String(bodyLength(parts)),
  });
  if (parts.length === 1) {
    res.end(parts[0]);
    return;
  }
  const out = res as ServerResponse;
  let group: Buffer[] = [];
  let size = 0;
  for (const p of parts) {
    group.push(p);
    size += p.length;
    if (size >= WRITE_CHUNK) {
      out.write(group.length === 1 ? group[0] : Buffer.concat(group, size));
      group = [];
      size = 0;
    }
  }
  if (group.length) out.end(Buffer.concat(group, size));
  else out.end();
}

export function sendJSON(
  res: Res,
  code: number,
  obj: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  send(res, code, 'application/json', JSON.stringify(obj), headers);
}

export function statusHeaders(status: Status): Record<string, string> {
  const h: Record<string, string> = {};
  if (status.details?.retryAfterSeconds) h['retry-after'] = String(status.details.retryAfterSeconds);
  return h;
}

/** Writes a Status error as JSON (handlers with negotiation use their own encoder). */
export function sendStatusJSON(res: Res, err: StatusError): void {
  sendJSON(res, err.code, err.status, statusHeaders(err.status));
}

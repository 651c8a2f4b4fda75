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
export function send(
  res: Res,
  code: number,
  contentType: string,
  body: Buffer | string,
  headers: Record<string, string | string[]> = {},
): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  (res as ServerResponse).writeHead(code, {
    'cache-control': 'no-cache, private',
    ...headers,
    'content-type': contentType,
    'content-length': String(buf.length),
  });
  res.end(buf);
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

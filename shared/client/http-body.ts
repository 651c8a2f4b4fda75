// A response body as the client reads it: a Readable over the HTTP/1.1 message or the HTTP/2
// stream under it, with undici's BodyReadable helpers (arrayBuffer, text, dump), an idle
// timeout between chunks, and an error when the connection goes before the body's end.
import { Readable } from 'node:stream';

/** How many bytes dump() reads to keep a connection reusable before it cuts the body instead. */
const DUMP_LIMIT = 128 * 1024;

/** A transport error with a Node-style code (what isProbableEOF and isAbortError classify). */
export function transportError(message: string, code: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** Node's response headers (each as a list) as undici gives them: one string, or a list when repeated. */
export function headersFrom(distinct: Record<string, string[] | undefined>): ResponseHeaders {
  const out: ResponseHeaders = {};
  for (const [k, v] of Object.entries(distinct)) {
    if (!v || k.startsWith(':')) continue;
    out[k] = v.length === 1 ? v[0] : v;
  }
  return out;
}

/** Request headers as node's clients take them: lower-case names, no unset values, the body's length. */
export function requestHeaders(
  headers: Record<string, string | string[] | undefined> | undefined,
  body: string | Buffer | undefined,
): Record<string, string | string[] | number> {
  const h: Record<string, string | string[] | number> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) h[k.toLowerCase()] = v;
  if (body !== undefined)
    h['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  return h;
}

const truncated = () => transportError('the connection closed before the response body ended', 'ECONNRESET');

export function abortError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  return Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });
}

export class ResponseBody extends Readable {
  private ended = false;
  private released = false;
  private timer?: NodeJS.Timeout;

  /**
   * @param source the message or stream the bytes come from
   * @param cancel ends the source early (an HTTP/2 RST_STREAM, or the HTTP/1.1 socket)
   * @param idleMs the longest wait between two chunks (0: none)
   * @param release called once when the body is done with (read to its end, failed or destroyed)
   * @param complete at the source's end: whether the whole message came (node ends an HTTP/2
   *   stream's readable side when its session is destroyed, as if the server had ended it)
   */
  constructor(
    private readonly source: Readable,
    private readonly cancel: () => void,
    private readonly idleMs: number,
    private readonly release: () => void,
    complete: () => boolean,
  ) {
    super();
    // Its readers see its errors (iteration, buffer()); an unread body (a watch stopped before it
    // was iterated) must not take the process down with an unhandled 'error', as in undici.
    this.on('error', () => {});
    source.on('data', (chunk: Buffer) => {
      this.arm();
      if (!this.push(chunk)) source.pause();
    });
    source.once('end', () => {
      if (!complete()) return this.destroy(truncated());
      this.ended = true;
      this.disarm();
      this.push(null);
      this.done();
    });
    source.on('error', (err) => this.destroy(err));
    source.once('close', () => {
      if (!this.ended) this.destroy(truncated());
    });
    this.arm();
  }

  override _read(): void {
    this.source.resume();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.disarm();
    if (!this.ended) this.cancel();
    this.done();
    cb(err);
  }

  private done(): void {
    if (this.released) return;
    this.released = true;
    this.release();
  }

  private arm(): void {
    if (!this.idleMs || this.ended) return;
    if (this.timer) this.timer.refresh();
    else {
      this.timer = setTimeout(
        () => this.destroy(transportError(`no response body data for ${this.idleMs} ms`, 'ERR_BODY_TIMEOUT')),
        this.idleMs,
      );
      this.timer.unref();
    }
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The whole body. */
  async buffer(): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const c of this) parts.push(c as Buffer);
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = await this.buffer();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return (await this.buffer()).toString('utf8');
  }

  /** Reads and drops a short body (so its connection is reused), cuts a long one; never fails. */
  async dump(): Promise<void> {
    let n = 0;
    try {
      for await (const c of this) {
        n += (c as Buffer).length;
        if (n > DUMP_LIMIT) break;
      }
    } catch {
      // gone either way
    }
    if (!this.destroyed) this.destroy();
  }
}

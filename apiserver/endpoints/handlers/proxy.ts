// Connect subresources (pods/log; nodes/, pods/ and services/ proxy; exec, attach and
// portforward, see stream.ts): the registry says where the request goes; this
// streams it there and the answer back.
import { badRequest, internalError, StatusError } from '../../../shared/api/status';
import { PassThrough } from 'node:stream';
import type { Scope } from '../scope';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { UpstreamLocation } from '../../registry/registry';
import { upgradeOf } from '../../server/http';
import type { StreamKind } from '../../registry/strategies/pod-stream';
import { handleStream } from './stream';
import { upstreamDispatcher } from './upstream-pool';
import { passThrough } from './upgrade';
import { isWebSocketRequest, logWebSocketProtocol, refuseWebSocket, webSocketLogSink } from './log-websocket';

/** The connect subresources that need an upgraded connection. */
const STREAMING = new Set(['exec', 'attach', 'portforward']);

/** What the proxy needs of a client request (HTTP/1.1 or HTTP/2 compat). */
export type IncomingHttpRequest = Readable & { method?: string; headers: IncomingHttpHeaders };

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
  'content-length',
]);

export async function handleProxy(s: Scope): Promise<void> {
  const sub = s.sub!;
  const subpath = s.info.parts.slice(3).join('/');
  const loc = await sub.custom!.locate!(s.ctx, s.info.name, s.served, s.query, subpath);
  const up = upgradeOf(s.req);
  if (STREAMING.has(sub.name)) return handleStream(s, loc, up, sub.name as StreamKind);
  // pods/log to a WebSocket is served here (the kubelet speaks plain HTTP for logs).
  let sink: AnswerSink | undefined;
  if (sub.name === 'log' && up && isWebSocketRequest(s.req)) {
    const protocol = logWebSocketProtocol(s.req as IncomingMessage);
    if (protocol === undefined) return refuseWebSocket(s, up);
    sink = webSocketLogSink(s, up, protocol);
  }
  // A WebSocket (or any upgrade) through pods/, services/ or nodes/ proxy: spliced to the upstream.
  else if (up && s.req.headers.upgrade) return passThrough(s, loc, up);
  const method = s.req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  await streamProxy(
    s.req,
    s.res as ServerResponse,
    loc,
    {
      accept: String(s.req.headers.accept ?? '*/*'),
      ...(hasBody ? { 'content-type': String(s.req.headers['content-type'] ?? '') } : {}),
    },
    sub.name === 'log' ? kubeletLogFailure : undefined,
    sink,
  ).catch((err) => {
    if (!(err instanceof UpstreamError)) throw err;
    // Kubernetes: the proxy subresources answer 503; pods/log reports the failed request.
    if (sub.name === 'proxy')
      throw new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${err.message}`);
    const goMethod = method.charAt(0) + method.slice(1).toLowerCase();
    throw new StatusError(500, 'InternalError', `${goMethod} "${loc.url}": ${err.message}`);
  });
}

/** pods/log reads the kubelet's 400 and 500 as Kubernetes' response checker does: Statuses with its text. */
function kubeletLogFailure(code: number, text: string): StatusError | undefined {
  if (code === 400) return badRequest(text);
  if (code === 500) return internalError(new Error(text));
  return undefined;
}

/** Takes an upstream's answer body over; abort() ends the upstream request (the client left). */
export type AnswerSink = (body: AsyncIterable<Buffer>, abort: () => void) => Promise<void>;

/** The upstream could not be reached; message in Go's words (net.Dialer's errors). */
export class UpstreamError extends Error {}

/**
 * Streams a request to an upstream and its answer back: the body both ways,
 * response headers but hop-by-hop ones. Throws UpstreamError when the upstream
 * cannot be reached (before any byte of the answer was written).
 */
export async function streamProxy(
  req: IncomingHttpRequest,
  res: ServerResponse,
  loc: UpstreamLocation,
  headers: Record<string, string | string[]>,
  /** An error answer of the upstream as a Status of ours (undefined: passed on as it is). */
  failure?: (code: number, text: string) => StatusError | undefined,
  /** Where a successful answer goes instead of the client's response (a WebSocket: pods/log). */
  sink?: AnswerSink,
): Promise<void> {
  const { request } = await import('undici');
  const dispatcher = await upstreamDispatcher(loc);
  const ac = new AbortController();
  // Only the response's close says the client left (the request's fires once its body is read).
  res.on('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // The body streams upstream through a pipe of our own, so that whatever an upstream that
  // answered early left unread can be drained (below): unread, it would stall the client's
  // next request on a keep-alive connection.
  const body = hasBody ? new PassThrough() : undefined;
  if (body) req.pipe(body);
  try {
    let upstream;
    try {
      upstream = await request(loc.url, {
        method: method as any,
        dispatcher,
        signal: ac.signal,
        body,
        headers,
      });
    } catch (err) {
      if (ac.signal.aborted) return;
      throw new UpstreamError(transportError(err as Error & { code?: string }, loc.url));
    }
    if (failure && upstream.statusCode >= 400) {
      const text = await upstream.body.text();
      const err = failure(upstream.statusCode, text.slice(0, 4096));
      if (err) throw err;
      res.writeHead(upstream.statusCode, {
        'content-type': String(upstream.headers['content-type'] ?? 'text/plain'),
      });
      res.end(text);
      return;
    }
    if (sink && upstream.statusCode < 400) return await sink(upstream.body, () => ac.abort());
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upstream.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v as string | string[];
    res.writeHead(upstream.statusCode, out);
    res.flushHeaders?.();
    try {
      for await (const chunk of upstream.body) {
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      }
    } catch (err) {
      if (ac.signal.aborted) return;
      // The answer has begun: all that is left is to cut it short.
      res.destroy(err as Error);
      return;
    }
    res.end();
  } finally {
    if (body && !req.readableEnded) {
      req.unpipe(body);
      body.destroy();
      req.resume();
    }
  }
}

/** Request headers worth passing on to an upstream (not hop-by-hop, not HTTP/2 pseudo-headers). */
export function forwardableHeaders(req: IncomingHttpRequest, drop: (name: string) => boolean) {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k.startsWith(':') || HOP_BY_HOP.has(k) || k === 'host' || drop(k)) continue;
    out[k] = v;
  }
  return out;
}

/** A connection failure in Go's words (net.Dialer's errors), as Kubernetes reports them. */
export function transportError(e: Error & { code?: string }, url: string): string {
  const { host, hostname } = new URL(url);
  switch (e.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${host}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${host}: connect: no route to host`;
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `dial tcp ${host}: i/o timeout`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${hostname}: no such host`;
    default:
      return e.code ? `${e.code}: ${e.message}` : e.message;
  }
}

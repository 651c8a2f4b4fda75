// Connect subresources (pods/log; nodes/, pods/ and services/ proxy; exec, attach and
// portforward, see stream.ts): the registry
// says where the request goes; this streams it there and the answer back.
import { badRequest, internalError, StatusError } from '../../../shared/api/status';
import { PassThrough } from 'node:stream';
import type { Scope } from '../scope';
import type { ServerResponse } from 'node:http';
import { upgradeOf } from '../../server/http';
import type { StreamKind } from '../../registry/strategies/pod-stream';
import { handleStream } from './stream';
import { passThrough } from './upgrade';

/** The connect subresources that need an upgraded connection. */
const STREAMING = new Set(['exec', 'attach', 'portforward']);

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
  // A WebSocket (or any upgrade) through pods/, services/ or nodes/ proxy: spliced to the upstream.
  if (up && s.req.headers.upgrade) return passThrough(s, loc, up);
  // Loaded on first use: most apiservers never proxy, and undici is a large module.
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({
    connect: { ca: loc.caPem, cert: loc.certPem, key: loc.keyPem, rejectUnauthorized: !loc.insecure },
    headersTimeout: loc.timeoutMs,
    connectTimeout: loc.timeoutMs,
    bodyTimeout: 0,
  });
  const ac = new AbortController();
  // Only the response's close says the client left (the request's fires once its body is read).
  s.res.on('close', () => {
    if (!s.res.writableFinished) ac.abort();
  });
  const method = s.req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // The body streams upstream through a pipe of our own, so that whatever an upstream that
  // answered early left unread can be drained (below): unread, it would stall the client's
  // next request on a keep-alive connection.
  const body = hasBody ? new PassThrough() : undefined;
  if (body) s.req.pipe(body);
  try {
    const upstream = await request(loc.url, {
      method: method as any,
      dispatcher,
      signal: ac.signal,
      body,
      headers: {
        accept: String(s.req.headers.accept ?? '*/*'),
        ...(hasBody ? { 'content-type': String(s.req.headers['content-type'] ?? '') } : {}),
      },
    });
    // pods/log reads the kubelet's failures as Kubernetes' response checker does.
    if (sub.name === 'log' && (upstream.statusCode === 400 || upstream.statusCode === 500)) {
      const text = (await upstream.body.text()).slice(0, 4096);
      throw upstream.statusCode === 400 ? badRequest(text) : internalError(new Error(text));
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(upstream.headers))
      if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v as string | string[];
    const res = s.res as ServerResponse;
    res.writeHead(upstream.statusCode, headers);
    res.flushHeaders?.();
    for await (const chunk of upstream.body) {
      if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  } catch (err) {
    if (err instanceof StatusError) throw err;
    if (ac.signal.aborted) return;
    const why = transportError(err as Error & { code?: string }, loc.url);
    // Kubernetes: the proxy subresources answer 503; pods/log reports the failed request.
    if (sub.name === 'proxy')
      throw new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${why}`);
    const goMethod = method.charAt(0) + method.slice(1).toLowerCase();
    throw new StatusError(500, 'InternalError', `${goMethod} "${loc.url}": ${why}`);
  } finally {
    if (body && !s.req.readableEnded) {
      s.req.unpipe(body);
      body.destroy();
      s.req.resume();
    }
    void dispatcher.close();
  }
}

/** A connection failure in Go's words (net.Dialer's errors), as Kubernetes reports them. */
function transportError(e: Error & { code?: string }, url: string): string {
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

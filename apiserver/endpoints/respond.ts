// Writing responses of resource requests: negotiated content type, Warning
// headers collected while serving, and Status errors in the request's representation.
import { bodyLength, send, statusHeaders, type Res } from '../server/http';
import { StatusError, internalError } from '../../shared/api/status';
import { encodeStatus, JSON_REP, type Representation } from './encoding';
import type { Scope } from './scope';
import { logger } from '../../shared/log';
import { gzipSync } from 'node:zlib';
import { featureGates } from '../../shared/options/feature-gates';

const log = logger('endpoints');

/** `Warning: 299 - "text"` values, as Kubernetes sends them. */
export function warningHeaders(warnings: string[]): Record<string, string[]> {
  if (!warnings.length) return {};
  const uniq = [...new Set(warnings)];
  return { warning: uniq.map((w) => `299 - ${JSON.stringify(w)}`) };
}

// Kubernetes gzips responses from this size on (APIResponseCompression), at speed level 1.
const GZIP_THRESHOLD = 128 * 1024;

export function respond(
  s: Scope,
  code: number,
  body: Buffer | Buffer[],
  headers: Record<string, string | string[]> = {},
): void {
  const out: Record<string, string | string[]> = { ...warningHeaders(s.ctx.warnings), ...headers };
  body = withGoNewline(s.rep, body);
  const length = Array.isArray(body) ? bodyLength(body) : body.length;
  if (length >= GZIP_THRESHOLD && acceptsGzip(s) && featureGates.enabled('APIResponseCompression')) {
    body = gzipSync(Array.isArray(body) ? Buffer.concat(body, length) : body, { level: 1 });
    out['content-encoding'] = 'gzip';
    out.vary = 'Accept-Encoding';
  }
  send(s.res, code, s.rep.mediaType, body, out);
}

const NEWLINE = Buffer.from('\n');

/** Go's json.Encoder ends a body with a newline (pretty JSON, written by MarshalIndent, has none). */
function withGoNewline(rep: Representation, body: Buffer | Buffer[]): Buffer | Buffer[] {
  if (rep.format !== 'json' || rep.pretty) return body;
  return Array.isArray(body) ? [...body, NEWLINE] : [body, NEWLINE];
}

function acceptsGzip(s: Scope): boolean {
  const ae = s.req.headers['accept-encoding'];
  if (typeof ae !== 'string') return false;
  return ae.split(',').some((part) => {
    const [coding, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** Turns any error into a Status response. Unknown errors are 500s and are logged. */
export function respondError(
  res: Res,
  err: unknown,
  rep: Representation = JSON_REP,
  warnings: string[] = [],
): void {
  let se: StatusError;
  if (err instanceof StatusError) se = err;
  else {
    log.error('internal error', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    se = internalError(err);
  }
  const r = rep.as || rep.stream ? JSON_REP : rep;
  send(res, se.code, r.mediaType, withGoNewline(r, encodeStatus(r, se.status)), {
    ...statusHeaders(se.status),
    ...warningHeaders(warnings),
  });
}

// Failures as client-go's apierrors sees them: a Status body becomes a
// StatusError (the same class the apiserver throws), anything else a generic
// StatusError built from the HTTP code; the is*() helpers match by reason, or
// by code when the reason is not one they know (apierrors.knownReasons).
import { StatusError, type Status, type StatusDetails, type StatusReason } from '../api/status';

export { StatusError, type Status, type StatusReason } from '../api/status';

const KNOWN_REASONS = new Set<string>([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StoreReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'InternalError',
  'Expired',
  'ServiceUnavailable',
]);

/** A StatusError from a decoded Status object (a response body or a watch ERROR event). */
export function statusErrorFromObject(obj: any, fallbackCode = 500): StatusError {
  const code = typeof obj?.code === 'number' && obj.code > 0 ? obj.code : fallbackCode;
  const err = new StatusError(code, (obj?.reason ?? '') as StatusReason, obj?.message ?? '', obj?.details);
  if (obj?.metadata && typeof obj.metadata === 'object') (err.status as Status).metadata = obj.metadata;
  return err;
}

// apierrors.NewGenericServerResponse: reason and message by HTTP code.
function genericReason(code: number): [StatusReason, string] {
  switch (code) {
    case 409:
      return ['Conflict', 'the server reported a conflict'];
    case 404:
      return ['NotFound', 'the server could not find the requested resource'];
    case 400:
      return ['BadRequest', 'the server rejected our request for an unknown reason'];
    case 401:
      return ['Unauthorized', 'the server has asked for the client to provide credentials'];
    case 403:
      return ['Forbidden', 'the server does not allow access to the requested resource'];
    case 405:
      return ['MethodNotAllowed', 'the server does not allow this method on the requested resource'];
    case 406:
      return [
        'NotAcceptable',
        'the server was unable to respond with a content type that the client supports',
      ];
    case 410:
      return ['Gone', 'the server has removed the requested resource'];
    case 413:
      return ['RequestEntityTooLarge', 'the server has rejected the request because it is too large'];
    case 415:
      return ['UnsupportedMediaType', 'the server was unable to process the request body'];
    case 422:
      return ['Invalid', 'the server rejected our request due to an error in our request'];
    case 429:
      return [
        'TooManyRequests',
        'the server has received too many requests and has asked us to try again later',
      ];
    case 503:
      return ['ServiceUnavailable', 'the server is currently unable to handle the request'];
    case 504:
      return [
        'Timeout',
        'the server was unable to return a response in the time allotted, but may still be processing the request',
      ];
    default:
      if (code === 500)
        return ['InternalError', 'an error on the server has prevented the request from succeeding'];
      return ['', `the server responded with the status code ${code} but did not return more information`];
  }
}

/** A StatusError for a failed response whose body is not a Status. */
export function genericStatusError(code: number, body: string, retryAfterSeconds?: number): StatusError {
  const [reason, msg] = genericReason(code);
  const details: StatusDetails = {};
  const text = body.trim();
  if (text) details.causes = [{ reason: 'UnexpectedServerResponse', message: text.slice(0, 1024) }];
  if (retryAfterSeconds) details.retryAfterSeconds = retryAfterSeconds;
  return new StatusError(code, reason, text ? `${msg} (${text.slice(0, 256)})` : msg, details);
}

function reasonAndCode(err: unknown): [string, number] {
  if (err instanceof StatusError) return [err.reason, err.code];
  return ['', 0];
}

function matches(err: unknown, reason: StatusReason, code: number): boolean {
  const [r, c] = reasonAndCode(err);
  if (r === reason) return true;
  return !KNOWN_REASONS.has(r) && c === code;
}

export const isNotFound = (err: unknown) => matches(err, 'NotFound', 404);
export const isAlreadyExists = (err: unknown) => reasonAndCode(err)[0] === 'AlreadyExists';
export const isConflict = (err: unknown) => matches(err, 'Conflict', 409);
export const isInvalid = (err: unknown) => matches(err, 'Invalid', 422);
export const isGone = (err: unknown) => matches(err, 'Gone', 410);
export const isResourceExpired = (err: unknown) => reasonAndCode(err)[0] === 'Expired';
export const isBadRequest = (err: unknown) => matches(err, 'BadRequest', 400);
export const isUnauthorized = (err: unknown) => matches(err, 'Unauthorized', 401);
export const isForbidden = (err: unknown) => matches(err, 'Forbidden', 403);
export const isMethodNotSupported = (err: unknown) => matches(err, 'MethodNotAllowed', 405);
export const isNotAcceptable = (err: unknown) => matches(err, 'NotAcceptable', 406);
export const isUnsupportedMediaType = (err: unknown) => matches(err, 'UnsupportedMediaType', 415);
export const isRequestEntityTooLarge = (err: unknown) => matches(err, 'RequestEntityTooLarge', 413);
export const isTooManyRequests = (err: unknown) => matches(err, 'TooManyRequests', 429);
export const isServiceUnavailable = (err: unknown) => matches(err, 'ServiceUnavailable', 503);
export const isInternalError = (err: unknown) => matches(err, 'InternalError', 500);
export const isTimeout = (err: unknown) => matches(err, 'Timeout', 504);
export const isServerTimeout = (err: unknown) => reasonAndCode(err)[0] === 'ServerTimeout';

/** The reflector's test for "start over": 410 Gone or Expired. */
export const isExpired = (err: unknown) => isResourceExpired(err) || isGone(err);

/** 504 "Too large resource version" (apierrors.IsTooLargeResourceVersionError). */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!isTimeout(err)) return false;
  const st = (err as StatusError).status;
  if (st.details?.causes?.some((c) => c.reason === 'ResourceVersionTooLarge')) return true;
  return /Too large resource version/.test(st.message ?? '');
}

/** Seconds the server asked us to wait, if any (apierrors.SuggestsClientDelay). */
export function suggestsClientDelay(err: unknown): number | undefined {
  if (!(err instanceof StatusError)) return undefined;
  const s = err.status.details?.retryAfterSeconds;
  if (
    s &&
    s > 0 &&
    (err.reason === 'ServerTimeout' || err.reason === 'Timeout' || err.code === 429 || err.code >= 500)
  ) {
    return s;
  }
  return undefined;
}

function errorCodes(err: unknown): string[] {
  const out: string[] = [];
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e.code === 'string') out.push(e.code);
    if (Array.isArray(e.errors)) for (const x of e.errors) if (typeof x?.code === 'string') out.push(x.code);
  }
  return out;
}

/** The server is not listening (utilnet.IsConnectionRefused). */
export function isConnectionRefused(err: unknown): boolean {
  return errorCodes(err).includes('ECONNREFUSED');
}

/**
 * Node's codes for a connection that went away under a request: reset or closed sockets
 * ("socket hang up" is ECONNRESET), HTTP/2 streams reset, sessions that sent GOAWAY, failed or
 * missed their ping, a closed client (shared/client/http-transport.ts), and undici's own.
 */
const EOF_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_STREAM_CANCEL',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_HTTP2_PING_TIMEOUT',
  'ERR_CLIENT_CLOSED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** A transport failure that is usually transient (connection reset, EOF, socket closed). */
export function isProbableEOF(err: unknown): boolean {
  return errorCodes(err).some((c) => EOF_CODES.has(c));
}

/** Whether err is an abort caused by the caller's signal. */
export function isAbortError(err: unknown): boolean {
  const e = err as any;
  return e?.name === 'AbortError' || e?.code === 'ABORT_ERR' || e?.code === 'UND_ERR_ABORTED';
}

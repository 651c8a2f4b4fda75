// Kubernetes Status errors: every failure leaves the server as one of these,
// with the reason, code and message wording Kubernetes uses, so clients that
// switch on reason (apierrors.IsNotFound, IsConflict...) behave the same.
import { fieldErrorMessage, type FieldError } from './field-errors';

export type StatusReason =
  | ''
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'ServerTimeout'
  | 'StoreReadError'
  | 'Timeout'
  | 'TooManyRequests'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'InternalError'
  | 'Expired'
  | 'ServiceUnavailable';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | { resourceVersion?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

export class StatusError extends Error {
  readonly status: Status;
  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'StatusError';
    this.status = goStatus({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      details,
      code,
    });
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason {
    return this.status.reason ?? '';
  }
}

// Go's encoding/json writes struct fields in declaration order and drops
// omitempty zeros; these rebuild a Status (and its details and causes) that
// way, so `details` comes before `code` and an empty `group` is left out.
const set = (out: Record<string, unknown>, key: string, v: unknown) => {
  if (v !== undefined && v !== null && v !== '' && v !== 0) out[key] = v;
};

function goCause(c: StatusCause): StatusCause {
  const out: Record<string, unknown> = {};
  set(out, 'reason', c.reason);
  set(out, 'message', c.message);
  set(out, 'field', c.field);
  return out as StatusCause;
}

function goDetails(d: StatusDetails): StatusDetails {
  const out: Record<string, unknown> = {};
  set(out, 'name', d.name);
  set(out, 'group', d.group);
  set(out, 'kind', d.kind);
  set(out, 'uid', d.uid);
  if (Array.isArray(d.causes) && d.causes.length) out.causes = d.causes.map(goCause);
  set(out, 'retryAfterSeconds', d.retryAfterSeconds);
  return out as StatusDetails;
}

/** A Status with its keys in Go's order and omitempty zeros dropped (metav1.Status). */
export function goStatus(s: Partial<Status>): Status {
  const out: Record<string, unknown> = {};
  set(out, 'kind', s.kind);
  set(out, 'apiVersion', s.apiVersion);
  const m = (s.metadata ?? {}) as Record<string, unknown>;
  const meta: Record<string, unknown> = {};
  for (const k of ['selfLink', 'resourceVersion', 'continue', 'remainingItemCount']) set(meta, k, m[k]);
  out.metadata = meta;
  set(out, 'status', s.status);
  set(out, 'message', s.message);
  set(out, 'reason', s.reason);
  if (s.details) out.details = goDetails(s.details);
  set(out, 'code', s.code);
  return out as unknown as Status;
}

export const isStatusError = (e: unknown, reason?: StatusReason): e is StatusError =>
  e instanceof StatusError && (reason === undefined || e.reason === reason);

/** A resource as Kubernetes names it in messages: "pods", "deployments.apps". */
export interface GroupResource {
  group: string;
  resource: string;
}
export const qualifiedResource = (gr: GroupResource) =>
  gr.group ? `${gr.resource}.${gr.group}` : gr.resource;

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export const OBJECT_MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(
  gr: GroupResource,
  name: string,
  why: string = OBJECT_MODIFIED,
  causes?: StatusCause[],
): StatusError {
  return new StatusError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
    {
      name,
      group: gr.group,
      kind: gr.resource,
      ...(causes ? { causes } : {}),
    },
  );
}

/** 422 Invalid with one cause per field error. */
export function invalid(
  groupKind: { group: string; kind: string },
  name: string,
  errs: FieldError[],
): StatusError {
  const causes = errs.map((e) => ({
    reason: e.type,
    message: fieldErrorMessage(e).slice(e.field.length + 2),
    field: e.field,
  }));
  const list = errs.map(fieldErrorMessage);
  const qualifiedKind = groupKind.group ? `${groupKind.kind}.${groupKind.group}` : groupKind.kind;
  const message = `${qualifiedKind} "${name}" is invalid: ${list.length === 1 ? list[0] : `[${list.join(', ')}]`}`;
  return new StatusError(422, 'Invalid', message, {
    name,
    group: groupKind.group,
    kind: groupKind.kind,
    causes,
  });
}

export const badRequest = (message: string) => new StatusError(400, 'BadRequest', message);

export function forbidden(gr: GroupResource, name: string, why: string): StatusError {
  const what = name ? `${qualifiedResource(gr)} "${name}"` : qualifiedResource(gr);
  return new StatusError(403, 'Forbidden', `${what} is forbidden: ${why}`, {
    name: name || undefined,
    group: gr.group,
    kind: gr.resource,
  });
}

export const unauthorized = (message = 'Unauthorized') => new StatusError(401, 'Unauthorized', message);

export const methodNotSupported = (gr: GroupResource, action: string) =>
  new StatusError(
    405,
    'MethodNotAllowed',
    `${action} is not supported on resources of kind "${qualifiedResource(gr)}"`,
    {
      group: gr.group,
      kind: gr.resource,
    },
  );

export const notAcceptable = (accepted: string[]) =>
  new StatusError(
    406,
    'NotAcceptable',
    `only the following media types are accepted: ${accepted.join(', ')}`,
  );

export const unsupportedMediaType = (contentType: string, accepted: string[]) =>
  new StatusError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    contentType ? { causes: [{ reason: 'UnsupportedMediaType', message: contentType }] } : undefined,
  );

/** 410 for a watch or read below the retained history. */
export const resourceExpired = (message: string) => new StatusError(410, 'Expired', message);
export const gone = (message: string) => new StatusError(410, 'Gone', message);

export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds });

/** 504 for a resourceVersion the store has not reached in time (storage.NewTooLargeResourceVersionError). */
export function tooLargeResourceVersion(requested: number, current: number): StatusError {
  return new StatusError(
    504,
    'Timeout',
    `Timeout: Too large resource version: ${requested}, current: ${current}`,
    {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    },
  );
}

/** 504 Timeout as apierrors.NewTimeoutError writes it: "Timeout: " prefix, details always present. */
export const timeout = (message: string, retryAfterSeconds = 0) =>
  new StatusError(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds });

export const requestEntityTooLarge = (limit: number) =>
  new StatusError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);

export const internalError = (err: unknown) =>
  new StatusError(
    500,
    'InternalError',
    `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`,
    {
      causes: [{ message: err instanceof Error ? err.message : String(err) }],
    },
  );

export const serviceUnavailable = (message: string) => new StatusError(503, 'ServiceUnavailable', message);

/** The Success Status a delete returns when the object is gone at once. */
export function successStatus(details?: StatusDetails): Omit<Status, 'reason' | 'code'> & { code?: number } {
  return goStatus({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details });
}

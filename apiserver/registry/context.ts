// What the registry needs to know about the request it serves. Built by the
// endpoints layer; the registry never sees HTTP.

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface RequestContext {
  user: UserInfo;
  /** Namespace from the URL ("" for cluster-scoped requests). */
  namespace: string;
  /** dryRun=All (or the bare form): run every stage but the write. */
  dryRun: boolean;
  /** fieldManager parameter, or the default derived from the user agent. */
  fieldManager: string;
  userAgent: string;
  /** Warnings to return in Warning headers. */
  warnings: string[];
  /** Audit annotations added while serving the request. */
  auditAnnotations: Record<string, string>;
  now(): Date;
  /** Aborted when the client goes away or the request times out. */
  signal?: AbortSignal;
  /**
   * The apiserver writes an object it built itself (bootstrap policy, allocator
   * records ...): the schema's type check is skipped, semantic validation runs.
   */
  internal?: boolean;
}

export function systemContext(namespace = '', fieldManager = 'kube-apiserver'): RequestContext {
  return {
    user: { name: 'system:apiserver', groups: ['system:masters'] },
    namespace,
    dryRun: false,
    fieldManager,
    userAgent: 'kube-apiserver',
    warnings: [],
    auditAnnotations: {},
    now: () => new Date(),
    internal: true,
  };
}

/**
 * A write that lost a race is computed again from a fresh read, as kube's
 * GuaranteedUpdate does, until the request ends (timeout or client gone); the
 * bound is for internal writers, which have no deadline. Conditional writes do
 * not loop: their resourceVersion precondition answers 409 at once.
 */
const MAX_ATTEMPTS = 1000;

/** Whether a write that lost a race should try again. */
export function retryAfterConflict(ctx: RequestContext, attempt: number): boolean {
  return attempt + 1 < MAX_ATTEMPTS && !ctx.signal?.aborted;
}

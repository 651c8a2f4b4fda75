// One request's audit.k8s.io/v1 Event through its stages: RequestReceived at
// begin, ResponseStarted when a long-running response sends its headers,
// ResponseComplete (or Panic) at the end. Request and response bodies are
// captured for the Request/RequestResponse levels by tapping the request's
// 'data' events and wrapping res.write/end — the handlers are not involved.
import { rfc3339Micro } from '../../../shared/api/validation/gotime';
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { AuditHandle } from '../types';
import type { UserInfo } from '../../registry/context';
import type { RequestInfo } from '../../endpoints/request-info';
import { isLongRunning } from '../../endpoints/request-info';
import type { Req, Res } from '../../server/http';
import type { Backend } from './backends';
import { levelAtLeast, type Decision, type Level, type Stage } from './policy';

export interface AuditUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: {
    resource?: string;
    namespace?: string;
    name?: string;
    uid?: string;
    apiGroup?: string;
    apiVersion?: string;
    resourceVersion?: string;
    subresource?: string;
  };
  responseStatus?: Record<string, unknown>;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

function auditUser(u: UserInfo): AuditUser {
  return {
    username: u.name,
    ...(u.uid ? { uid: u.uid } : {}),
    ...(u.groups?.length ? { groups: u.groups } : {}),
    ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
  };
}

/** utilnet.SourceIPs: X-Forwarded-For, then X-Real-Ip, then the peer address. */
export function sourceIPs(req: Req): string[] {
  const out: string[] = [];
  const xff = req.headers['x-forwarded-for'];
  for (const part of String(Array.isArray(xff) ? xff.join(',') : (xff ?? '')).split(','))
    if (part.trim()) out.push(part.trim());
  const real = req.headers['x-real-ip'];
  if (typeof real === 'string' && real.trim() && !out.includes(real.trim())) out.push(real.trim());
  let peer = req.socket?.remoteAddress ?? (req as any).stream?.session?.socket?.remoteAddress;
  if (peer?.startsWith('::ffff:')) peer = peer.slice(7);
  if (peer && !out.includes(peer)) out.push(peer);
  return out;
}

const MAX_CAPTURE = 3 * 1024 * 1024;

function parseJSON(buf: Buffer | null): unknown {
  if (!buf || !buf.length) return undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
}

function dropManagedFields(obj: any): any {
  if (!obj || typeof obj !== 'object') return obj;
  let out = obj;
  if (obj.metadata?.managedFields) {
    const { managedFields: _mf, ...md } = obj.metadata;
    out = { ...obj, metadata: md };
  }
  if (Array.isArray(out.items)) out = { ...out, items: out.items.map(dropManagedFields) };
  return out;
}

/** Captures bytes of a stream up to a limit. */
class Capture {
  private chunks: Buffer[] = [];
  private size = 0;
  overflow = false;
  add(chunk: unknown, encoding?: unknown): void {
    if (this.overflow || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const b = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : null;
    if (!b) return;
    this.size += b.length;
    if (this.size > MAX_CAPTURE) {
      this.overflow = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(b);
  }
  bytes(): Buffer | null {
    return this.overflow ? null : Buffer.concat(this.chunks);
  }
}

export class RequestAudit implements AuditHandle {
  readonly annotations: Record<string, string> = {};
  private readonly ev: AuditEvent;
  private readonly received: Date;
  private readonly longRunning: boolean;
  private readonly reqBody: Capture | null;
  private readonly resBody: Capture | null;
  private ended = false;
  private started = false;

  constructor(
    private readonly backend: Backend,
    private readonly decision: Decision,
    req: Req,
    private readonly res: Res,
    info: RequestInfo,
    user: UserInfo,
    version: string,
  ) {
    this.received = new Date();
    const url = req.url ?? '/';
    const qi = url.indexOf('?');
    const query = new URLSearchParams(qi < 0 ? '' : url.slice(qi + 1));
    this.longRunning = isLongRunning(info, query);
    const headerID = req.headers['audit-id'];
    const auditID = typeof headerID === 'string' && headerID ? headerID : randomUUID();
    if (!res.headersSent) res.setHeader('Audit-Id', auditID);
    this.ev = {
      kind: 'Event',
      apiVersion: version,
      level: decision.level,
      auditID,
      stage: 'RequestReceived',
      requestURI: url,
      verb: info.verb,
      user: auditUser(user),
      sourceIPs: sourceIPs(req),
      ...(req.headers['user-agent'] ? { userAgent: String(req.headers['user-agent']) } : {}),
      ...(info.isResourceRequest
        ? {
            objectRef: {
              resource: info.resource,
              ...(info.namespace ? { namespace: info.namespace } : {}),
              ...(info.name ? { name: info.name } : {}),
              ...(info.apiGroup ? { apiGroup: info.apiGroup } : {}),
              apiVersion: info.apiVersion,
              ...(info.subresource ? { subresource: info.subresource } : {}),
            },
          }
        : {}),
      requestReceivedTimestamp: rfc3339Micro(this.received),
      stageTimestamp: rfc3339Micro(this.received),
    };
    const method = req.method ?? 'GET';
    const hasBody = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
    // The request body: its name for objectRef at every level, the object itself from Request on.
    this.reqBody = hasBody ? new Capture() : null;
    if (this.reqBody) {
      const cap = this.reqBody;
      const emit = req.emit;
      (req as any).emit = function (this: Req, event: string, ...args: unknown[]) {
        if (event === 'data') cap.add(args[0]);
        return emit.apply(this, [event, ...args] as any);
      };
    }
    this.resBody = new Capture();
    this.wrapResponse();
    this.emit('RequestReceived');
  }

  private wrapResponse(): void {
    const res = this.res as any;
    const cap = this.resBody!;
    const wantBody = levelAtLeast(this.decision.level, 'RequestResponse');
    const write = res.write;
    const end = res.end;
    const writeHead = res.writeHead;
    res.writeHead = (...args: unknown[]) => {
      const r = writeHead.apply(res, args);
      if (this.longRunning && !this.started) {
        this.started = true;
        this.emit('ResponseStarted', Number(args[0]) || res.statusCode);
      }
      return r;
    };
    res.write = function (chunk: unknown, ...args: unknown[]) {
      if (wantBody || res.statusCode >= 400) cap.add(chunk, args[0]);
      return write.apply(this, [chunk, ...args]);
    };
    res.end = function (chunk?: unknown, ...args: unknown[]) {
      if (wantBody || res.statusCode >= 400) cap.add(chunk, args[0]);
      return end.apply(this, [chunk, ...args]);
    };
  }

  setUser(user: UserInfo, impersonated?: UserInfo): void {
    this.ev.user = auditUser(user);
    if (impersonated) this.ev.impersonatedUser = auditUser(impersonated);
  }

  private emit(stage: Stage, code?: number): void {
    if (this.decision.omitStages.has(stage)) return;
    const now = new Date();
    const ev: AuditEvent = { ...this.ev, stage, stageTimestamp: rfc3339Micro(now) };
    if (code !== undefined) ev.responseStatus = { metadata: {}, code };
    if (Object.keys(this.annotations).length) ev.annotations = { ...this.annotations };
    this.backend.process([ev]);
  }

  end(status: number): void {
    if (this.ended) return;
    this.ended = true;
    const level = this.decision.level;
    const requestBody = this.reqBody?.bytes() ?? null;
    const requestObject = parseJSON(requestBody) as any;
    if (this.ev.objectRef && requestObject && typeof requestObject === 'object') {
      const md = requestObject.metadata;
      if (!this.ev.objectRef.name && typeof md?.name === 'string' && md.name)
        this.ev.objectRef.name = md.name;
      if (!this.ev.objectRef.namespace && typeof md?.namespace === 'string' && md.namespace)
        this.ev.objectRef.namespace = md.namespace;
    }
    if (levelAtLeast(level, 'Request') && requestObject !== undefined)
      this.ev.requestObject = this.decision.omitManagedFields
        ? dropManagedFields(requestObject)
        : requestObject;
    let responseBody = this.resBody?.bytes() ?? null;
    if (responseBody && String(this.res.getHeader('content-encoding') ?? '') === 'gzip') {
      try {
        responseBody = gunzipSync(responseBody);
      } catch {
        responseBody = null;
      }
    }
    const responseObject = parseJSON(responseBody) as any;
    const code = status || 200;
    this.ev.responseStatus = { metadata: {}, code };
    if (responseObject?.kind === 'Status') {
      const { kind: _k, apiVersion: _a, ...st } = responseObject;
      this.ev.responseStatus = { ...st, code: st.code ?? code };
    }
    if (levelAtLeast(level, 'RequestResponse') && responseObject !== undefined)
      this.ev.responseObject = this.decision.omitManagedFields
        ? dropManagedFields(responseObject)
        : responseObject;
    const stage: Stage = 'ResponseComplete';
    if (this.decision.omitStages.has(stage)) return;
    const ev: AuditEvent = { ...this.ev, stage, stageTimestamp: rfc3339Micro(new Date()) };
    if (Object.keys(this.annotations).length) ev.annotations = { ...this.annotations };
    try {
      this.backend.process([ev]);
    } catch {
      /* the response is already written: blocking-strict only fails requests at RequestReceived */
    }
  }
}

// gRPC plumbing to a set of etcd endpoints, each connected lazily over one
// HTTP/2 connection of our own (grpc-client.ts): unary calls with deadlines and
// fail-over, and the Watch bidi stream. Requests are encoded by proto.ts.
import { readFileSync } from 'node:fs';
import { StorageError } from '../errors';
import { logger } from '../../../shared/log';
import { GrpcClient, GrpcStatus, type GrpcStream, type GrpcTls } from './grpc-client';

const log = logger('storage/etcd3');

export interface TlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

interface Endpoint {
  readonly url: string;
  readonly target: string;
  readonly secure: boolean;
  grpc: GrpcClient | null;
}

export function parseEndpoint(url: string): { target: string; secure: boolean } {
  if (url.startsWith('unix:')) return { target: url.replace(/^unix:\/\//, 'unix:'), secure: false };
  if (!/^[a-z]+:\/\//i.test(url)) return { target: url, secure: false };
  const u = new URL(url);
  const secure = u.protocol === 'https:' || u.protocol === 'unixs:';
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new Error(`etcd3: unsupported endpoint scheme in ${url}`);
  }
  const port = u.port || (secure ? '443' : '80');
  return {
    target: `${u.hostname.includes(':') ? `[${u.hostname.replace(/^\[|\]$/g, '')}]` : u.hostname}:${port}`,
    secure,
  };
}

/** The gRPC status of a failed call, or undefined for other errors. */
export function grpcStatus(err: unknown): { code: GrpcStatus; details: string } | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'number' && 'details' in err) {
    return { code: err.code as GrpcStatus, details: String(err.details) };
  }
  return undefined;
}

/** True when the call failed before reaching any server, so even a write may be retried. */
function neverSent(details: string): boolean {
  return details.startsWith('No connection established');
}

export interface CallOptions {
  /** Reads and other idempotent calls may be retried on another endpoint. */
  idempotent: boolean;
  timeoutMs?: number;
}

export class Connection {
  private readonly eps: Endpoint[];
  private current = 0;
  private closed = false;
  private tls: GrpcTls | null = null;

  constructor(
    servers: string[],
    tls: TlsFiles | undefined,
    readonly requestTimeoutMs: number,
  ) {
    if (servers.length === 0) throw new Error('etcd3: no etcd servers given');
    this.eps = servers.map((url) => ({ url, ...parseEndpoint(url), grpc: null }));
    if (this.eps.some((e) => e.secure)) {
      const read = (f?: string) => (f ? readFileSync(f) : null);
      if (!tls?.certFile !== !tls?.keyFile)
        throw new Error('etcd3: TLS needs both a certificate and a key file');
      const [ca, key, cert] = [read(tls?.caFile), read(tls?.keyFile), read(tls?.certFile)];
      this.tls = { ...(ca ? { ca } : {}), ...(key ? { key } : {}), ...(cert ? { cert } : {}) };
    } else if (tls?.caFile || tls?.certFile || tls?.keyFile) {
      log.warn('etcd TLS files given but no https:// endpoint; connecting without TLS');
    }
  }

  get endpoints(): readonly string[] {
    return this.eps.map((e) => e.url);
  }

  /** The URL requests currently go to. */
  get endpoint(): string {
    return this.eps[this.current].url;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Makes endpoint i the current one (used by the initial health probe). */
  select(i: number): void {
    this.current = i;
  }

  private client(i: number): GrpcClient {
    if (this.closed) throw new StorageError('Closed', 'etcd3 storage is closed');
    const ep = this.eps[i];
    return (ep.grpc ??= new GrpcClient(ep.url, ep.secure ? this.tls : null));
  }

  /** Moves on to the next endpoint after `failed` turned out unavailable. */
  failover(failed: number): void {
    if (this.eps.length > 1 && this.current === failed) {
      this.current = (failed + 1) % this.eps.length;
      log.warn('etcd endpoint unavailable, failing over', {
        from: this.eps[failed].url,
        to: this.eps[this.current].url,
      });
    }
  }

  /** Index of the current endpoint, for failover() after a stream failure. */
  get currentIndex(): number {
    return this.current;
  }

  /** One unary call on endpoint i, without retries. */
  callOn<T>(i: number, method: string, req: Buffer, decode: (b: Buffer) => T, timeoutMs: number): Promise<T> {
    if (this.closed) return Promise.reject(new StorageError('Closed', 'etcd3 storage is closed'));
    return this.client(i).call(method, req, decode, timeoutMs);
  }

  /** A unary call on the current endpoint, failing over on Unavailable when that is safe. */
  async call<T>(method: string, req: Buffer, decode: (b: Buffer) => T, opts: CallOptions): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const i = this.current;
      try {
        return await this.callOn(i, method, req, decode, Math.max(1, deadline - Date.now()));
      } catch (err) {
        if (this.closed) throw new StorageError('Closed', 'etcd3 storage is closed');
        const st = grpcStatus(err);
        if (!st || st.code !== GrpcStatus.UNAVAILABLE) throw err;
        this.failover(i);
        const retry = opts.idempotent || neverSent(st.details);
        if (!retry || attempt >= this.eps.length || Date.now() >= deadline) throw err;
      }
    }
  }

  /** Opens a Watch stream on the current endpoint. */
  watchStream(method: string): { stream: GrpcStream; endpoint: number } {
    const i = this.current;
    // Like clientv3.WithRequireLeader: a member cut off from the leader ends the
    // stream instead of silently delivering nothing.
    return { stream: this.client(i).stream(method, [['hasleader', 'true']]), endpoint: i };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ep of this.eps) {
      ep.grpc?.close();
      ep.grpc = null;
    }
  }
}

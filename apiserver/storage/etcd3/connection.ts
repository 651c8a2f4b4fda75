// gRPC plumbing to a set of etcd endpoints, each connected lazily: unary calls
// with deadlines and fail-over over one HTTP/2 connection of our own per
// endpoint (unary.ts), and the Watch bidi stream on a grpc-js channel.
// Requests are encoded by proto.ts, so the serializers here are identities.
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { StorageError } from '../errors';
import { logger } from '../../../shared/log';
import { UnaryClient, type UnaryTls } from './unary';

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
  client: grpc.Client | null;
  unary: UnaryClient | null;
}

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // Lists of many objects exceed gRPC's 4 MiB default; etcd itself bounds requests.
  'grpc.max_receive_message_length': -1,
  'grpc.max_send_message_length': -1,
  // Like kube-apiserver: notice a dead etcd under a quiet watch stream. Only
  // while calls are open: etcd answers pings on an idle connection with GOAWAY.
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 0,
  // Reconnect quickly after an etcd restart instead of backing off for minutes.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

const identity = (b: Buffer): Buffer => b;

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
export function grpcStatus(err: unknown): { code: grpc.status; details: string } | undefined {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'number' && 'details' in err) {
    return { code: err.code as grpc.status, details: String(err.details) };
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
  private secureCreds: grpc.ChannelCredentials | null = null;
  private unaryTls: UnaryTls | null = null;

  constructor(
    servers: string[],
    tls: TlsFiles | undefined,
    readonly requestTimeoutMs: number,
  ) {
    if (servers.length === 0) throw new Error('etcd3: no etcd servers given');
    this.eps = servers.map((url) => ({ url, ...parseEndpoint(url), client: null, unary: null }));
    if (this.eps.some((e) => e.secure)) {
      const read = (f?: string) => (f ? readFileSync(f) : null);
      if (!tls?.certFile !== !tls?.keyFile)
        throw new Error('etcd3: TLS needs both a certificate and a key file');
      const [ca, key, cert] = [read(tls?.caFile), read(tls?.keyFile), read(tls?.certFile)];
      this.secureCreds = grpc.credentials.createSsl(ca, key, cert);
      this.unaryTls = { ...(ca ? { ca } : {}), ...(key ? { key } : {}), ...(cert ? { cert } : {}) };
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

  private client(i: number): grpc.Client {
    if (this.closed) throw new StorageError('Closed', 'etcd3 storage is closed');
    const ep = this.eps[i];
    if (!ep.client) {
      const creds = ep.secure && this.secureCreds ? this.secureCreds : grpc.credentials.createInsecure();
      ep.client = new grpc.Client(ep.target, creds, CHANNEL_OPTIONS);
    }
    return ep.client;
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
    const ep = this.eps[i];
    ep.unary ??= new UnaryClient(ep.url, ep.secure ? this.unaryTls : null);
    return ep.unary.call(method, req, decode, timeoutMs);
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
        if (!st || st.code !== grpc.status.UNAVAILABLE) throw err;
        this.failover(i);
        const retry = opts.idempotent || neverSent(st.details);
        if (!retry || attempt >= this.eps.length || Date.now() >= deadline) throw err;
      }
    }
  }

  /** Opens a Watch stream on the current endpoint. */
  watchStream(method: string): { stream: grpc.ClientDuplexStream<Buffer, Buffer>; endpoint: number } {
    const i = this.current;
    const md = new grpc.Metadata();
    // Like clientv3.WithRequireLeader: a member cut off from the leader ends the
    // stream instead of silently delivering nothing.
    md.set('hasleader', 'true');
    const stream = this.client(i).makeBidiStreamRequest<Buffer, Buffer>(method, identity, identity, md);
    return { stream, endpoint: i };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ep of this.eps) {
      ep.client?.close();
      ep.client = null;
      ep.unary?.close();
      ep.unary = null;
    }
  }
}

// tkube's etcd stand-in: the etcd v3 API subset kube-apiserver and tkube's etcd3 backend
// use (KV, Watch, Lease, Maintenance Status, Cluster MemberList, gRPC health) over h2c,
// and etcd's /health and /version over HTTP/1.1, on each client URL's one port as etcd's
// cmux does: a connection that opens with the HTTP/2 preface is gRPC, any other is HTTP/1.
import { statSync } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { join } from 'node:path';
import { ETCD_ERROR, METHOD } from '../shared/etcd/rpc';
import { type Fields, Reader, encode } from '../shared/etcd/wire';
import { ServerSession, type ServerStream } from '../shared/http2/server-session';
import { type Routes, type Streaming, type Unary, serveGrpc } from './grpc';
import { Lessor } from './leases';
import {
  decodeDeleteRequest,
  decodeFirstInt,
  decodeInts,
  decodePutRequest,
  decodeRangeRequest,
  decodeTxnRequest,
} from './messages';
import { EtcdStore } from './store';
import { WatchHub, WatchStream } from './watch';

/** The etcd release whose API this serves (what /version and Status report). */
export const ETCD_VERSION = '3.5.21';
const CLUSTER_VERSION = '3.5.0';
/** etcd's --max-request-bytes default (1.5 MiB). */
export const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface EtcdOptions {
  name: string;
  dataDir: string;
  /** http://host:port URLs to listen on (port 0: a free one). */
  listenClientUrls: string[];
  advertiseClientUrls: string[];
  peerUrls: string[];
  fsync: boolean;
  maxRequestBytes?: number;
  maxTxnOps?: number;
  progressNotifyMs?: number;
}

export class EtcdServer {
  readonly store: EtcdStore;
  readonly lessor: Lessor;
  readonly hub: WatchHub;
  private readonly routes: Routes;
  private readonly listeners: net.Server[] = [];
  private readonly http1 = http.createServer((req, res) => this.http(req, res));
  private readonly sessions = new Set<ServerSession>();
  /** The addresses listened on, as URLs (with the real port). */
  readonly urls: string[] = [];

  constructor(private readonly opts: EtcdOptions) {
    this.store = new EtcdStore({ dataDir: opts.dataDir, fsync: opts.fsync, maxTxnOps: opts.maxTxnOps });
    this.lessor = new Lessor(this.store);
    this.hub = new WatchHub(this.store, opts.progressNotifyMs);
    this.routes = {
      unary: this.unaryRoutes(),
      streaming: this.streamingRoutes(),
      maxRequestBytes: opts.maxRequestBytes ?? MAX_REQUEST_BYTES,
      tooLarge: ETCD_ERROR.requestTooLarge,
    };
  }

  private unaryRoutes(): Map<string, Unary> {
    const s = this.store;
    const l = this.lessor;
    return new Map<string, Unary>([
      [METHOD.range, (m) => s.range(decodeRangeRequest(new Reader(m)))],
      [METHOD.put, (m) => s.put(decodePutRequest(new Reader(m)))],
      [METHOD.deleteRange, (m) => s.deleteRange(decodeDeleteRequest(new Reader(m)))],
      [METHOD.txn, (m) => s.txnResponse(decodeTxnRequest(new Reader(m)))],
      [METHOD.compact, (m) => s.compact(Number(decodeFirstInt(m, 1)))],
      [
        METHOD.leaseGrant,
        (m) => {
          const f = decodeInts(m);
          return l.grant(Number(f.get(1) ?? 0n), f.get(2) ?? 0n);
        },
      ],
      [METHOD.leaseRevoke, (m) => l.revoke(decodeFirstInt(m, 1))],
      [
        METHOD.leaseTimeToLive,
        (m) => {
          const f = decodeInts(m);
          return l.timeToLive(f.get(1) ?? 0n, (f.get(2) ?? 0n) !== 0n);
        },
      ],
      [METHOD.leaseLeases, () => l.list()],
      [METHOD.status, () => this.status()],
      [METHOD.memberList, () => this.memberList()],
      // grpc.health.v1.HealthCheckResponse{status: SERVING}
      [METHOD.healthCheck, () => [[1, 1]]],
    ]);
  }

  private streamingRoutes(): Map<string, Streaming> {
    return new Map<string, Streaming>([
      [METHOD.watch, (send) => new WatchStream(this.hub, send)],
      [
        METHOD.leaseKeepAlive,
        (send) => ({
          onMessage: (m) => send(encode(this.lessor.keepAlive(decodeFirstInt(m, 1)))),
          close: () => {},
        }),
      ],
    ]);
  }

  private dbSize(): number {
    try {
      return statSync(join(this.opts.dataDir, 'data.mdb')).size;
    } catch {
      return 0;
    }
  }

  /** StatusResponse: a one-member cluster whose member leads term 1. */
  private status(): Fields {
    const rev = this.store.published;
    const size = this.dbSize();
    return [
      [1, this.store.header()],
      [2, ETCD_VERSION],
      [3, size],
      [4, this.store.ids.memberId],
      [5, rev],
      [6, 1],
      [7, rev],
      [9, size],
    ];
  }

  /** MemberListResponse: this member. */
  private memberList(): Fields {
    const member: Fields = [
      [1, this.store.ids.memberId],
      [2, this.opts.name],
      ...this.opts.peerUrls.map((u) => [3, u] as const),
      ...this.opts.advertiseClientUrls.map((u) => [4, u] as const),
    ];
    return [
      [1, this.store.header()],
      [2, member],
    ];
  }

  private http(req: http.IncomingMessage, res: http.ServerResponse): void {
    const body = this.httpBody(req.method ?? 'GET', (req.url ?? '/').replace(/\?.*$/, ''));
    res.writeHead(body ? 200 : 404, { 'content-type': body ? 'application/json' : 'text/plain' });
    res.end(body ?? '404 page not found\n');
  }

  /** The JSON of etcd's HTTP endpoints this serves. */
  private httpBody(method: string, path: string): string | undefined {
    if (method !== 'GET' && method !== 'HEAD') return undefined;
    if (path === '/health' || path === '/readyz' || path === '/livez')
      return JSON.stringify({ health: 'true', reason: '' });
    if (path === '/version')
      return JSON.stringify({ etcdserver: ETCD_VERSION, etcdcluster: CLUSTER_VERSION });
    return undefined;
  }

  private onStream(s: ServerStream): void {
    let path = '';
    let method = '';
    for (const [k, v] of s.fields) {
      if (k === ':path') path = v;
      else if (k === ':method') method = v;
    }
    if (method === 'POST') {
      serveGrpc(s, path, this.routes);
      return;
    }
    const body = this.httpBody(method, path.replace(/\?.*$/, ''));
    s.onEnd = () => {};
    if (!body) s.respond(404, [], true);
    else {
      s.respond(200, [['content-type', 'application/json']], false);
      s.write(Buffer.from(body), true);
    }
  }

  /** Hands a connection to gRPC (HTTP/2 preface) or to the HTTP/1 server. */
  private accept(socket: net.Socket): void {
    socket.setNoDelay(true);
    let seen: Buffer = Buffer.alloc(0);
    const sniff = (chunk: Buffer) => {
      seen = seen.length ? Buffer.concat([seen, chunk]) : chunk;
      const n = Math.min(seen.length, PREFACE.length);
      if (seen.length < PREFACE.length && seen.subarray(0, n).equals(PREFACE.subarray(0, n))) return;
      socket.off('data', sniff);
      socket.pause();
      socket.unshift(seen);
      if (seen.subarray(0, PREFACE.length).equals(PREFACE)) {
        const session = new ServerSession(socket, {
          maxConcurrentStreams: 1000,
          onStream: (s) => this.onStream(s),
        });
        this.sessions.add(session);
        session.onClose = () => this.sessions.delete(session);
      } else this.http1.emit('connection', socket);
      socket.resume();
    };
    socket.on('data', sniff);
    socket.on('error', () => socket.destroy());
  }

  async listen(): Promise<void> {
    for (const raw of this.opts.listenClientUrls) {
      const u = new URL(raw);
      if (u.protocol !== 'http:')
        throw new Error(`${raw}: only http:// client URLs are served (no TLS in tkube's etcd)`);
      const srv = net.createServer((s) => this.accept(s));
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(Number(u.port || 2379), u.hostname.replace(/^\[|\]$/g, ''), () => {
          srv.off('error', reject);
          resolve();
        });
      });
      this.listeners.push(srv);
      const port = (srv.address() as net.AddressInfo).port;
      this.urls.push(`http://${u.hostname}:${port}`);
    }
  }

  async stop(): Promise<void> {
    for (const l of this.listeners) l.close();
    for (const s of this.sessions) s.destroy();
    this.http1.closeAllConnections();
    await this.lessor.close();
    await this.store.close();
  }
}

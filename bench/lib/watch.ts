// Watchers for the fan-out scenario: many JSON watch streams. Each event
// carries the writer's wall-clock timestamp in data.ts; the latency is the time
// of receipt (per chunk) minus that stamp. Lines are not parsed as JSON (that
// would cost the client more CPU than the server spends): the stamp is found by
// a byte search. The receivers share the machine's cores with the server
// measured, so they are as lean as they can be: HTTP/1.1 watches are bare TLS
// sockets with a chunked-encoding decoder of their own, and h2 watches are
// streams framed by tkube's own HTTP/2 client, 100 to a connection (as client-go
// multiplexes its watches, opening another connection at kube-apiserver's
// default stream limit); undici's per-chunk stream machinery cost more than
// the decoding.
import * as tls from 'node:tls';
import { H2Session, StreamAborted, type StreamHandler } from '../../shared/http2/client-session';
import { encodeHeaders } from '../../shared/http2/hpack';
import type { Target } from './procs';
import { Samples, wallNow } from './stats';

export interface WatchOpenTask {
  kind: 'watch-open';
  target: Target;
  path: string;
  watchers: number;
  /** Multiplex the watches as h2 streams, STREAMS_PER_CONNECTION to a connection (instead of one HTTP/1.1 connection each). */
  h2?: boolean;
}

/** Waits until every watcher has had `expect` events, then forgets them (a warm-up's events). */
export interface WatchSettleTask {
  kind: 'watch-settle';
  expect: number;
  timeoutMs: number;
}

export interface WatchCollectTask {
  kind: 'watch-collect';
  /** Events each watcher should see. */
  expect: number;
  timeoutMs: number;
}

export interface WatchResult {
  opened: number;
  received: number;
  /** The fewest events any watcher received. */
  minPerWatcher: number;
  lat: Float64Array;
  errors: number;
  errorSamples: string[];
}

/** kube-apiserver's default SETTINGS_MAX_CONCURRENT_STREAMS (and tkube's). */
const STREAMS_PER_CONNECTION = 100;

const STAMP = Buffer.from('"ts":"');
const MODIFIED = Buffer.from('{"type":"MODIFIED"');
const NL = 0x0a;
const QUOTE = 0x22;

/**
 * One watch stream. The bytes are searched where they lie (no decoding of the
 * whole chunk into a string): the event type by a prefix compare, the stamp by
 * a native search, and only the stamp's digits become a string.
 */
class Watcher {
  received = 0;
  /** The start of a line cut by the end of the previous chunk. */
  private pending: Buffer | null = null;
  closed = false;

  constructor(
    private readonly lat: Samples,
    readonly error: (e: string) => void,
  ) {}

  data(chunk: Buffer): void {
    const now = wallNow();
    let buf = chunk;
    if (this.pending) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let start = 0;
    let nl: number;
    while ((nl = buf.indexOf(NL, start)) >= 0) {
      this.line(buf, start, nl, now);
      start = nl + 1;
    }
    // A copy: h2 payloads are views of the connection's read buffer.
    if (start < buf.length) this.pending = Buffer.from(buf.subarray(start));
  }

  private line(buf: Buffer, start: number, end: number, now: number): void {
    if (
      end - start < MODIFIED.length ||
      buf.compare(MODIFIED, 0, MODIFIED.length, start, start + MODIFIED.length)
    ) {
      const text = buf.toString('utf8', start, Math.min(end, start + 200));
      if (text.trim()) this.error(`unexpected event ${text}`);
      return;
    }
    const at = buf.indexOf(STAMP, start);
    if (at < 0 || at >= end) return;
    const from = at + STAMP.length;
    const to = buf.indexOf(QUOTE, from);
    this.lat.push(now - Number(buf.toString('latin1', from, to)));
    this.received++;
  }
}

/**
 * One HTTP/1.1 watch on a TLS socket of its own: the request, the response head
 * (200 wanted), then the chunked body decoded into the watcher's lines.
 */
class RawWatch {
  private head: Buffer | null = Buffer.alloc(0);
  /** Chunked body: bytes left of the current chunk's data (-1: reading a size line, -2: its CRLF). */
  private left = -1;
  private sizeLine = '';
  private chunked = true;
  private readonly socket: tls.TLSSocket;

  constructor(
    t: Target,
    path: string,
    private readonly w: Watcher,
    private readonly opened: (err?: string) => void,
  ) {
    const u = new URL(t.origin);
    this.socket = tls.connect({
      host: u.hostname,
      port: Number(u.port),
      ca: t.ca,
      cert: t.cert,
      key: t.key,
      ALPNProtocols: ['http/1.1'],
    });
    this.socket.on('secureConnect', () =>
      this.socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nAccept: application/json\r\n\r\n`),
    );
    this.socket.on('data', (d: Buffer) => this.data(d));
    this.socket.on('error', (e) => {
      if (this.head) this.settle(`watch open: ${String(e)}`);
      else if (!w.closed) w.error(`watch stream: ${String(e)}`);
    });
    this.socket.on('close', () => {
      if (this.head) this.settle('watch open: the connection closed before an answer');
    });
  }

  private settled = false;
  private settle(err?: string): void {
    if (this.settled) return;
    this.settled = true;
    this.opened(err);
  }

  close(): void {
    this.socket.destroy();
  }

  private data(d: Buffer): void {
    if (this.head) {
      const all = Buffer.concat([this.head, d]);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) {
        this.head = all;
        return;
      }
      const head = all.toString('latin1', 0, end);
      this.head = null;
      if (!/^HTTP\/1\.1 200 /.test(head)) {
        this.settle(`watch ${head.split('\r\n')[0]}`);
        this.socket.destroy();
        return;
      }
      this.chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head);
      this.settle();
      d = all.subarray(end + 4);
    }
    if (!this.chunked) {
      this.w.data(d);
      return;
    }
    let i = 0;
    while (i < d.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, d.length - i);
        this.w.data(d.subarray(i, i + n));
        this.left -= n;
        i += n;
        if (this.left === 0) this.left = -2;
      } else if (this.left === -2) {
        // The CRLF after a chunk's data (possibly split across reads).
        if (d[i] === 0x0a) this.left = -1;
        i++;
      } else {
        const nl = d.indexOf(0x0a, i);
        if (nl < 0) {
          this.sizeLine += d.toString('latin1', i);
          return;
        }
        const size = parseInt(this.sizeLine + d.toString('latin1', i, nl), 16);
        this.sizeLine = '';
        i = nl + 1;
        if (!(size > 0)) {
          this.socket.destroy(); // the last chunk: the server ended the watch
          return;
        }
        this.left = size;
      }
    }
  }
}

/** One worker's share of the watchers; open() once, then collect() once. */
export class WatchGroup {
  private readonly sessions: H2Session[] = [];
  private readonly watchers: Watcher[] = [];
  private readonly lat = new Samples(1 << 16);
  private errors = 0;
  private readonly errorSamples: string[] = [];
  private readonly raw: RawWatch[] = [];

  private error(e: string): void {
    this.errors++;
    if (this.errorSamples.length < 5) this.errorSamples.push(e.slice(0, 300));
  }

  async open(t: WatchOpenTask): Promise<number> {
    const openRaw = () =>
      new Promise<void>((resolve) => {
        const w = new Watcher(this.lat, (e) => this.error(e));
        const r = new RawWatch(t.target, t.path, w, (err) => {
          if (err) this.error(err);
          else this.watchers.push(w);
          resolve();
        });
        this.raw.push(r);
      });
    let openStream: (() => Promise<void>) | undefined;
    if (t.h2) {
      let opened = 0;
      const session = () => {
        if (opened++ % STREAMS_PER_CONNECTION === 0)
          this.sessions.push(
            new H2Session({
              url: t.target.origin,
              tls: { ca: t.target.ca, cert: t.target.cert, key: t.target.key },
            }),
          );
        return this.sessions[this.sessions.length - 1];
      };
      const block = encodeHeaders([
        [':method', 'GET'],
        [':scheme', 'https'],
        [':authority', new URL(t.target.origin).host],
        [':path', t.path],
        ['accept', 'application/json'],
      ]);
      openStream = () =>
        new Promise<void>((resolve) => {
          const w = new Watcher(this.lat, (e) => this.error(e));
          let answered = false;
          const handler: StreamHandler = {
            headers: (fields) => {
              if (answered) return;
              answered = true;
              if (fields[':status'] === '200') this.watchers.push(w);
              else this.error(`watch ${fields[':status']}`);
              resolve();
            },
            data: (chunk) => w.data(chunk),
            aborted: (err) => {
              if (!answered) {
                answered = true;
                this.error(`watch open: ${err.message}`);
                resolve();
              } else if (!w.closed) this.error(`watch stream: ${err.message}`);
            },
          };
          try {
            session().request(block, Buffer.alloc(0), handler);
          } catch (e) {
            handler.aborted(new StreamAborted(String((e as Error)?.message ?? e), true));
          }
        });
    }
    const openOne = openStream ?? openRaw;
    // Open in waves: a thousand simultaneous TLS handshakes only measure the handshake queue.
    const wave = 25;
    for (let i = 0; i < t.watchers; i += wave) {
      await Promise.all(
        Array.from({ length: Math.min(wave, t.watchers - i) }, () =>
          openOne().catch((e) => this.error(`watch open: ${String(e)}`)),
        ),
      );
    }
    return this.watchers.length;
  }

  private async waitFor(expect: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && this.watchers.some((w) => w.received < expect))
      await new Promise((r) => setTimeout(r, 20));
  }

  /** The warm-up's events were delivered (or the wait timed out): start counting afresh; the events seen. */
  async settle(t: WatchSettleTask): Promise<number> {
    await this.waitFor(t.expect, t.timeoutMs);
    const seen = this.watchers.reduce((s, w) => s + w.received, 0);
    for (const w of this.watchers) w.received = 0;
    this.lat.length = 0;
    return seen;
  }

  async collect(t: WatchCollectTask): Promise<WatchResult> {
    await this.waitFor(t.expect, t.timeoutMs);
    for (const w of this.watchers) w.closed = true;
    for (const r of this.raw) r.close();
    for (const s of this.sessions) s.destroy(new Error('the watch scenario is over'));
    return {
      opened: this.watchers.length,
      received: this.watchers.reduce((s, w) => s + w.received, 0),
      minPerWatcher: this.watchers.reduce((m, w) => Math.min(m, w.received), Infinity),
      lat: this.lat.toArray(),
      errors: this.errors,
      errorSamples: this.errorSamples,
    };
  }
}

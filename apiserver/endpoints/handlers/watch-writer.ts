// Writing watch events to many clients. The cache queues each event on every
// matching watcher synchronously; the watchers with something queued are then
// written in one pass on the next turn of the event loop, one socket write per
// watcher carrying everything it has queued. There is no fixed window: a pass
// waits at most as long as the previous one took (nothing with a few watchers),
// and events arriving meanwhile go out together, so the batch grows only with
// the load. A pass yields to I/O every few milliseconds (the writes behind a
// fan-out, and the store's next events, are not held up by a thousand sockets),
// and starts at a random watcher so the same watchers are not always last.
import { ServerResponse } from 'node:http';
import type { Res } from '../../server/http';
import type { WatchItem } from '../../storage/cacher/watchers';

/** A watch with something queued: writes it (or notes it cannot, under backpressure). */
export interface WatchSink {
  flush(): void;
}

/** How long one pass writes before it lets I/O in. */
const SLICE_MS = 2;
/**
 * A pass starts no sooner than PACE times the CPU time of the previous pass
 * after it ended: fan-out takes at most about 1/(1+PACE) of the process, and
 * the wait it adds is never more than what the last pass cost (a few watchers:
 * nothing; a thousand: a few milliseconds, during which their next events join).
 */
const PACE = 1;
/**
 * The most a pass waits: a large pass (1,000 HTTP/1.1 watchers, ~30 ms) would otherwise add its
 * own length to every event's latency (25 ms here put the p99 of 1,000 x 300 at 93-97 ms, 4 ms
 * at 62-70, for ~15% more of a core). A pass still yields to I/O every SLICE_MS.
 */
export const MAX_WAIT_MS = 4;

export class FlushScheduler {
  /** Sinks of the pass under way, written from `offset` round, `done` so far. */
  private current: WatchSink[] = [];
  private offset = 0;
  private done = 0;
  /** Sinks that became ready meanwhile: the next pass. */
  private next: WatchSink[] = [];
  private scheduled = false;
  /** CPU (wall time of its slices) the pass under way has taken. */
  private busy = 0;
  /** When the next pass may start. */
  private earliest = 0;

  mark(s: WatchSink): void {
    this.next.push(s);
    if (!this.scheduled) this.schedule();
  }

  private schedule(): void {
    this.scheduled = true;
    const wait = this.earliest - performance.now();
    if (wait >= 1) setTimeout(this.run, wait);
    else setImmediate(this.run);
  }

  private readonly run = (): void => {
    const start = performance.now();
    const until = start + SLICE_MS;
    if (this.done === this.current.length) {
      this.current = this.next;
      this.next = [];
      this.done = 0;
      this.busy = 0;
      this.offset = Math.floor(Math.random() * this.current.length);
    }
    const n = this.current.length;
    while (this.done < n) {
      const s = this.current[(this.offset + this.done) % n];
      this.done++;
      s.flush();
      if ((this.done & 15) === 0 && this.done < n && performance.now() >= until) {
        this.busy += performance.now() - start;
        setImmediate(this.run);
        return;
      }
    }
    const end = performance.now();
    this.busy += end - start;
    this.earliest = end + Math.min(this.busy * PACE, MAX_WAIT_MS);
    this.current = [];
    this.done = 0;
    this.scheduled = false;
    if (this.next.length) this.schedule();
  };
}

/** One scheduler per process: every watch shares its passes. */
export const flushScheduler = new FlushScheduler();

const CRLF = Buffer.from('\r\n');

/**
 * Where a watch's bytes go. HTTP/1.1 responses are written straight to their
 * socket as chunks of the chunked encoding, so one frame (with its chunk
 * framing) is a single buffer shared by every watcher: one TLS write of it, no
 * per-watcher copy. HTTP/2 streams frame their data themselves, and the writes
 * of a turn to all streams of a connection leave in one TLS write.
 */
export interface WatchOutput {
  /** Writes the frames; false when the client is not keeping up (wait for onDrain). */
  write(frames: Buffer[]): boolean;
  onDrain(cb: () => void): void;
  /** What to write for one frame (memoised on the item when its frame is shared by every watcher). */
  chunk(item: WatchItem, frame: Buffer): Buffer;
}

/** `frameKey`: the key the item's shared frame is memoised under, null when the frame is this watch's own. */
export function watchOutput(res: Res, frameKey: string | null): WatchOutput {
  const socket = res instanceof ServerResponse ? res.socket : null;
  // Straight to the socket only for a chunked HTTP/1.1 response that owns its connection and has
  // nothing of its own buffered (Node's response then writes to the socket directly too), and
  // whose write nobody wraps (the audit log's capture of response bodies does).
  if (
    socket &&
    res instanceof ServerResponse &&
    !Object.hasOwn(res, 'write') &&
    res.headersSent &&
    (res as any).chunkedEncoding === true &&
    (socket as any)._httpMessage === res &&
    !(res as any).outputData?.length
  ) {
    const key = frameKey === null ? null : 'h1|' + frameKey;
    return {
      write(frames) {
        if (socket.destroyed) return true;
        if (frames.length === 1) return socket.write(frames[0]);
        socket.cork();
        for (const f of frames) socket.write(f);
        socket.uncork();
        return socket.writableLength < socket.writableHighWaterMark;
      },
      onDrain(cb) {
        socket.once('drain', cb);
      },
      chunk(item, frame) {
        if (key === null) return chunked(frame);
        const frames = (item.frames ??= new Map());
        let c = frames.get(key);
        if (!c) frames.set(key, (c = chunked(frame)));
        return c;
      },
    };
  }
  return {
    write(frames) {
      if (res.destroyed) return true;
      if (frames.length === 1) return res.write(frames[0]);
      // No joined copy per watcher: HTTP/1.1 writes the corked chunks in one writev, and an
      // HTTP/2 connection joins a turn's frames once for all its streams.
      res.cork();
      let ok = true;
      for (const f of frames) ok = res.write(f);
      res.uncork();
      return ok;
    },
    onDrain(cb) {
      res.once('drain', cb);
    },
    chunk: (_item, frame) => frame,
  };
}

/** One chunk of HTTP/1.1's chunked encoding. */
function chunked(frame: Buffer): Buffer {
  const head = Buffer.from(frame.length.toString(16) + '\r\n', 'latin1');
  return Buffer.concat([head, frame, CRLF], head.length + frame.length + 2);
}

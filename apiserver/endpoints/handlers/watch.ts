// Watch: a stream of events (JSON lines or length-prefixed Protobuf frames)
// over chunked HTTP/1.1 or an HTTP/2 stream, ended by timeoutSeconds or a
// randomised multiple of --min-request-timeout. Bookmarks when asked for.
import type { ServerResponse } from 'node:http';
import { badRequest } from '../../../shared/api/status';
import { watchEncoder, watchFrameKey } from '../encoding';
import { warningHeaders } from '../respond';
import { queryBool, queryInt, type Scope } from '../scope';
import type { WatchStream } from '../../registry/reads';
import type { WatchItem } from '../../storage/cacher/watchers';
import { flushScheduler, watchOutput, type WatchSink } from './watch-writer';

/** Roughly how often bookmarks go out (Kubernetes: about once a minute). */
const BOOKMARK_INTERVAL_MS = 60_000;

export async function handleWatch(s: Scope): Promise<void> {
  const q = s.query;
  let timeout = queryInt(q, 'timeoutSeconds');
  if (timeout !== undefined && timeout < 0)
    throw badRequest('timeoutSeconds: must be a non-negative integer');
  if (!timeout) timeout = Math.floor(s.minRequestTimeoutSeconds * (1 + Math.random()));
  const bookmarks = queryBool(q, 'allowWatchBookmarks') === true;
  const stream = await s.served.store.reader.watch(s.ctx, {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    apiVersion: s.served.info.groupVersion,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
    sendInitialEvents: queryBool(q, 'sendInitialEvents'),
    allowWatchBookmarks: bookmarks,
  });
  await serveWatch(s, stream, timeout * 1000, bookmarks);
}

export async function serveWatch(
  s: Scope,
  stream: WatchStream,
  timeoutMs: number,
  bookmarks: boolean,
): Promise<void> {
  const res = s.res as ServerResponse;
  const contentType =
    s.rep.format === 'protobuf' ? 'application/vnd.kubernetes.protobuf;stream=watch' : s.rep.mediaType;
  res.writeHead(200, {
    'content-type': contentType,
    'cache-control': 'no-cache, private',
    ...warningHeaders(s.ctx.warnings),
  });
  res.flushHeaders?.();
  const w: Watch = {
    res,
    stream,
    encode: watchEncoder(s.rep, s.served),
    bookmarks,
    ended: false,
    clientGone: false,
    end: () => {
      if (w.ended) return;
      w.ended = true;
      clearTimeout(timer);
      clearInterval(bookmarkTimer);
      stream.close();
      w.onEnd?.();
    },
  };
  const timer = setTimeout(() => {
    if (bookmarks) stream.bookmark();
    // Let the final bookmark flush before closing.
    setImmediate(w.end);
  }, timeoutMs);
  const bookmarkTimer = bookmarks
    ? setInterval(() => stream.bookmark(), BOOKMARK_INTERVAL_MS * (0.9 + Math.random() * 0.2))
    : undefined;
  // The response's close says the client left (the request's fires once its body is read).
  res.on('close', () => {
    w.clientGone = true;
    w.end();
  });
  try {
    // A conversion webhook (prepare) is asynchronous: such watches read their events one batch at a time.
    if (s.served.prepare) await iterate(w, s.served.prepare);
    else await listen(w, watchFrameKey(s.rep, s.served));
  } finally {
    w.end();
    if (!res.writableEnded && !res.destroyed) res.end();
  }
}

interface Watch {
  res: ServerResponse;
  stream: WatchStream;
  encode: (item: WatchItem) => Buffer;
  bookmarks: boolean;
  ended: boolean;
  clientGone: boolean;
  end: () => void;
  /** Told when the watch ends (the writer then finishes). */
  onEnd?: () => void;
}

/**
 * Written by the shared flush scheduler: the watcher's queue is taken whole on
 * each pass, so events that arrived together go out in one write.
 */
function listen(w: Watch, frameKey: string | null): Promise<void> {
  const out = watchOutput(w.res, frameKey);
  return new Promise((resolve, reject) => {
    let draining = false;
    let finished = false;
    const write = () => {
      const frames: Buffer[] = [];
      let error = false;
      for (const item of w.stream.takeQueued()) {
        if (item.type === 'BOOKMARK' && !w.bookmarks) continue;
        frames.push(out.chunk(item, w.encode(item)));
        if (item.type === 'ERROR') {
          error = true;
          break;
        }
      }
      if (frames.length && !out.write(frames) && !error) {
        draining = true;
        out.onDrain(() => {
          draining = false;
          flushScheduler.mark(sink);
        });
      }
      // An ERROR ends the watch, as a decoding error does in Kubernetes.
      if (error) w.end();
    };
    const sink: WatchSink = {
      flush() {
        if (finished) return;
        const gone = w.clientGone || w.res.destroyed;
        try {
          if (!gone && !draining) write();
        } catch (err) {
          // This watch's failure (an object that does not encode) is its own, not the pass's.
          finished = true;
          reject(err);
          return;
        }
        if (gone || w.ended || (w.stream.closed && !w.stream.backlog)) {
          finished = true;
          resolve();
        }
      },
    };
    w.onEnd = () => flushScheduler.mark(sink);
    w.stream.listen(() => flushScheduler.mark(sink));
  });
}

/** One batch at a time, each prepared (converted by a webhook) before it is written. */
async function iterate(w: Watch, prepare: (objs: unknown[]) => Promise<void>): Promise<void> {
  const { res, stream } = w;
  for await (const items of stream) {
    if (res.destroyed || res.writableEnded) break;
    // A conversion webhook failing ends the watch, as a decoding error does in Kubernetes.
    await prepare(items.flatMap((i) => (i.object ? [i.object.obj] : [])));
    const frames: Buffer[] = [];
    for (const item of items) {
      if (item.type === 'BOOKMARK' && !w.bookmarks) continue;
      frames.push(w.encode(item));
      if (item.type === 'ERROR') {
        w.end();
        break;
      }
    }
    if (!frames.length) continue;
    const ok = res.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
    if (!ok && !w.ended)
      await new Promise<void>((r) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          r();
        };
        res.on('drain', done);
        res.on('close', done);
      });
  }
}

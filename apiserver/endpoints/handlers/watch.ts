// Watch: a stream of events (JSON lines or length-prefixed Protobuf frames)
// over chunked HTTP/1.1 or an HTTP/2 stream, ended by timeoutSeconds or a
// randomised multiple of --min-request-timeout. Bookmarks when asked for.
import type { ServerResponse } from 'node:http';
import { badRequest } from '../../../shared/api/status';
import { watchEncoder } from '../encoding';
import { warningHeaders } from '../respond';
import { queryBool, queryInt, type Scope } from '../scope';
import type { WatchStream } from '../../registry/reads';

/** Roughly how often bookmarks go out (Kubernetes: about once a minute). */
const BOOKMARK_INTERVAL_MS = 60_000;

export async function handleWatch(s: Scope): Promise<void> {
  const q = s.query;
  let timeout = queryInt(q, 'timeoutSeconds');
  if (timeout !== undefined && (Number.isNaN(timeout) || timeout < 0))
    throw badRequest('timeoutSeconds: must be a non-negative integer');
  if (!timeout) timeout = Math.floor(s.minRequestTimeoutSeconds * (1 + Math.random()));
  const bookmarks = queryBool(q, 'allowWatchBookmarks') === true;
  const stream = await s.served.store.reader.watch(s.ctx, {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
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
  const encode = watchEncoder(s.rep, s.served);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    clearInterval(bookmarkTimer);
    stream.close();
  };
  const timer = setTimeout(() => {
    if (bookmarks) stream.bookmark();
    // Let the final bookmark flush before closing.
    setImmediate(end);
  }, timeoutMs);
  const bookmarkTimer = bookmarks
    ? setInterval(() => stream.bookmark(), BOOKMARK_INTERVAL_MS * (0.9 + Math.random() * 0.2))
    : undefined;
  // The response's close says the client left (the request's fires once its body is read).
  res.on('close', end);
  activeWatches++;
  try {
    for await (const batch of stream) {
      if (res.destroyed || res.writableEnded) break;
      let items = batch;
      if (activeWatches >= COALESCE_FROM_WATCHERS) {
        // Many watchers: gather a window's events into one write per watcher (one TLS record
        // and syscall instead of one per event), all flushed on one shared timer.
        await flushTick();
        const more = stream.takeQueued();
        if (more.length) items = items.concat(more);
      }
      // A conversion webhook failing ends the watch, as a decoding error does in Kubernetes.
      if (s.served.prepare) await s.served.prepare(items.flatMap((i) => (i.object ? [i.object.obj] : [])));
      const frames: Buffer[] = [];
      for (const item of items) {
        if (item.type === 'BOOKMARK' && !bookmarks) continue;
        frames.push(encode(item));
        if (item.type === 'ERROR') {
          end();
          break;
        }
      }
      if (!frames.length) continue;
      const ok = res.write(frames.length === 1 ? frames[0] : Buffer.concat(frames));
      if (!ok && !ended)
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
  } finally {
    activeWatches--;
    end();
    if (!res.writableEnded && !res.destroyed) res.end();
  }
}

/** Watches being served by this process. */
let activeWatches = 0;
/** From this many open watches on, events are written in windows of COALESCE_WINDOW_MS. */
const COALESCE_FROM_WATCHERS = 100;
const COALESCE_WINDOW_MS = 20;
let tick: Promise<void> | null = null;

/** Resolves at the end of the current write window (one timer for every watcher). */
function flushTick(): Promise<void> {
  return (tick ??= new Promise((r) =>
    setTimeout(() => {
      tick = null;
      r();
    }, COALESCE_WINDOW_MS),
  ));
}

// All watches of one client share a single etcd Watch stream. Watchers of the
// same prefix that start at the same point also share one etcd watch: etcd
// then sends each event once, and we fan the decoded event objects out to every
// watcher's WatchQueue (etcd pushes a stream's responses through one small
// buffer, so a hundred identical etcd watches turn each write into a hundred
// responses and stall delivery). Each etcd watch has an ID we choose, used to
// route responses. When the stream breaks, it is reopened and every etcd watch
// re-created from the revision after the last one it delivered.
//
// progress() (consistent reads from the watch cache): etcd 3.4.23 answers a
// client's progress request (WatchRequest.progress_request) on the stream's
// control channel with the store's revision at once, and its send loop picks
// control responses and queued events in random order, so that answer can
// overtake events of the very revisions it names (etcd-io/etcd#15220, fixed in
// 3.4.31 / 3.5.13), more so for a watch that is still catching up. What etcd
// does keep, on every version, is the order of one watch's events. So a
// progress here is a revision fence: read the current revision R (one
// linearizable read shared by concurrent callers, revision-fence.ts), then wait
// until this watch has delivered an event (or a timed progress notification,
// which etcd sends through the watch's own event channel) at or after R, or
// until every revision between is one of this client's own writes outside the
// watched prefix (own-writes.ts).
import type { RevisionFence } from './revision-fence';
import { OwnWrites } from './own-writes';
import type { StorageEvent, StorageWatch } from '../interface';
import { StorageError, errCompacted } from '../errors';
import { WatchQueue } from '../watch-queue';
import { logger } from '../../../shared/log';
import { type Connection, grpcStatus } from './connection';
import { GrpcStatus, type GrpcStream } from './grpc-client';
import { METHOD, prefixEnd, watchCancel, watchCreate } from './proto';
import { type RawEvent, type WatchResp, decodeWatch } from './responses';

const log = logger('storage/etcd3/watch');

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 2_000;
/** How long to wait for etcd to name the compacted revision. */
const PROBE_TIMEOUT_MS = 3_000;

/** One etcd watch and the watchers it feeds. */
interface Sub {
  readonly id: number;
  /** The watched prefix; null for a probe, which is never shared. */
  readonly prefix: string | null;
  readonly key: Buffer;
  readonly rangeEnd: Buffer | undefined;
  /** etcd sends each update's and delete's previous value (probes and watch caches go without). */
  readonly prevKv: boolean;
  /** Every event up to here was delivered (or precedes the start); 0 = "now", not yet known. */
  lastRev: number;
  /** Started "from now", so lastRev trails etcd's current revision only by events in flight. */
  readonly fromNow: boolean;
  /** Watchers, each with the revision up to which it skips events (it joined later). */
  readonly members: Map<WatchQueue, number>;
  /** Events of a response etcd split into fragments, until the last fragment. */
  frag: RawEvent[] | null;
  /** Probes only: etcd canceled the watch (compactRevision 0 when it did not say). */
  onCanceled?: (compactRevision: number) => void;
  /** progress() callers waiting for lastRev to reach a revision; false when the watch ends first. */
  fenceWaiters?: { rev: number; done: (reached: boolean) => void }[];
  /**
   * lastRev when a fence last failed: until the watch moves on (or a second
   * passed: the gap may have been this client's write, acknowledged late),
   * progress() gives up at once.
   */
  fenceMissedAt?: number;
  fenceRetryAt?: number;
}

/**
 * How long progress() waits for the watch to deliver up to the fence. Events of
 * acknowledged writes are already queued in etcd, so they come quickly when
 * they exist; an idle prefix has none (other keys moved the revision), and its
 * reads then go to etcd instead.
 */
const FENCE_WAIT_MS = 25;
/** How long a failed fence keeps an idle watch from trying again. */
const FENCE_RETRY_MS = 1_000;

function toEvent(e: RawEvent): StorageEvent {
  const kv = e.kv!;
  if (e.type === 1) {
    return { type: 'delete', key: kv.key, revision: kv.modRevision, kv: null, prevKv: e.prevKv };
  }
  const created = kv.createRevision === kv.modRevision;
  return {
    type: created ? 'create' : 'update',
    key: kv.key,
    revision: kv.modRevision,
    kv,
    prevKv: created ? null : e.prevKv,
  };
}

export class WatchManager {
  private readonly subs = new Map<number, Sub>();
  /** Shareable etcd watches by prefix. */
  private readonly byPrefix = new Map<string, Set<Sub>>();
  /** Watches whose last fence failed (fenceMissedAt set): what a write of ours may unblock. */
  private readonly fenceMissed = new Set<Sub>();
  private nextId = 1;
  private stream: GrpcStream | null = null;
  private streamEndpoint = -1;
  /** IDs whose create request is unanswered on the current stream, in order (etcd answers in order). */
  private pendingCreates: number[] = [];
  private reconnectTimer: NodeJS.Timeout | null = null;
  private backoffMs = MIN_BACKOFF_MS;
  private closed = false;
  /** Streams opened so far (for tests and metrics). */
  streamsOpened = 0;

  /** This client's own writes, which let an idle prefix pass a fence (see own-writes.ts). */
  private readonly ownWrites = new OwnWrites();

  constructor(
    private readonly conn: Connection,
    private readonly fence?: RevisionFence,
  ) {}

  /**
   * Records one of this client's acknowledged writes. A watch of its prefix
   * will see its event, so a fence that failed there is worth trying again.
   */
  noteWrite(revision: number, key: string): void {
    this.ownWrites.note(revision, key);
    for (const sub of this.fenceMissed)
      if (sub.prefix !== null && key.startsWith(sub.prefix)) this.clearFenceMiss(sub);
  }

  /** Watchers being fed. */
  get watcherCount(): number {
    let n = 0;
    for (const sub of this.subs.values()) n += sub.members.size;
    return n;
  }

  /** etcd watches open on the stream (fewer than watchers when shared). */
  get etcdWatchCount(): number {
    return this.subs.size;
  }

  watch(prefix: string, fromRevision: number, bufferSize?: number, prevKv = true): StorageWatch {
    const from = Math.max(0, fromRevision);
    let sub: Sub | undefined;
    const queue = new WatchQueue(from, bufferSize, () => sub && this.leave(sub, queue));
    if (this.closed) {
      queue.fail(new StorageError('Closed', 'etcd3 storage is closed'));
      return queue;
    }
    sub = this.shareable(prefix, from, prevKv);
    if (sub) {
      // Joining "from now": now is the newest revision this etcd watch delivered.
      const skip = from === 0 ? sub.lastRev : from;
      if (from === 0 && sub.lastRev > 0) queue.setStartRevision(sub.lastRev);
      sub.members.set(queue, skip);
      return this.withProgress(queue, sub);
    }
    sub = this.add({
      id: this.nextId++,
      prefix,
      key: Buffer.from(prefix, 'utf8'),
      rangeEnd: prefixEnd(prefix),
      prevKv,
      lastRev: from,
      fromNow: from === 0,
      members: new Map([[queue, from]]),
      frag: null,
    });
    return this.withProgress(queue, sub);
  }

  private withProgress(queue: WatchQueue, sub: Sub): StorageWatch {
    const fence = this.fence;
    if (!fence) return queue;
    return Object.assign(queue, { progress: () => this.progress(fence, queue, sub) });
  }

  /** See the file comment: a revision fence, then this watch's own order. */
  private async progress(fence: RevisionFence, queue: WatchQueue, sub: Sub): Promise<number | undefined> {
    if (queue.closed || this.subs.get(sub.id) !== sub) return undefined;
    if (
      sub.fenceMissedAt !== undefined &&
      sub.lastRev <= sub.fenceMissedAt &&
      Date.now() < (sub.fenceRetryAt ?? 0)
    )
      return undefined;
    let rev: number;
    try {
      rev = await fence.current();
    } catch {
      return undefined;
    }
    if (!this.covered(sub, rev) && !(await this.reached(sub, rev)) && !this.covered(sub, rev)) {
      sub.fenceMissedAt = sub.lastRev;
      sub.fenceRetryAt = Date.now() + FENCE_RETRY_MS;
      this.fenceMissed.add(sub);
      return undefined;
    }
    this.clearFenceMiss(sub);
    // Delivered to the queue; the consumer must also have applied it.
    return (await queue.idle()) ? rev : undefined;
  }

  /**
   * True when the watch delivered everything up to rev: it did, or every
   * revision it has not seen is this client's write outside its prefix (then
   * it is moved on to rev, which is also where it would resume).
   */
  private covered(sub: Sub, rev: number): boolean {
    if (sub.lastRev >= rev) return true;
    if (sub.prefix === null || sub.lastRev === 0 || sub.frag || this.subs.get(sub.id) !== sub) return false;
    if (!this.ownWrites.allOutside(sub.prefix, sub.lastRev, rev)) return false;
    this.advance(sub, rev);
    return true;
  }

  /** Resolves true once the etcd watch delivered everything up to rev, false after FENCE_WAIT_MS. */
  private reached(sub: Sub, rev: number): Promise<boolean> {
    if (sub.lastRev >= rev) return Promise.resolve(true);
    if (this.subs.get(sub.id) !== sub) return Promise.resolve(false);
    return new Promise((resolve) => {
      const entry = {
        rev,
        done: (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => {
        // advance() may have replaced the array meanwhile: take the entry out of the current one.
        if (sub.fenceWaiters) sub.fenceWaiters = sub.fenceWaiters.filter((w) => w !== entry);
        resolve(false);
      }, FENCE_WAIT_MS);
      (sub.fenceWaiters ??= []).push(entry);
    });
  }

  /** Moves the watch's delivered revision on and releases the progress() callers it satisfies. */
  private advance(sub: Sub, rev: number): void {
    sub.lastRev = rev;
    const waiters = sub.fenceWaiters;
    if (!waiters?.length) return;
    sub.fenceWaiters = waiters.filter((w) => w.rev > rev);
    for (const w of waiters) if (w.rev <= rev) w.done(true);
  }

  /** The watch ended: nobody waiting on it will see its revision move. */
  private endFences(sub: Sub): void {
    const waiters = sub.fenceWaiters;
    sub.fenceWaiters = undefined;
    for (const w of waiters ?? []) w.done(false);
  }

  /**
   * An etcd watch on prefix that delivers exactly what a new watcher from
   * `from` needs: its next event is the first after `from`, or, for a watcher
   * from now on, a watch that itself started from now. Other starts get their
   * own etcd watch: an older one would need history, a newer one might be ahead
   * of etcd or still replaying history. Sharers also agree on previous values.
   */
  private shareable(prefix: string, from: number, prevKv: boolean): Sub | undefined {
    const subs = this.byPrefix.get(prefix);
    if (!subs) return undefined;
    for (const sub of subs)
      if ((from === 0 ? sub.fromNow : sub.lastRev === from) && sub.prevKv === prevKv) return sub;
    return undefined;
  }

  private add(sub: Sub): Sub {
    this.subs.set(sub.id, sub);
    if (sub.prefix !== null) {
      let set = this.byPrefix.get(sub.prefix);
      if (!set) this.byPrefix.set(sub.prefix, (set = new Set()));
      set.add(sub);
    }
    if (this.stream) this.sendCreate(sub);
    else this.ensureStream();
    return sub;
  }

  private clearFenceMiss(sub: Sub): void {
    sub.fenceMissedAt = undefined;
    this.fenceMissed.delete(sub);
  }

  private remove(sub: Sub): void {
    this.subs.delete(sub.id);
    this.fenceMissed.delete(sub);
    this.endFences(sub);
    if (sub.prefix === null) return;
    const set = this.byPrefix.get(sub.prefix);
    set?.delete(sub);
    if (set?.size === 0) this.byPrefix.delete(sub.prefix);
  }

  /**
   * Asks etcd for its compacted revision by watching from a revision that etcd
   * just reported as compacted: it cancels such a watch naming compact_revision.
   */
  probeCompactRevision(compactedRev: number): Promise<number | undefined> {
    if (this.closed || compactedRev <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.cancel(sub);
        resolve(undefined);
      }, PROBE_TIMEOUT_MS);
      const sub = this.add({
        id: this.nextId++,
        prefix: null,
        key: Buffer.from('compact_rev_key'),
        rangeEnd: undefined,
        prevKv: false,
        lastRev: compactedRev - 1,
        fromNow: false,
        members: new Map(),
        frag: null,
        onCanceled: (rev) => {
          clearTimeout(timer);
          resolve(rev > 0 ? rev : undefined);
        },
      });
    });
  }

  /** A watcher was stopped or cut off; the etcd watch ends with its last watcher. */
  private leave(sub: Sub, queue: WatchQueue): void {
    if (!sub.members.delete(queue)) return;
    if (sub.members.size === 0) this.cancel(sub);
  }

  private cancel(sub: Sub): void {
    if (this.subs.get(sub.id) !== sub) return;
    this.remove(sub);
    sub.onCanceled?.(0);
    if (this.stream) this.stream.write(watchCancel(sub.id));
  }

  private sendCreate(sub: Sub): void {
    this.pendingCreates.push(sub.id);
    const probe = sub.prefix === null;
    this.stream!.write(
      watchCreate({
        key: sub.key,
        rangeEnd: sub.rangeEnd,
        // etcd's start_revision is inclusive; ours is "after lastRev".
        startRevision: sub.lastRev > 0 ? sub.lastRev + 1 : 0,
        watchId: sub.id,
        prevKv: sub.prevKv,
        fragment: true,
        progressNotify: !probe,
      }),
    );
  }

  private ensureStream(): void {
    if (this.stream || this.closed || this.reconnectTimer) return;
    let opened: ReturnType<Connection['watchStream']>;
    try {
      opened = this.conn.watchStream(METHOD.watch);
    } catch (err) {
      this.failAll(err instanceof StorageError ? err : new StorageError('Unavailable', String(err)));
      return;
    }
    const { stream, endpoint } = opened;
    this.streamsOpened++;
    this.stream = stream;
    this.streamEndpoint = endpoint;
    this.pendingCreates = [];
    stream.on('data', (buf: Buffer) => this.onData(stream, buf));
    stream.on('error', (err: Error) => this.onBroken(stream, err));
    stream.on('end', () => this.onBroken(stream, undefined));
    for (const sub of this.subs.values()) {
      sub.frag = null;
      this.sendCreate(sub);
    }
  }

  private onData(stream: GrpcStream, buf: Buffer): void {
    if (stream !== this.stream) return;
    this.backoffMs = MIN_BACKOFF_MS;
    let resp: WatchResp;
    try {
      resp = decodeWatch(buf);
    } catch (err) {
      log.error('undecodable watch response; reopening the stream', { err: String(err) });
      this.reconnect();
      return;
    }
    if (resp.created) {
      const expected = this.pendingCreates.shift();
      // A failed create carries watch_id -1; it answers the oldest pending create.
      const sub = this.subs.get(resp.watchId > 0 ? resp.watchId : (expected ?? -1));
      if (!sub) return;
      if (resp.canceled) {
        this.canceledByServer(sub, resp);
      } else if (sub.lastRev === 0) {
        this.advance(sub, resp.revision);
        for (const [queue, skip] of sub.members) {
          if (skip === 0) {
            sub.members.set(queue, resp.revision);
            queue.setStartRevision(resp.revision);
          }
        }
      }
      return;
    }
    const sub = this.subs.get(resp.watchId);
    if (!sub) return; // canceled by us; etcd may still send a few responses
    if (resp.events.length > 0) {
      if (resp.fragment) {
        if (sub.frag) for (const e of resp.events) sub.frag.push(e);
        else sub.frag = resp.events;
        return;
      }
      let raw = resp.events;
      if (sub.frag) {
        for (const e of raw) sub.frag.push(e);
        raw = sub.frag;
        sub.frag = null;
      }
      this.deliver(sub, raw);
    } else if (!resp.canceled && resp.revision > sub.lastRev && sub.lastRev > 0 && !sub.frag) {
      // A progress notification: etcd sends it only to a caught-up watch, after
      // every event up to that revision, so a resume may start there. Keeps an
      // idle watch's resume point from falling behind compaction.
      this.advance(sub, resp.revision);
    }
    if (resp.canceled) this.canceledByServer(sub, resp);
  }

  /** Converts once, then hands the same event objects to every watcher. */
  private deliver(sub: Sub, raw: RawEvent[]): void {
    if (sub.members.size === 0) return;
    const events = new Array<StorageEvent>(raw.length);
    for (let i = 0; i < raw.length; i++) events[i] = toEvent(raw[i]);
    const first = events[0].revision;
    const last = events[events.length - 1].revision;
    const shared = sub.members.size > 1;
    for (const [queue, skip] of sub.members) {
      if (skip >= last) continue;
      // Each watcher gets its own array: a consumer may keep or change it.
      if (skip >= first) queue.push(events.filter((e) => e.revision > skip));
      else queue.push(shared ? events.slice() : events);
    }
    this.advance(sub, last);
  }

  private canceledByServer(sub: Sub, resp: WatchResp): void {
    this.remove(sub);
    if (sub.onCanceled) {
      sub.onCanceled(resp.compactRevision);
      return;
    }
    const err =
      resp.compactRevision > 0
        ? errCompacted(resp.compactRevision)
        : new StorageError(
            'Unavailable',
            `etcd canceled the watch: ${resp.cancelReason || 'no reason given'}`,
            undefined,
            sub.lastRev,
          );
    for (const queue of [...sub.members.keys()]) queue.fail(err);
  }

  private onBroken(stream: GrpcStream, err: Error | undefined): void {
    if (stream !== this.stream) return;
    this.stream = null;
    this.pendingCreates = [];
    if (this.closed) return;
    const st = grpcStatus(err);
    if (!st || st.code === GrpcStatus.UNAVAILABLE) this.conn.failover(this.streamEndpoint);
    if (this.subs.size === 0) return; // reopened by the next watch
    const fields = {
      err: st ? st.details : String(err ?? 'stream ended'),
      watches: this.subs.size,
      retryInMs: this.backoffMs,
    };
    // Warn once per outage; the retries that follow are verbose-only.
    if (this.backoffMs === MIN_BACKOFF_MS) log.warn('etcd watch stream broke; resuming watchers', fields);
    else log.v(2)?.info('etcd watch stream still down; retrying', fields);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.ensureStream();
    }, this.backoffMs);
    this.reconnectTimer.unref();
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
  }

  /**
   * Drops the current stream and resumes every watch on a new one, on the
   * current endpoint (e.g. after a fail-over, or to test resumption).
   */
  reconnect(): void {
    const stream = this.stream;
    if (!stream) return;
    this.stream = null;
    this.pendingCreates = [];
    stream.on('error', () => {});
    stream.cancel();
    this.ensureStream();
  }

  private failAll(err: StorageError): void {
    const subs = [...this.subs.values()];
    this.subs.clear();
    this.byPrefix.clear();
    this.fenceMissed.clear();
    for (const sub of subs) {
      this.endFences(sub);
      if (sub.onCanceled) sub.onCanceled(0);
      const perSub = new StorageError(err.code, err.message, undefined, sub.lastRev);
      for (const queue of [...sub.members.keys()]) queue.fail(perSub);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const stream = this.stream;
    this.stream = null;
    if (stream) {
      stream.on('error', () => {});
      stream.cancel();
    }
    this.failAll(new StorageError('Closed', 'etcd3 storage is closed'));
  }
}

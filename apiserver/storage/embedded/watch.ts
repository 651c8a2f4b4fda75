// Watches. Live watchers are registered per prefix and get each durable batch
// in-process, through a WatchQueue each (a slow reader is cut off, never waited
// for). A watch from an older revision first replays the log, pulled by the
// consumer a chunk at a time (so replay never overflows a buffer), and turns
// live in the same synchronous step that reads the last published revision:
// batches are published on this thread too, so nothing can slip in between
// (no gap) and nothing is read twice (no duplicate).
import type { StorageEvent, StorageWatch } from '../interface';
import { StorageError, errCompacted } from '../errors';
import { DEFAULT_WATCH_BUFFER, WatchQueue } from '../watch-queue';
import type { Event } from './codec';
import type { Reader } from './reads';

/** Replay hands the consumer at most this many events per step... */
const REPLAY_EVENTS = 1000;
/** ...and looks at most at this many log entries before yielding to the event loop. */
const REPLAY_SCAN = 20_000;

interface Live {
  readonly queue: WatchQueue;
  /** Events up to this revision are not for this watcher (it started after them). */
  minRevision: number;
}

export class WatchHub {
  private readonly byPrefix = new Map<string, Set<Live>>();
  /** Set once the store closed (watches end) or broke (watches fail with `failure`). */
  ended = false;
  failure: StorageError | null = null;

  constructor(
    readonly reader: Reader,
    /** Highest revision handed to watchers. */
    public published: number,
    readonly compacted: () => number,
  ) {}

  register(prefix: string, queue: WatchQueue, minRevision: number): Live {
    const live: Live = { queue, minRevision };
    let set = this.byPrefix.get(prefix);
    if (!set) this.byPrefix.set(prefix, (set = new Set()));
    set.add(live);
    return live;
  }

  unregister(prefix: string, live: Live): void {
    const set = this.byPrefix.get(prefix);
    if (!set) return;
    set.delete(live);
    if (set.size === 0) this.byPrefix.delete(prefix);
  }

  /** Hands a durable batch (in revision order) to the live watchers. */
  publish(events: Event[], revision: number): void {
    if (revision > this.published) this.published = revision;
    if (events.length === 0) return;
    const first = events[0].revision;
    const last = events[events.length - 1].revision;
    for (const [prefix, set] of this.byPrefix) {
      let matched: StorageEvent[] | null = null;
      let handedOut = false;
      for (const live of set) {
        if (live.minRevision >= last) continue;
        matched ??= prefix === '' ? events : events.filter((e) => e.key.startsWith(prefix));
        if (matched.length === 0) break;
        const min = live.minRevision;
        live.minRevision = 0;
        if (min >= first) live.queue.push(matched.filter((e) => e.revision > min));
        else {
          // Each watcher owns its array (consumers may keep or change it); the events are shared.
          live.queue.push(handedOut || matched === events ? matched.slice() : matched);
          handedOut = true;
        }
      }
    }
  }

  /** Ends every watch: `err` fails them, otherwise they finish. */
  close(err?: StorageError): void {
    this.ended = true;
    this.failure = err ?? null;
    const all = [...this.byPrefix.values()].flatMap((s) => [...s]);
    this.byPrefix.clear();
    for (const live of all) {
      if (err) live.queue.fail(err);
      else live.queue.stop();
    }
  }
}

export class EmbeddedWatch implements StorageWatch {
  private queue: WatchQueue | null = null;
  private liveNext: (() => Promise<IteratorResult<StorageEvent[]>>) | null = null;
  private failure: StorageError | null = null;
  private stopped = false;
  /** Replay: the last revision covered. */
  private cursor: number;
  private readonly prefixBytes: Buffer;

  constructor(
    private readonly hub: WatchHub,
    private readonly prefix: string,
    fromRevision: number,
    private readonly bufferSize = DEFAULT_WATCH_BUFFER,
  ) {
    this.prefixBytes = Buffer.from(prefix);
    this.cursor = fromRevision;
    const compacted = hub.compacted();
    if (hub.ended) this.failure = hub.failure ?? new StorageError('Closed', 'storage is closed');
    // Events from the compacted revision on are kept: from C-1 works, lower fails.
    else if (fromRevision > 0 && fromRevision < compacted - 1) this.failure = errCompacted(compacted);
    else if (fromRevision === 0 || fromRevision >= hub.published)
      this.goLive(Math.max(fromRevision, hub.published));
  }

  stop(): void {
    this.stopped = true;
    this.queue?.stop();
  }

  async progress(): Promise<number | undefined> {
    // Publishing and pushing to the queues happen in one synchronous step (before
    // writes are acknowledged), so every event up to `published` is queued or handed out.
    const queue = this.queue;
    if (!queue) return undefined;
    const revision = this.hub.published;
    return (await queue.idle()) ? revision : undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent[]> {
    return {
      next: () => this.next(),
      return: () => {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }

  private goLive(from: number): void {
    const queue = new WatchQueue(from, this.bufferSize, () => this.hub.unregister(this.prefix, live));
    const live = this.hub.register(this.prefix, queue, from);
    const it = queue[Symbol.asyncIterator]();
    this.queue = queue;
    this.liveNext = () => it.next();
  }

  private liveStep(): (() => Promise<IteratorResult<StorageEvent[]>>) | null {
    return this.liveNext;
  }

  private next(): Promise<IteratorResult<StorageEvent[]>> {
    if (this.liveNext) return this.liveNext();
    if (this.failure) return Promise.reject(this.failure);
    if (this.stopped) return Promise.resolve({ value: undefined, done: true });
    if (this.hub.ended && !this.hub.failure) return Promise.resolve({ value: undefined, done: true });
    try {
      if (this.hub.failure) throw this.hub.failure;
      const compacted = this.hub.compacted();
      if (this.cursor < compacted - 1) throw errCompacted(compacted);
      const upTo = this.hub.published;
      this.hub.reader.fresh(upTo);
      const { events, scanned } = this.hub.reader.events(
        this.prefixBytes,
        this.cursor,
        upTo,
        REPLAY_EVENTS,
        REPLAY_SCAN,
      );
      this.cursor = scanned;
      if (scanned >= upTo) this.goLive(scanned);
      if (events.length > 0) return Promise.resolve({ value: events, done: false });
      // (goLive may have just run: TS cannot see that, hence the re-read through a method.)
      const live = this.liveStep();
      if (live) return live();
      // A long stretch of other prefixes' events: let the event loop breathe.
      return new Promise((resolve) => setImmediate(resolve)).then(() => this.next());
    } catch (err) {
      this.failure = err instanceof StorageError ? err : new StorageError('Unavailable', String(err));
      return Promise.reject(this.failure);
    }
  }
}

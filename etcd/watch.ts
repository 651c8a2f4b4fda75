// The Watch service: many watches per bidi stream, each on a key or range from a start
// revision (history first, then live changes as they are published), with prev_kv, the
// NOPUT/NODELETE filters, progress notifications and progress requests, and cancel. A
// watch whose start revision is compacted is created and then cancelled with
// compact_revision, as etcd does.
import { type Fields, encode } from '../shared/etcd/wire';
import { EventType } from '../shared/etcd/rpc';
import { type WatchCreate, decodeWatchRequest, event } from './messages';
import type { MvccEvent } from './mvcc';
import type { EtcdStore } from './store';

/** Events in one history response at most (a revision is never split). */
const HISTORY_BATCH = 1000;
/** etcd's default --experimental-watch-progress-notify-interval. */
export const PROGRESS_NOTIFY_MS = 10 * 60_000;

interface Watcher {
  readonly id: number;
  readonly stream: WatchStream;
  readonly spec: WatchCreate;
}

function matches(w: Watcher, ev: MvccEvent): boolean {
  const { key, end, noPut, noDelete } = w.spec;
  if (ev.type === EventType.Put ? noPut : noDelete) return false;
  const k = ev.kv.key;
  if (end === '') return k === key;
  return k >= key && (end === '\0' || k < end);
}

/** Every watch of every stream; told of each published write. */
export class WatchHub {
  readonly watchers = new Set<Watcher>();

  constructor(
    readonly store: EtcdStore,
    readonly progressNotifyMs = PROGRESS_NOTIFY_MS,
  ) {
    store.onPublish = (events, rev) => this.publish(events, rev);
  }

  private publish(events: MvccEvent[], rev: number): void {
    for (const w of this.watchers) {
      let mine: MvccEvent[] | null = null;
      for (const ev of events) if (matches(w, ev)) (mine ??= []).push(ev);
      if (mine) w.stream.sendEvents(w, mine, rev);
    }
  }
}

/** One Watch call: its requests in, its responses out through send. */
export class WatchStream {
  private readonly mine = new Map<number, Watcher>();
  private nextId = 0;
  private readonly timer: NodeJS.Timeout | null;

  constructor(
    private readonly hub: WatchHub,
    private readonly send: (msg: Buffer) => void,
  ) {
    this.timer = setInterval(() => this.notifyProgress(), hub.progressNotifyMs);
    this.timer.unref();
  }

  private respond(f: Fields): void {
    this.send(encode(f));
  }

  private header(rev?: number): [number, Fields] {
    return [1, this.hub.store.header(rev)];
  }

  onMessage(msg: Buffer): void {
    const q = decodeWatchRequest(msg);
    if (q.kind === 'create') this.create(q.create);
    else if (q.kind === 'cancel') this.cancel(q.watchId);
    else if (q.kind === 'progress') this.respond([this.header(), [2, -1n]]);
  }

  private create(spec: WatchCreate): void {
    const store = this.hub.store;
    let id = spec.watchId;
    if (id === 0 || id === -1) {
      while (this.mine.has(this.nextId)) this.nextId++;
      id = this.nextId++;
    } else if (this.mine.has(id)) {
      this.respond([this.header(), [2, id], [3, true], [4, true], [6, 'mvcc: duplicate watch ID provided']]);
      return;
    }
    const idField: Fields = id ? [[2, id]] : [];
    this.respond([this.header(), ...idField, [3, true]]);
    const start = spec.startRevision > 0 ? spec.startRevision : store.published + 1;
    if (start < store.mvcc.compacted) {
      this.respond([this.header(), ...idField, [4, true], [5, store.mvcc.compacted]]);
      return;
    }
    const w: Watcher = { id, stream: this, spec };
    // History up to the published revision, then live: publishing is synchronous, so nothing falls between.
    const history = store.mvcc.eventsSince(start, store.published).filter((ev) => matches(w, ev));
    for (let i = 0; i < history.length;) {
      let j = Math.min(i + HISTORY_BATCH, history.length);
      while (j < history.length && history[j].kv.mod === history[j - 1].kv.mod) j++;
      const batch = history.slice(i, j);
      this.sendEvents(w, batch, batch[batch.length - 1].kv.mod);
      i = j;
    }
    this.mine.set(id, w);
    this.hub.watchers.add(w);
  }

  sendEvents(w: Watcher, events: MvccEvent[], rev: number): void {
    const f: [number, number | Fields][] = [this.header(rev)];
    if (w.id) f.push([2, w.id]);
    for (const ev of events) f.push([11, event(ev, w.spec.prevKv)]);
    this.respond(f);
  }

  private cancel(id: number): void {
    const w = this.mine.get(id);
    if (!w) return;
    this.drop(w);
    this.respond([this.header(), ...(id ? ([[2, id]] as Fields) : []), [4, true]]);
  }

  private drop(w: Watcher): void {
    this.mine.delete(w.id);
    this.hub.watchers.delete(w);
  }

  private notifyProgress(): void {
    for (const w of this.mine.values())
      if (w.spec.progressNotify) this.respond([this.header(), ...(w.id ? ([[2, w.id]] as Fields) : [])]);
  }

  /** The call is over: its watches go. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    for (const w of this.mine.values()) this.hub.watchers.delete(w);
    this.mine.clear();
  }
}

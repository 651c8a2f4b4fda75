// events.k8s.io/v1 Events with client-go's tools/events semantics (or, for the
// node agent, the core/v1 Events kubelet's record package writes, with the
// same queue and the series kept as count and lastTimestamp):
// - eventf() never blocks: it builds the Event and queues the write (bounded
//   queue, dropped with a log line when full), written by a background loop
//   through a client with its own QPS budget (--event-qps / --event-burst).
// - Series: an event isomorphic to one recorded in the last 6 minutes (same
//   action, reason, reportingController, regarding and related) does not make
//   a new object. The second occurrence patches series {count: 2,
//   lastObservedTime}; later ones only count, and the count is written by a
//   heartbeat every 30 minutes and when the series ends (no occurrence for 6 min).
import { hostname } from 'node:os';
import { logger } from '../log';
import type { Client } from '../client/client';
import type { ResourceClient } from '../client/resource';
import { realClock, type Clock, type Timer } from '../client/clock';
import { isNotFound, StatusError } from '../client/errors';
import type { KubeObject } from '../client/types';
import { formatMicroTime } from '../leaderelection/resourcelock';
import { jitter } from '../informers/backoff';

const log = logger('events');

export type EventType = 'Normal' | 'Warning';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

/** An object (with apiVersion, kind, metadata) or a reference to one. */
export type Referable = KubeObject | ObjectReference;

export interface EventRecorder {
  /**
   * Records an event about `regarding` (and optionally `related`). `note` may
   * hold %s %d %v %q directives filled from args. Returns at once.
   */
  eventf(
    regarding: Referable,
    related: Referable | null | undefined,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    ...args: unknown[]
  ): void;
}

export interface EventBroadcasterOptions {
  /** --event-qps (default 5, as the SPEC's node agent); negative: unlimited. */
  qps?: number;
  /** --event-burst (default 10). */
  burst?: number;
  clock?: Clock;
  /** Writes waiting beyond this are dropped (client-go: 1000). */
  maxQueued?: number;
  /** Pause between retries of a write that failed in transport (client-go: 10 s, jittered). */
  retryDelayMs?: number;
  /** "v1": write core/v1 Events, as kubelet does (its system:node role allows no other). */
  api?: 'events.k8s.io/v1' | 'v1';
}

const MAX_NOTE_BYTES = 1024;
const MAX_TRIES = 12;
const FINISH_MS = 6 * 60_000;
const REFRESH_MS = 30 * 60_000;

export interface EventObject extends KubeObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  note: string;
  type: EventType;
  regarding: ObjectReference;
  related?: ObjectReference;
  series?: { count: number; lastObservedTime: string };
}

interface Entry {
  key: string;
  event: EventObject;
  /** eventTime or lastObservedTime, as ms. */
  lastSeen: number;
  created: boolean;
  queued: boolean;
  tries: number;
  /** The series ended: drop the entry once its last count is written. */
  finishing: boolean;
}

/** A reference to obj the way ref.GetReference builds it. */
export function objectReference(obj: Referable): ObjectReference {
  const o = obj as KubeObject;
  if (o && typeof o === 'object' && o.metadata) {
    const ref: ObjectReference = {
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.metadata.namespace,
      name: o.metadata.name,
      uid: o.metadata.uid,
      resourceVersion: o.metadata.resourceVersion,
    };
    for (const k of Object.keys(ref) as (keyof ObjectReference)[])
      if (ref[k] === undefined || ref[k] === '') delete ref[k];
    return ref;
  }
  return { ...(obj as ObjectReference) };
}

/** fmt.Sprintf for the directives events use. */
export function sprintf(format: string, args: unknown[]): string {
  if (!args.length) return format;
  let i = 0;
  return format.replace(/%([svdq%])/g, (m, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const a = args[i++];
    if (verb === 'q') return JSON.stringify(String(a));
    if (verb === 'd') return typeof a === 'number' || typeof a === 'bigint' ? String(a) : `%!d(${String(a)})`;
    if (a instanceof Error) return a.message;
    return typeof a === 'object' && a !== null ? JSON.stringify(a) : String(a);
  });
}

/** Cuts a note to 1 kB (UTF-8), ending it with "..." when cut. */
export function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= MAX_NOTE_BYTES) return note;
  const buf = Buffer.from(note);
  let end = MAX_NOTE_BYTES - 3;
  // Cut before a character, not inside one.
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8') + '...';
}

export class EventBroadcaster {
  private readonly events: ResourceClient<EventObject>;
  private readonly core: boolean;
  private readonly clock: Clock;
  private readonly maxQueued: number;
  private readonly retryDelayMs: number;
  private readonly cache = new Map<string, Entry>();
  private queue: Entry[] = [];
  private pending = 0;
  private running = false;
  private idleWaiters: (() => void)[] = [];
  private readonly periodic: Timer[] = [];
  private readonly retries = new Set<Timer>();
  private stopped = false;
  private seq = 0;
  /** Counters for tests and metrics. */
  readonly stats = { created: 0, patched: 0, dropped: 0, failed: 0 };

  constructor(client: Client, opts: EventBroadcasterOptions = {}) {
    this.clock = opts.clock ?? realClock;
    const c = client.withOptions({ qps: opts.qps ?? 5, burst: opts.burst ?? 10, clock: this.clock });
    this.core = opts.api === 'v1';
    this.events = c.resource<EventObject>(this.core ? 'events' : 'events.events.k8s.io');
    this.maxQueued = opts.maxQueued ?? 1000;
    this.retryDelayMs = opts.retryDelayMs ?? 10_000;
    this.every(REFRESH_MS, () => this.refreshSeries());
    this.every(FINISH_MS, () => this.finishSeries());
  }

  /** A recorder for one controller; reportingInstance defaults to "<controller>-<hostname>". */
  newRecorder(
    reportingController: string,
    reportingInstance = `${reportingController}-${hostname()}`,
  ): EventRecorder {
    const instance = reportingInstance.slice(0, 128);
    return {
      eventf: (regarding, related, type, reason, action, note, ...args) => {
        try {
          this.record(
            reportingController,
            instance,
            regarding,
            related,
            type,
            reason,
            action,
            sprintf(note, args),
          );
        } catch (err) {
          log.error('could not record event', { reason, err: String(err) });
        }
      },
    };
  }

  /** Stops the timers and waits (up to timeoutMs) for queued writes. */
  async shutdown(timeoutMs = 5000): Promise<void> {
    this.stopped = true;
    for (const t of this.periodic) t.cancel();
    for (const t of this.retries) t.cancel();
    this.retries.clear();
    if (this.pending === 0 && !this.running) return;
    await Promise.race([
      new Promise<void>((r) => this.idleWaiters.push(r)),
      new Promise<void>((r) => {
        const t = setTimeout(r, timeoutMs);
        t.unref?.();
      }),
    ]);
    this.queue = [];
  }

  /** Resolves when no write is queued or running. */
  flush(): Promise<void> {
    if (this.pending === 0 && !this.running) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private every(ms: number, fn: () => void): void {
    // Housekeeping only: these timers do not keep the process alive.
    const idx = this.periodic.length;
    const arm = () => {
      const t = this.clock.setTimer(tick, ms);
      t.unref?.();
      return t;
    };
    const tick = () => {
      if (this.stopped) return;
      fn();
      this.periodic[idx] = arm();
    };
    this.periodic.push(arm());
  }

  private record(
    controller: string,
    instance: string,
    regarding: Referable,
    related: Referable | null | undefined,
    type: EventType,
    reason: string,
    action: string,
    note: string,
  ): void {
    if (this.stopped) return;
    if (type !== 'Normal' && type !== 'Warning') {
      log.error('unsupported event type, dropping event', { type, reason });
      return;
    }
    const reg = objectReference(regarding);
    const rel = related ? objectReference(related) : undefined;
    const key = JSON.stringify([action, reason, controller, reg, rel ?? null]);
    const now = this.clock.now();
    const hit = this.cache.get(key);
    if (hit && !hit.finishing) {
      hit.lastSeen = now;
      if (hit.event.series) {
        hit.event.series = { count: hit.event.series.count + 1, lastObservedTime: formatMicroTime(now) };
        return;
      }
      hit.event.series = { count: 2, lastObservedTime: formatMicroTime(now) };
      this.enqueue(hit);
      return;
    }
    const nanos = BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    const event: EventObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `${reg.name ?? 'unknown'}.${nanos.toString(16)}`,
        namespace: reg.namespace || 'default',
      },
      eventTime: formatMicroTime(now),
      reportingController: controller,
      reportingInstance: instance,
      action,
      reason,
      note: truncateNote(note),
      type,
      regarding: reg,
      ...(rel ? { related: rel } : {}),
    };
    const entry: Entry = {
      key,
      event,
      lastSeen: now,
      created: false,
      queued: false,
      tries: 0,
      finishing: false,
    };
    this.cache.set(key, entry);
    this.enqueue(entry);
  }

  private enqueue(e: Entry): void {
    if (e.queued) return;
    if (this.pending >= this.maxQueued) {
      this.stats.dropped++;
      if (this.stats.dropped === 1 || this.stats.dropped % 100 === 0) {
        log.warn('event queue full, dropping events', {
          dropped: this.stats.dropped,
          reason: e.event.reason,
        });
      }
      return;
    }
    e.queued = true;
    this.pending++;
    this.queue.push(e);
    if (!this.running) void this.drain();
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) {
        const e = this.queue.shift()!;
        e.queued = false;
        this.pending--;
        await this.write(e);
      }
    } finally {
      this.running = false;
      if (this.pending === 0) {
        const ws = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of ws) w();
      }
    }
  }

  /** One write attempt: create, or patch the series (create again if the event is gone). */
  private async write(e: Entry): Promise<void> {
    const ev = e.event;
    try {
      let written: EventObject | undefined;
      if (ev.series && e.created) {
        try {
          const patch = this.core
            ? { count: ev.series.count, lastTimestamp: seconds(ev.series.lastObservedTime) }
            : { series: { count: ev.series.count, lastObservedTime: ev.series.lastObservedTime } };
          written = await this.events
            .namespace(ev.metadata.namespace!)
            .patch(ev.metadata.name!, patch, 'strategic');
          this.stats.patched++;
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      if (!written) {
        const { resourceVersion: _rv, uid: _uid, ...meta } = ev.metadata;
        written = await this.events.create(this.core ? coreEvent(ev, meta) : { ...ev, metadata: meta });
        e.created = true;
        this.stats.created++;
      }
      e.tries = 0;
      if (e.finishing && this.cache.get(e.key) === e) this.cache.delete(e.key);
    } catch (err) {
      // Rejected by the server: retrying would not help. Transport failures are retried.
      if (err instanceof StatusError) {
        this.stats.failed++;
        if (err.reason !== 'AlreadyExists')
          log.error('server rejected event (will not retry)', { reason: ev.reason, err: err.message });
        if (this.cache.get(e.key) === e && !e.created) this.cache.delete(e.key);
        return;
      }
      if (++e.tries >= MAX_TRIES || this.stopped) {
        this.stats.failed++;
        log.error('unable to write event (retry limit exceeded)', { reason: ev.reason, err: String(err) });
        return;
      }
      log.warn('unable to write event (may retry after sleeping)', { reason: ev.reason, err: String(err) });
      const t = this.clock.setTimer(
        () => {
          this.retries.delete(t);
          this.enqueue(e);
        },
        jitter(this.retryDelayMs, 0.25),
      );
      this.retries.add(t);
    }
  }

  /** The 30-minute heartbeat: write the current count of every series. */
  private refreshSeries(): void {
    for (const e of this.cache.values()) if (e.event.series) this.enqueue(e);
  }

  /** Ends series idle for 6 minutes (final count written) and forgets old singletons. */
  private finishSeries(): void {
    const cutoff = this.clock.now() - FINISH_MS;
    for (const [key, e] of this.cache) {
      if (e.lastSeen >= cutoff) continue;
      if (e.event.series) {
        e.finishing = true;
        this.enqueue(e);
      } else if (!e.queued) this.cache.delete(key);
    }
  }
}

/** metav1.Time of a MicroTime string (RFC 3339, whole seconds). */
const seconds = (micro: string) => micro.replace(/\.\d+Z$/, 'Z');

/** The core/v1 Event kubelet's record package writes for the same occurrence. */
function coreEvent(ev: EventObject, metadata: KubeObject['metadata']): any {
  const last = ev.series ? seconds(ev.series.lastObservedTime) : seconds(ev.eventTime);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata,
    involvedObject: ev.regarding,
    ...(ev.related ? { related: ev.related } : {}),
    reason: ev.reason,
    message: ev.note,
    source: { component: ev.reportingController, host: ev.reportingInstance },
    firstTimestamp: seconds(ev.eventTime),
    lastTimestamp: last,
    count: ev.series?.count ?? 1,
    type: ev.type,
    eventTime: null,
    action: ev.action,
    reportingComponent: ev.reportingController,
    reportingInstance: ev.reportingInstance,
  };
}

/** A recorder that keeps "<type> <reason> <note>" lines, for controller unit tests. */
export class FakeRecorder implements EventRecorder {
  readonly events: string[] = [];
  eventf(
    _regarding: Referable,
    _related: Referable | null | undefined,
    type: EventType,
    reason: string,
    _action: string,
    note: string,
    ...args: unknown[]
  ): void {
    this.events.push(`${type} ${reason} ${sprintf(note, args)}`);
  }
}

// Gives memory back once a burst of work is over. V8 keeps its heap committed at the
// burst's peak and frees dead Buffers only when it collects; its own memory reducer
// starts at the earliest 8 s after a full collection, and only if one happened. tkube's
// processes are idle most of the time between bursts (a rollout, a relist, a cache
// fill), so each checks twice a second whether its event loop was idle over the last
// half second, and in a quiet stretch:
// - when its heap plus external memory grew by GROWTH_BYTES since the last full
//   collection, and the stretch has lasted COMPACT_AFTER_MS, it runs one, compacting:
//   the objects that outlive a burst (cache entries) are spread over pages it mostly
//   filled with garbage, and V8's own heuristics leave such pages in place. It stops
//   the process for its whole length, ~2 ms per MB of live heap (130-180 ms with a
//   cache of 27k ConfigMaps), so it waits for a stretch long enough to say the burst
//   is over: after half a second, it often fell on the next burst's first requests.
// - when a quiet stretch begins with its young generation at the size a burst grew
//   it to (up to two semi-spaces, committed and touched: 32 MB with V8's default,
//   64 MB with the apiserver's V8_FLAGS), it collects the young generation,
//   and once the stretch has lasted SETTLE_MS, runs a full collection if the young
//   generation is still that size. V8 shrinks the young generation at a full
//   collection only when its recent allocation rate was under 1 MB/s; the young
//   collection starts the interval it measures at the stretch's beginning.
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

const INTERVAL_MS = 500;
/** Share of the last interval the event loop may have been busy and still count as idle. */
const IDLE_UTILIZATION = 0.05;
const GROWTH_BYTES = 16 * 2 ** 20;
/** How long a quiet stretch lasts (after its first idle half second) before a compacting collection. */
const COMPACT_AFTER_MS = 1500;
/**
 * Quiet time after which V8's allocation rate reads as low: it measures the rate over
 * the intervals between its last collections, going back at least 5 s.
 */
const SETTLE_MS = 6000;
/** A young generation above this is one a burst grew (V8 starts it at 1 MB). */
const YOUNG_SETTLED_BYTES = 4 * 2 ** 20;
/**
 * No full collection is forced once what outlived the last one (its footprint) is above
 * this: it would stop the process for ~2-3 ms per MB of it (7 s at 2.5 GB in a
 * 150,000-pod simulation, where the quiet while one process stopped let the next one
 * stop, and the controller manager lost its lease). V8's own collector marks such a
 * heap concurrently, in short steps.
 */
const MAX_FORCED_FOOTPRINT_BYTES = 192 * 2 ** 20;

type Gc = (options?: { type: 'minor' | 'major' }) => void;
let gcFn: Gc | null | undefined;

/** V8's collector, exposed without a command-line flag (null where V8 refuses). */
export function exposedGc(): Gc | null {
  if (gcFn === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      gcFn = vm.runInNewContext('gc') as Gc;
    } catch {
      gcFn = null;
    }
  }
  return gcFn;
}

function footprint(): number {
  const h = v8.getHeapStatistics();
  return h.total_heap_size + h.external_memory;
}

function youngGenerationBytes(): number {
  let n = 0;
  for (const s of v8.getHeapSpaceStatistics()) if (s.space_name.startsWith('new_')) n += s.space_size;
  return n;
}

/** Starts the idle-time collector; returns its stop. */
export function startIdleGc(
  o: {
    maxForcedFootprintBytes?: number;
    /** Told of each collection it starts. */
    onCollect?: (kind: CollectionKind) => void;
  } = {},
): () => void {
  const maxForced = o.maxForcedFootprintBytes ?? MAX_FORCED_FOOTPRINT_BYTES;
  /** Time spent in its own collections since the last check: not the process's work. */
  let ownMs = 0;
  const collect = (kind: CollectionKind) => {
    const t = performance.now();
    collectNow(kind);
    ownMs += performance.now() - t;
    o.onCollect?.(kind);
  };
  let base = footprint();
  let last = performance.eventLoopUtilization();
  /** When the current quiet stretch began (undefined while busy). */
  let quietSince: number | undefined;
  /** The stretch began with a grown young generation, not yet given back. */
  let settling = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { active, idle } = performance.eventLoopUtilization(now, last);
    last = now;
    // A young collection of a large heap takes 15-25 ms, enough to make the next half
    // second look busy: counted, the stretch would restart and collect again, forever.
    const busy = Math.max(0, active - ownMs) / (active + idle || 1);
    ownMs = 0;
    if (busy >= IDLE_UTILIZATION) {
      quietSince = undefined;
      return;
    }
    const at = Date.now();
    const begins = quietSince === undefined;
    if (begins) {
      quietSince = at;
      settling = youngGenerationBytes() > YOUNG_SETTLED_BYTES;
    }
    const f = footprint();
    // V8 collected on its own since: measure growth from there.
    if (f < base) base = f;
    if (f - base >= GROWTH_BYTES && at - quietSince! >= COMPACT_AFTER_MS) {
      if (base <= maxForced) collect('compacting');
      base = footprint();
    } else if (begins && settling) {
      collect('young');
    } else if (settling && at - quietSince! >= SETTLE_MS) {
      settling = false;
      if (youngGenerationBytes() > YOUNG_SETTLED_BYTES && base <= maxForced) {
        collect('full');
        base = footprint();
      }
    }
  }, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

type CollectionKind = 'young' | 'full' | 'compacting';

function collectNow(kind: CollectionKind): void {
  // The collector is made on first need (a V8 context, ~2 ms): not at start-up, nor in a process never busy.
  const gc = exposedGc();
  if (!gc) return;
  if (kind !== 'compacting') return gc({ type: kind === 'young' ? 'minor' : 'major' });
  // Read by V8 as each collection starts: this one compacts, the ones V8 starts do not.
  v8.setFlagsFromString('--compact-on-every-full-gc');
  try {
    gc();
  } finally {
    v8.setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

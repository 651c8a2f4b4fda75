// Gives memory back once a burst of work is over. V8 keeps its heap committed at the
// burst's peak and frees dead Buffers only when it collects; its own memory reducer
// starts at the earliest 8 s after a full collection, and only if one happened. tkube's
// processes are idle most of the time between bursts (a rollout, a relist, a cache
// fill), so each checks twice a second: when its event loop was idle over the last half second
// and its heap plus external memory grew by GROWTH_BYTES since the last full
// collection, it runs one, compacting: the objects that outlive a burst (cache entries)
// are spread over pages it mostly filled with garbage, and V8's own heuristics leave
// such pages in place. It costs ~2 ms per MB of live heap, paid while nothing waits.
import { performance } from 'node:perf_hooks';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

const INTERVAL_MS = 500;
/** Share of the last interval the event loop may have been busy and still count as idle. */
const IDLE_UTILIZATION = 0.05;
const GROWTH_BYTES = 16 * 2 ** 20;

type Gc = () => void;
let gcFn: Gc | null | undefined;

/** V8's full collection, exposed without a command-line flag (null where V8 refuses). */
function fullGc(): Gc | null {
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

/** Starts the idle-time collector; returns its stop. */
export function startIdleGc(): () => void {
  let base = footprint();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const f = footprint();
    // V8 collected on its own since: measure growth from there.
    if (f < base) base = f;
    // The collector is made on first need (a V8 context, ~2 ms): not at start-up, nor in a process never busy.
    const gc = busy < IDLE_UTILIZATION && f - base >= GROWTH_BYTES ? fullGc() : null;
    if (gc) {
      // Read by V8 as each collection starts: this one compacts, the ones V8 starts do not.
      v8.setFlagsFromString('--compact-on-every-full-gc');
      try {
        gc();
      } finally {
        v8.setFlagsFromString('--no-compact-on-every-full-gc');
      }
      base = footprint();
    }
  }, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

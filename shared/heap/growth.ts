// How far V8 lets the heap grow past what survived its last full collection before it
// starts the next one: up to 4x by default, chosen from its measured collection speed.
// A process whose heap is mostly one large long-lived cache (thousands of simulated
// nodes' pods) keeps that much garbage on top of the cache; a fixed, smaller factor
// collects sooner, in V8's own concurrent steps.
import * as v8 from 'node:v8';

/**
 * Next full collection once the heap is `percent` % above what survived the last one.
 * Returns the undo (V8's own factor again): the flag is the whole process's, and a
 * process that hosts the simulation beside other work (the tests) must get it back.
 */
export function limitHeapGrowth(percent: number): () => void {
  v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
  return () => v8.setFlagsFromString('--heap-growing-percent=0');
}

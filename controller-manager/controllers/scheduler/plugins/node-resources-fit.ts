// NodeResourcesFit: the pod's requests fit what the node's allocatable leaves
// (and its pod count), and with the LeastAllocated strategy (weight 1) the
// node with the most cpu and memory left, requests counted with the non-zero
// defaults, scores highest.
import { MAX_NODE_SCORE, type Plugin } from '../framework';

/** Allocatable pods when a node states none (kubelet's default --max-pods), in milli-units. */
const DEFAULT_MAX_PODS_MILLI = 110_000;

/** (allocatable - requested) * 100 / allocatable; 0 when it does not fit. */
function leastRequested(requested: number, allocatable: number): number {
  if (allocatable === 0 || requested > allocatable) return 0;
  return Math.trunc(((allocatable - requested) * MAX_NODE_SCORE) / allocatable);
}

export const nodeResourcesFit: Plugin = {
  name: 'NodeResourcesFit',
  weight: 1,
  filter(s, n) {
    const reasons: string[] = [];
    const maxPods = (n.allocatable.get('pods') ?? DEFAULT_MAX_PODS_MILLI) / 1000;
    if (n.usage.pods + 1 > maxPods) reasons.push('Too many pods');
    for (const [name, amount] of s.fitRequests) {
      const have = n.allocatable.get(name) ?? 0;
      const used = n.usage.requested.get(name) ?? 0;
      if (amount > have - used) reasons.push(`Insufficient ${name}`);
    }
    return reasons.length ? { reasons, resolvable: true } : undefined;
  },
  score(s, n) {
    // Resources cpu and memory, weight 1 each (the default scoringStrategy).
    const cpu = leastRequested(n.usage.nonZeroCpu + s.nonZero.cpu, n.allocatable.get('cpu') ?? 0);
    const mem = leastRequested(
      n.usage.nonZeroMem + s.nonZero.mem,
      Math.trunc((n.allocatable.get('memory') ?? 0) / 1000),
    );
    return Math.trunc((cpu + mem) / 2);
  },
};

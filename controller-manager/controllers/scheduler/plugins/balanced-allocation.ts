// NodeResourcesBalancedAllocation (weight 1): the node whose cpu and memory
// would be used in the most equal shares scores highest: (1 - std) * 100 of
// the requested fractions. Requests as stated (no non-zero defaults); a pod
// that requests neither is not scored by it.
import { MAX_NODE_SCORE, type Plugin } from '../framework';

const fraction = (requested: number, allocatable: number) =>
  allocatable > 0 ? Math.min(1, requested / allocatable) : 1;

export const balancedAllocation: Plugin = {
  name: 'NodeResourcesBalancedAllocation',
  weight: 1,
  preScore: (s) => (s.requests.get('cpu') ?? 0) > 0 || (s.requests.get('memory') ?? 0) > 0,
  score(s, n) {
    const cpu = fraction(
      (n.usage.requested.get('cpu') ?? 0) + (s.requests.get('cpu') ?? 0),
      n.allocatable.get('cpu') ?? 0,
    );
    const mem = fraction(
      (n.usage.requested.get('memory') ?? 0) + (s.requests.get('memory') ?? 0),
      n.allocatable.get('memory') ?? 0,
    );
    // The standard deviation of two fractions is half their difference.
    return Math.trunc((1 - Math.abs(cpu - mem) / 2) * MAX_NODE_SCORE);
  },
};

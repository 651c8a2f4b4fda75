// One scheduling decision (kube's schedulePod): PreFilter, then Filter over
// the nodes starting where the previous search stopped until enough feasible
// nodes are found (the adaptive percentageOfNodesToScore), then PreScore,
// Score, normalize and the weighted sum, and the best node (ties at random).
import type { NodeInfo } from './cache';
import {
  fitErrorMessage,
  MAX_NODE_SCORE,
  preFilterErrorMessage,
  type CycleState,
  type Failure,
  type Plugin,
} from './framework';

/** kube-scheduler's minFeasibleNodesToFind and minFeasibleNodesPercentageToFind. */
const MIN_FEASIBLE_NODES = 100;
const MIN_FEASIBLE_PERCENTAGE = 5;
/** DefaultPercentageOfNodesToScore's adaptive base. */
const BASE_PERCENTAGE = 50;

/**
 * How many feasible nodes are enough (kube's numFeasibleNodesToFind with
 * percentageOfNodesToScore unset): every node up to 100, then 50% less one
 * point per 125 nodes, at least 5% and at least 100 nodes.
 */
export function numFeasibleNodesToFind(numNodes: number, percentageOfNodesToScore = 0): number {
  if (numNodes < MIN_FEASIBLE_NODES || percentageOfNodesToScore >= 100) return numNodes;
  let percentage = percentageOfNodesToScore;
  if (percentage <= 0)
    percentage = Math.max(MIN_FEASIBLE_PERCENTAGE, BASE_PERCENTAGE - Math.trunc(numNodes / 125));
  return Math.max(MIN_FEASIBLE_NODES, Math.trunc((numNodes * percentage) / 100));
}

export type Decision = { node: string; feasible: number } | { message: string };

export class Algorithm {
  /** Where the next search for feasible nodes starts (kube's nextStartNodeIndex). */
  private nextStartNodeIndex = 0;
  private readonly filters: Plugin[];
  private readonly scorers: Plugin[];

  constructor(
    private readonly plugins: Plugin[],
    private readonly percentageOfNodesToScore = 0,
  ) {
    this.filters = plugins.filter((p) => p.filter);
    this.scorers = plugins.filter((p) => p.score);
  }

  schedule(s: CycleState, random: () => number = Math.random): Decision {
    const nodes = s.cache.nodes();
    if (!nodes.length) return { message: 'no nodes available to schedule pods' };
    for (const p of this.plugins) {
      const msg = p.preFilter?.(s);
      if (msg) return { message: preFilterErrorMessage(nodes.length, msg) };
    }
    const feasible: NodeInfo[] = [];
    const failures: Failure[] = [];
    const enough = numFeasibleNodesToFind(nodes.length, this.percentageOfNodesToScore);
    const start = this.nextStartNodeIndex % nodes.length;
    let seen = 0;
    for (; seen < nodes.length && feasible.length < enough; seen++) {
      const n = nodes[(start + seen) % nodes.length];
      const f = this.runFilters(s, n);
      if (f) failures.push(f);
      else feasible.push(n);
    }
    this.nextStartNodeIndex = (start + seen) % nodes.length;
    if (!feasible.length) return { message: fitErrorMessage(nodes.length, failures) };
    if (feasible.length === 1) return { node: feasible[0].name, feasible: 1 };
    const totals = this.prioritize(s, feasible);
    // selectHost: the highest total, one of the tied at random (reservoir sampling).
    let best = 0;
    let ties = 1;
    for (let i = 1; i < totals.length; i++) {
      if (totals[i] > totals[best]) {
        best = i;
        ties = 1;
      } else if (totals[i] === totals[best] && random() * ++ties < 1) best = i;
    }
    return { node: feasible[best].name, feasible: feasible.length };
  }

  /** The first failing filter's verdict on the node (kube stops there). */
  private runFilters(s: CycleState, n: NodeInfo): Failure | undefined {
    for (const p of this.filters) {
      const f = p.filter!(s, n);
      if (f) return f;
    }
    return undefined;
  }

  /** Σ weight × normalized score per feasible node. */
  prioritize(s: CycleState, feasible: NodeInfo[]): number[] {
    const totals = new Array<number>(feasible.length).fill(0);
    for (const p of this.scorers) {
      if (p.preScore && !p.preScore(s, feasible)) continue;
      const scores = feasible.map((n) => p.score!(s, n));
      p.normalize?.(s, scores, feasible);
      const w = p.weight ?? 1;
      for (let i = 0; i < scores.length; i++)
        totals[i] += w * Math.min(MAX_NODE_SCORE, Math.max(0, scores[i]));
    }
    return totals;
  }
}

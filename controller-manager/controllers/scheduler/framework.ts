// The scheduling framework's shape (kube-scheduler's framework package, cut to
// what the default profile uses): a cycle state per pod, plugins with the
// extension points PreFilter, Filter, PreScore, Score (+ normalize) and
// PreBind, and the fit error kube-scheduler reports when no node fits.
import type { Obj } from '../util/base';
import { hostPortsOf, podRequests, type Resources } from '../../../shared/api/scheduling';
import { nonZeroRequests, type NodeInfo, type SchedulerCache } from './cache';

/** framework.MaxNodeScore: every score plugin's range is 0..100 after normalizing. */
export const MAX_NODE_SCORE = 100;

/** One filter failure on one node: reasons and whether preemption could help. */
export interface Failure {
  reasons: string[];
  /** Unschedulable (preemption might help) rather than UnschedulableAndUnresolvable. */
  resolvable: boolean;
}

/** What a scheduling cycle computes once per pod and shares between its plugins. */
export class CycleState {
  readonly requests: Resources;
  /** The requests NodeResourcesFit checks: non-zero, pods aside (the pod count is its own check). */
  readonly fitRequests: [string, number][];
  readonly nonZero: { cpu: number; mem: number };
  readonly hostPorts: string[];
  /** Plugin-private data (PreFilter/PreScore results), by plugin name. */
  private readonly data = new Map<string, unknown>();

  constructor(
    readonly pod: Obj,
    readonly cache: SchedulerCache,
  ) {
    this.requests = podRequests(pod);
    this.fitRequests = [...this.requests].filter(([name, amount]) => amount !== 0 && name !== 'pods');
    this.nonZero = nonZeroRequests(pod);
    this.hostPorts = hostPortsOf(pod);
  }

  read<T>(plugin: string): T | undefined {
    return this.data.get(plugin) as T | undefined;
  }

  write(plugin: string, v: unknown): void {
    this.data.set(plugin, v);
  }
}

export interface Plugin {
  readonly name: string;
  /** Once per pod: a message when the pod fits no node at all (PreFilter's UnschedulableAndUnresolvable). */
  preFilter?(s: CycleState): string | undefined;
  filter?(s: CycleState, n: NodeInfo): Failure | undefined;
  /** Its weight in the default profile (score plugins). */
  readonly weight?: number;
  /** Once per pod over the feasible nodes; false skips the plugin's scores for this pod. */
  preScore?(s: CycleState, nodes: NodeInfo[]): boolean;
  score?(s: CycleState, n: NodeInfo): number;
  /** Maps raw scores (in place) into 0..MAX_NODE_SCORE. */
  normalize?(s: CycleState, scores: number[], nodes: NodeInfo[]): void;
  /** Before the binding, once a node is chosen (VolumeBinding writes the claims' selected node). */
  preBind?(s: CycleState, node: string, signal: AbortSignal): Promise<void>;
}

/** helper.DefaultNormalizeScore: scale to the maximum (0 when all are 0), reversed if asked. */
export function defaultNormalizeScore(scores: number[], reverse: boolean): void {
  let max = 0;
  for (const s of scores) max = Math.max(max, s);
  for (let i = 0; i < scores.length; i++) {
    let v = max === 0 ? 0 : Math.trunc((MAX_NODE_SCORE * scores[i]) / max);
    if (reverse) v = MAX_NODE_SCORE - v;
    scores[i] = v;
  }
}

const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
const NO_VICTIMS = 'No preemption victims found for incoming pod';

function preemptionMessage(numNodes: number, failures: Failure[]): string {
  const pre = new Map<string, number>();
  for (const f of failures) {
    const r = f.resolvable ? NO_VICTIMS : NOT_HELPFUL;
    pre.set(r, (pre.get(r) ?? 0) + 1);
  }
  const preParts = [...pre].map(([r, n]) => `${n} ${r}`).sort();
  return ` preemption: 0/${numNodes} nodes are available: ${preParts.join(', ')}.`;
}

/** FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 .... preemption: ...". */
export function fitErrorMessage(numNodes: number, failures: Failure[]): string {
  const hist = new Map<string, number>();
  for (const f of failures) for (const r of f.reasons) hist.set(r, (hist.get(r) ?? 0) + 1);
  const parts = [...hist].map(([r, n]) => `${n} ${r}`).sort();
  return `0/${numNodes} nodes are available: ${parts.join(', ')}.` + preemptionMessage(numNodes, failures);
}

/** FitError.Error() when a PreFilter plugin rejected the pod: its message, every node unresolvable. */
export function preFilterErrorMessage(numNodes: number, message: string): string {
  const all = Array.from({ length: numNodes }, () => ({ reasons: [], resolvable: false }));
  return `0/${numNodes} nodes are available: ${message}.` + preemptionMessage(numNodes, all);
}

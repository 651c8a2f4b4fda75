// PodTopologySpread (weight 2): the pod's topologySpreadConstraints —
// DoNotSchedule ones filter (the skew a node would give must stay within
// maxSkew), ScheduleAnyway ones score — and, for a pod with none, the system
// default constraints (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway).
// The system defaults select the pods of the same ReplicaSet, StatefulSet or
// ReplicationController (kube merges the selectors of those and of the Services
// that select the pod into one, which in practice matches the controller's own
// pods; a pod of a Job or DaemonSet gets no default constraints, as there),
// counted per node from the cache in O(1).
import { selectorFromObject, type LabelSelector } from '../../../../shared/api/labels';
import { podMatchesNodeSelectorAndAffinity } from '../../../../shared/api/scheduling';
import type { Obj } from '../../util/base';
import { getControllerOf } from '../../util/controller-ref';
import type { NodeInfo, NodeUsage } from '../cache';
import { MAX_NODE_SCORE, type CycleState, type Plugin } from '../framework';

const NAME = 'PodTopologySpread';
const HOSTNAME = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

interface Constraint {
  topologyKey: string;
  maxSkew: number;
  minDomains: number;
  /** Whether the incoming pod itself matches the selector (it adds one where it lands). */
  selfMatch: number;
  /** Matching pods on a node. */
  count(u: NodeUsage): number;
}

function selectorCount(pod: Obj, sel: LabelSelector): (u: NodeUsage) => number {
  const ns = pod.metadata.namespace;
  return (u) => {
    let n = 0;
    for (const p of u.podObjs.values())
      if (p.metadata.namespace === ns && !p.metadata.deletionTimestamp && sel.matches(p.metadata.labels)) n++;
    return n;
  };
}

/** The pod's own constraints with this whenUnsatisfiable. */
function userConstraints(pod: Obj, when: string): Constraint[] {
  const out: Constraint[] = [];
  for (const c of pod.spec?.topologySpreadConstraints ?? []) {
    if (c.whenUnsatisfiable !== when) continue;
    const sel = selectorFromObject(c.labelSelector);
    if (!sel) continue;
    out.push({
      topologyKey: c.topologyKey,
      maxSkew: c.maxSkew ?? 1,
      minDomains: c.minDomains ?? 1,
      selfMatch: sel.matches(pod.metadata.labels) ? 1 : 0,
      count: selectorCount(pod, sel),
    });
  }
  return out;
}

/** The controllers whose selectors kube's DefaultSelector takes (helper.DefaultSelector). */
const SPREAD_BY_DEFAULT = new Set(['apps/ReplicaSet', 'apps/StatefulSet', '/ReplicationController']);

function systemDefaults(pod: Obj): Constraint[] {
  const ref = getControllerOf(pod);
  const group = ref?.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
  if (!ref || !SPREAD_BY_DEFAULT.has(`${group}/${ref.kind}`)) return [];
  const owner = ref.uid;
  const count = (u: NodeUsage) => u.owners.get(owner) ?? 0;
  return [
    { topologyKey: HOSTNAME, maxSkew: 3, minDomains: 1, selfMatch: 1, count },
    { topologyKey: ZONE, maxSkew: 5, minDomains: 1, selfMatch: 1, count },
  ];
}

const hasAllKeys = (n: NodeInfo, cs: Constraint[]) =>
  cs.every((c) => n.node.metadata.labels?.[c.topologyKey] !== undefined);

interface FilterState {
  constraints: Constraint[];
  /** Per constraint: matching pods per domain, and the smallest count. */
  domains: Map<string, number>[];
  minMatch: number[];
}

interface ScoreState {
  constraints: Constraint[];
  requireAll: boolean;
  ignored: Set<string>;
  weights: number[];
  /** Per constraint (not hostname): matching pods per domain among the candidates' domains. */
  pairCounts: Map<string, number>[];
}

function filterState(s: CycleState): FilterState {
  const constraints = userConstraints(s.pod, 'DoNotSchedule');
  const domains = constraints.map(() => new Map<string, number>());
  if (constraints.length) {
    for (const n of s.cache.nodes()) {
      // nodeAffinityPolicy Honor: only nodes the pod could go to count; nodeTaintsPolicy Ignore.
      if (!hasAllKeys(n, constraints) || !podMatchesNodeSelectorAndAffinity(s.pod.spec, n.node)) continue;
      constraints.forEach((c, i) => {
        const v = n.node.metadata.labels![c.topologyKey];
        domains[i].set(v, (domains[i].get(v) ?? 0) + c.count(n.usage));
      });
    }
  }
  const minMatch = constraints.map((c, i) =>
    domains[i].size < c.minDomains ? 0 : Math.min(...domains[i].values()),
  );
  return { constraints, domains, minMatch };
}

/** log(size + 2): more domains weigh a constraint more (topologyNormalizingWeight). */
const normalizingWeight = (size: number) => Math.log(size + 2);

export const podTopologySpread: Plugin = {
  name: NAME,
  weight: 2,
  preFilter(s) {
    s.write(`${NAME}/filter`, filterState(s));
    return undefined;
  },
  filter(s, n) {
    const st = s.read<FilterState>(`${NAME}/filter`)!;
    if (!st.constraints.length) return undefined;
    if (!hasAllKeys(n, st.constraints))
      return {
        reasons: ["node(s) didn't match pod topology spread constraints (missing required label)"],
        resolvable: false,
      };
    for (let i = 0; i < st.constraints.length; i++) {
      const c = st.constraints[i];
      const v = n.node.metadata.labels![c.topologyKey];
      const skew = (st.domains[i].get(v) ?? 0) + c.selfMatch - st.minMatch[i];
      if (skew > c.maxSkew)
        return { reasons: ["node(s) didn't match pod topology spread constraints"], resolvable: true };
    }
    return undefined;
  },
  preScore(s, nodes) {
    const own = userConstraints(s.pod, 'ScheduleAnyway');
    const hasOwn = (s.pod.spec?.topologySpreadConstraints?.length ?? 0) > 0;
    const constraints = hasOwn ? own : systemDefaults(s.pod);
    if (!constraints.length) return false;
    const requireAll = hasOwn;
    const ignored = new Set<string>();
    const pairCounts = constraints.map(() => new Map<string, number>());
    const sizes = constraints.map(() => 0);
    for (const n of nodes) {
      if (requireAll && !hasAllKeys(n, constraints)) {
        ignored.add(n.name);
        continue;
      }
      constraints.forEach((c, i) => {
        if (c.topologyKey === HOSTNAME) return;
        const v = n.node.metadata.labels?.[c.topologyKey] ?? '';
        if (!pairCounts[i].has(v)) {
          pairCounts[i].set(v, 0);
          sizes[i]++;
        }
      });
    }
    const weights = constraints.map((c, i) =>
      normalizingWeight(c.topologyKey === HOSTNAME ? nodes.length - ignored.size : sizes[i]),
    );
    // Domain counts over every node (not only the candidates), where a candidate has a domain.
    const zoned = constraints.some(
      (c, i) => c.topologyKey !== HOSTNAME && [...pairCounts[i].keys()].some(Boolean),
    );
    if (zoned)
      for (const n of s.cache.nodes()) {
        if (requireAll && !hasAllKeys(n, constraints)) continue;
        if (!podMatchesNodeSelectorAndAffinity(s.pod.spec, n.node)) continue;
        constraints.forEach((c, i) => {
          const v = n.node.metadata.labels?.[c.topologyKey];
          if (c.topologyKey === HOSTNAME || !v || !pairCounts[i].has(v)) return;
          pairCounts[i].set(v, pairCounts[i].get(v)! + c.count(n.usage));
        });
      }
    s.write(`${NAME}/score`, { constraints, requireAll, ignored, weights, pairCounts } satisfies ScoreState);
    return true;
  },
  score(s, n) {
    const st = s.read<ScoreState>(`${NAME}/score`)!;
    if (st.ignored.has(n.name)) return 0;
    let score = 0;
    st.constraints.forEach((c, i) => {
      const v = n.node.metadata.labels?.[c.topologyKey];
      if (v === undefined) return;
      const cnt = c.topologyKey === HOSTNAME ? c.count(n.usage) : (st.pairCounts[i].get(v) ?? 0);
      score += cnt * st.weights[i] + (c.maxSkew - 1);
    });
    return Math.round(score);
  },
  normalize(s, scores, nodes) {
    const st = s.read<ScoreState>(`${NAME}/score`)!;
    let min = Infinity;
    let max = 0;
    nodes.forEach((n, i) => {
      if (st.ignored.has(n.name)) return;
      min = Math.min(min, scores[i]);
      max = Math.max(max, scores[i]);
    });
    nodes.forEach((n, i) => {
      if (st.ignored.has(n.name)) scores[i] = 0;
      else if (max === 0) scores[i] = MAX_NODE_SCORE;
      else scores[i] = Math.trunc((MAX_NODE_SCORE * (max + min - scores[i])) / max);
    });
  },
};

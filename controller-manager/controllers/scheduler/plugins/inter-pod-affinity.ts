// InterPodAffinity (weight 2): required pod affinity and anti-affinity of
// the incoming pod, and the required anti-affinity of pods already placed,
// filter by topology domain; preferred terms (and placed pods' terms that
// match the incoming pod) score. Pods without any such terms cost nothing:
// the cache keeps the placed pods that have terms apart.
// A term's namespaces (kube-scheduler's AffinityTerm): those its list names and
// those its namespaceSelector selects by the namespace's labels ({} selects
// every one); with neither, the pod's own.
import { selectorFromObject } from '../../../../shared/api/labels';
import type { Obj } from '../../util/base';
import type { NodeInfo } from '../cache';
import { MAX_NODE_SCORE, type CycleState, type Plugin } from '../framework';

const NAME = 'InterPodAffinity';
/** hardPodAffinityWeight: a placed pod's required affinity to the incoming one counts this much. */
const HARD_POD_AFFINITY_WEIGHT = 1;

interface Term {
  topologyKey: string;
  matches(p: Obj): boolean;
}

/** A namespace's labels (undefined: not known, so no selector but {} selects it). */
export type NamespaceLabels = (namespace: string) => Record<string, string> | undefined;

function termOf(owner: Obj, t: any, nsLabels: NamespaceLabels): Term {
  const sel = selectorFromObject(t.labelSelector);
  const listed: string[] = t.namespaces ?? [];
  const names = new Set(listed.length || t.namespaceSelector ? listed : [owner.metadata.namespace]);
  const nsSel = t.namespaceSelector ? selectorFromObject(t.namespaceSelector) : null;
  const inNamespace = (ns: string) => names.has(ns) || (!!nsSel && nsSel.matches(nsLabels(ns) ?? {}));
  return {
    topologyKey: t.topologyKey,
    matches: (p) => !!sel && inNamespace(p.metadata.namespace!) && sel.matches(p.metadata.labels),
  };
}

/** The plugin's view of one cycle: the terms of any pod, read with the namespaces' labels. */
class Terms {
  constructor(private readonly nsLabels: NamespaceLabels) {}

  required(pod: Obj, kind: 'podAffinity' | 'podAntiAffinity'): Term[] {
    return (pod.spec?.affinity?.[kind]?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map((t: any) =>
      termOf(pod, t, this.nsLabels),
    );
  }

  preferred(pod: Obj, kind: 'podAffinity' | 'podAntiAffinity'): { term: Term; weight: number }[] {
    return (pod.spec?.affinity?.[kind]?.preferredDuringSchedulingIgnoredDuringExecution ?? []).map(
      (w: any) => ({ term: termOf(pod, w.podAffinityTerm ?? {}, this.nsLabels), weight: w.weight ?? 0 }),
    );
  }
}

const pair = (key: string, value: string) => `${key}=${value}`;

/** Every placed pod with its node's labels. */
function* placedPods(s: CycleState): Generator<[Obj, Record<string, string>]> {
  for (const n of s.cache.nodes())
    for (const p of n.usage.podObjs.values()) yield [p, n.node.metadata.labels ?? {}];
}

interface FilterState {
  affinity: Term[];
  antiAffinity: Term[];
  existingAnti: Map<string, number>;
  affinityCounts: Map<string, number>;
  antiCounts: Map<string, number>;
}

function add(m: Map<string, number>, k: string, by = 1): void {
  m.set(k, (m.get(k) ?? 0) + by);
}

function filterState(s: CycleState, terms: Terms): FilterState | undefined {
  const affinity = terms.required(s.pod, 'podAffinity');
  const antiAffinity = terms.required(s.pod, 'podAntiAffinity');
  if (!affinity.length && !antiAffinity.length && !s.cache.requiredAntiAffinityPods) return undefined;
  const existingAnti = new Map<string, number>();
  for (const share of s.cache.podsWithAffinity.values()) {
    const labels = s.cache.node(share.node)?.node.metadata.labels ?? {};
    for (const t of terms.required(share.pod, 'podAntiAffinity'))
      if (labels[t.topologyKey] !== undefined && t.matches(s.pod))
        add(existingAnti, pair(t.topologyKey, labels[t.topologyKey]));
  }
  const affinityCounts = new Map<string, number>();
  const antiCounts = new Map<string, number>();
  if (affinity.length || antiAffinity.length)
    for (const [p, labels] of placedPods(s)) {
      for (const t of affinity)
        if (labels[t.topologyKey] !== undefined && t.matches(p))
          add(affinityCounts, pair(t.topologyKey, labels[t.topologyKey]));
      for (const t of antiAffinity)
        if (labels[t.topologyKey] !== undefined && t.matches(p))
          add(antiCounts, pair(t.topologyKey, labels[t.topologyKey]));
    }
  return { affinity, antiAffinity, existingAnti, affinityCounts, antiCounts };
}

function satisfiesAffinity(st: FilterState, pod: Obj, labels: Record<string, string>): boolean {
  if (!st.affinity.length) return true;
  if (
    st.affinity.every(
      (t) =>
        labels[t.topologyKey] !== undefined &&
        (st.affinityCounts.get(pair(t.topologyKey, labels[t.topologyKey])) ?? 0) > 0,
    )
  )
    return true;
  // The first pod of a group that selects itself may go anywhere its topology keys exist.
  return (
    st.affinityCounts.size === 0 &&
    st.affinity.every((t) => t.matches(pod) && labels[t.topologyKey] !== undefined)
  );
}

interface ScoreState {
  topologyScore: Map<string, number>;
}

/** The plugin, reading namespaces' labels for terms with a namespaceSelector. */
export function interPodAffinity(nsLabels: NamespaceLabels): Plugin {
  const terms = new Terms(nsLabels);
  return {
    name: NAME,
    weight: 2,
    preFilter(s) {
      s.write(`${NAME}/filter`, filterState(s, terms));
      return undefined;
    },
    filter(s, n) {
      const st = s.read<FilterState>(`${NAME}/filter`);
      if (!st) return undefined;
      const labels: Record<string, string> = n.node.metadata.labels ?? {};
      if (st.existingAnti.size)
        for (const [k, v] of Object.entries(labels))
          if (st.existingAnti.has(pair(k, v)))
            return {
              reasons: ["node(s) didn't satisfy existing pods anti-affinity rules"],
              resolvable: true,
            };
      for (const t of st.antiAffinity)
        if (
          labels[t.topologyKey] !== undefined &&
          st.antiCounts.has(pair(t.topologyKey, labels[t.topologyKey]))
        )
          return { reasons: ["node(s) didn't match pod anti-affinity rules"], resolvable: true };
      if (!satisfiesAffinity(st, s.pod, labels))
        return { reasons: ["node(s) didn't match pod affinity rules"], resolvable: false };
      return undefined;
    },
    preScore(s) {
      const prefAff = terms.preferred(s.pod, 'podAffinity');
      const prefAnti = terms.preferred(s.pod, 'podAntiAffinity');
      const own = prefAff.length + prefAnti.length > 0;
      if (!own && !s.cache.podsWithAffinity.size) return false;
      const topologyScore = new Map<string, number>();
      const credit = (labels: Record<string, string>, key: string, w: number) => {
        if (labels[key] !== undefined) add(topologyScore, pair(key, labels[key]), w);
      };
      // The incoming pod's preferences over every placed pod.
      if (own)
        for (const [p, labels] of placedPods(s)) {
          for (const { term, weight } of prefAff)
            if (term.matches(p)) credit(labels, term.topologyKey, weight);
          for (const { term, weight } of prefAnti)
            if (term.matches(p)) credit(labels, term.topologyKey, -weight);
        }
      // Placed pods' terms that match the incoming pod.
      for (const share of s.cache.podsWithAffinity.values()) {
        const labels = s.cache.node(share.node)?.node.metadata.labels ?? {};
        for (const t of terms.required(share.pod, 'podAffinity'))
          if (t.matches(s.pod)) credit(labels, t.topologyKey, HARD_POD_AFFINITY_WEIGHT);
        for (const { term, weight } of terms.preferred(share.pod, 'podAffinity'))
          if (term.matches(s.pod)) credit(labels, term.topologyKey, weight);
        for (const { term, weight } of terms.preferred(share.pod, 'podAntiAffinity'))
          if (term.matches(s.pod)) credit(labels, term.topologyKey, -weight);
      }
      if (!topologyScore.size) return false;
      s.write(`${NAME}/score`, { topologyScore } satisfies ScoreState);
      return true;
    },
    score(s, n: NodeInfo) {
      const { topologyScore } = s.read<ScoreState>(`${NAME}/score`)!;
      let sum = 0;
      for (const [k, v] of Object.entries<string>(n.node.metadata.labels ?? {}))
        sum += topologyScore.get(pair(k, v)) ?? 0;
      return sum;
    },
    normalize(_s, scores) {
      let min = Infinity;
      let max = -Infinity;
      for (const v of scores) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      for (let i = 0; i < scores.length; i++)
        scores[i] = max - min > 0 ? Math.trunc((MAX_NODE_SCORE * (scores[i] - min)) / (max - min)) : 0;
    },
  };
}

// Taints and tolerations as the node lifecycle and taint eviction controllers
// use them (taintutils, v1helper.GetMatchingTolerations, controller utils'
// SwapNodeControllerTaint), and nodes' zones.
import { isConflict, isNotFound, type Client, type KubeObject } from '../../../shared/client';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  matchTaint,
  toleratesTaint,
  type Taint,
  type Toleration,
} from '../../../shared/api/taints';
import { rfc3339 } from '../util/base';

export const UNREACHABLE_NO_EXECUTE: Taint = { key: TAINT_UNREACHABLE, effect: 'NoExecute' };
export const NOT_READY_NO_EXECUTE: Taint = { key: TAINT_NOT_READY, effect: 'NoExecute' };

/** Which condition status puts which NoSchedule taint on a node. */
export const CONDITION_TAINTS: Record<string, Record<string, string>> = {
  Ready: { False: TAINT_NOT_READY, Unknown: TAINT_UNREACHABLE },
  MemoryPressure: { True: TAINT_MEMORY_PRESSURE },
  DiskPressure: { True: TAINT_DISK_PRESSURE },
  NetworkUnavailable: { True: TAINT_NETWORK_UNAVAILABLE },
  PIDPressure: { True: TAINT_PID_PRESSURE },
};
export const CONDITION_TAINT_KEYS = new Set(Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)));

export const taintExists = (taints: Taint[] | undefined, t: Taint) => !!taints?.some((x) => matchTaint(x, t));

/** v1helper.GetMatchingTolerations: whether every taint is tolerated, and the tolerations used. */
export function matchingTolerations(taints: Taint[], tolerations: Toleration[]): [boolean, Toleration[]] {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const t = tolerations.find((tol) => toleratesTaint(tol, taint));
    if (!t) return [false, []];
    used.push(t);
  }
  return [true, used];
}

/** Seconds until eviction for the tolerations used: 0 = now, -1 = never. */
export function minTolerationSeconds(used: Toleration[]): number {
  if (!used.length) return 0;
  let min = Infinity;
  for (const t of used) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    // An int64: past 2^53 a bigint from the codecs; as seconds to wait a double is plenty.
    const seconds = Number(t.tolerationSeconds);
    if (seconds <= 0) return 0;
    if (seconds < min) min = seconds;
  }
  return min === Infinity ? -1 : min;
}

/** nodetopology.GetZoneKey: "region:\0:zone" from the topology (or legacy failure-domain) labels. */
export function zoneKey(node: KubeObject): string {
  const l = node.metadata?.labels ?? {};
  const region = l['topology.kubernetes.io/region'] ?? l['failure-domain.beta.kubernetes.io/region'] ?? '';
  const zone = l['topology.kubernetes.io/zone'] ?? l['failure-domain.beta.kubernetes.io/zone'] ?? '';
  if (!region && !zone) return '';
  return `${region}:\x00:${zone}`;
}

/**
 * Adds taintsToAdd (NoExecute ones stamped with timeAdded) and removes
 * taintsToRemove on the node, under optimistic concurrency; the first try uses
 * the given (cached) node, retries read it again. False when it failed.
 */
export async function swapNodeTaints(
  client: Client,
  node: KubeObject,
  taintsToAdd: Taint[],
  taintsToRemove: Taint[],
  now: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const nodes = client.resource('nodes');
  let current: KubeObject = node;
  for (let attempt = 1; attempt <= 5; attempt++) {
    if (attempt > 1) {
      try {
        current = await nodes.get(node.metadata.name!, { signal });
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    }
    const old: Taint[] = current.spec?.taints ?? [];
    let next = old.filter((t) => !taintsToRemove.some((r) => matchTaint(r, t)));
    for (const add of taintsToAdd) {
      const existing = next.find((t) => matchTaint(t, add));
      if (existing && (existing.value ?? '') === (add.value ?? '')) continue;
      next = next.filter((t) => !matchTaint(t, add));
      next.push({ ...add, ...(add.effect === 'NoExecute' ? { timeAdded: rfc3339(now) } : {}) });
    }
    if (JSON.stringify(next) === JSON.stringify(old)) return true;
    try {
      await nodes.patch(
        node.metadata.name!,
        {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          spec: { taints: next.length ? next : null },
        },
        'merge',
        { signal },
      );
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      if (!isConflict(err)) throw err;
    }
  }
  return false;
}

// RollingUpdate: the new ReplicaSet grows within maxSurge while old ones shrink
// within maxUnavailable (unavailable old pods first), a step per sync.
import type { Obj } from '../util/base';
import { allAndSyncRevision, cleanupDeployment } from './revisions';
import { syncRolloutStatus } from './status';
import type { DeploymentSync } from './sync';
import * as u from './util';

export async function rolloutRolling(s: DeploymentSync): Promise<void> {
  let { newRS, olds } = await allAndSyncRevision(s, true);
  const all = () => [...olds, ...(newRS ? [newRS] : [])];
  if (await reconcileNewReplicaSet(s, all(), newRS!)) {
    ({ newRS, olds } = s.refresh(newRS, olds));
    await syncRolloutStatus(s, all(), newRS);
    return;
  }
  ({ newRS, olds } = s.refresh(newRS, olds));
  if (await reconcileOldReplicaSets(s, all(), u.activeSets(olds), newRS)) {
    ({ newRS, olds } = s.refresh(newRS, olds));
    await syncRolloutStatus(s, all(), newRS);
    return;
  }
  ({ newRS, olds } = s.refresh(newRS, olds));
  if (u.deploymentComplete(s.d, s.d.status ?? {})) await cleanupDeployment(s, olds);
  ({ newRS, olds } = s.refresh(newRS, olds));
  await syncRolloutStatus(s, all(), newRS);
}

async function reconcileNewReplicaSet(s: DeploymentSync, all: Obj[], newRS: Obj): Promise<boolean> {
  const d = s.d;
  if (u.replicasOf(newRS) === u.replicasOf(d)) return false;
  if (u.replicasOf(newRS) > u.replicasOf(d)) return s.scaleReplicaSet(newRS, u.replicasOf(d), 'down');
  return s.scaleIfNeeded(newRS, u.newRSNewReplicas(d, all, newRS));
}

async function reconcileOldReplicaSets(
  s: DeploymentSync,
  all: Obj[],
  olds: Obj[],
  newRS: Obj | undefined,
): Promise<boolean> {
  const d = s.d;
  if (u.specReplicasSum(olds) === 0) return false;
  const allPods = u.specReplicasSum(all);
  const minAvailable = u.replicasOf(d) - u.maxUnavailable(d);
  const newUnavailable = u.replicasOf(newRS) - (newRS?.status?.availableReplicas ?? 0);
  const maxScaledDown = allPods - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  const cleaned = await cleanupUnhealthyReplicas(s, olds, maxScaledDown);
  const fresh = s.refresh(newRS, olds);
  const allNow = [...fresh.olds, ...(fresh.newRS ? [fresh.newRS] : [])];
  const scaledDown = await scaleDownOldForRollingUpdate(s, allNow, u.activeSets(fresh.olds));
  return cleaned + scaledDown > 0;
}

/** Scales down old sets' unavailable pods first, oldest sets first. */
async function cleanupUnhealthyReplicas(s: DeploymentSync, olds: Obj[], maxCleanup: number): Promise<number> {
  let total = 0;
  for (const rs of [...olds].sort(u.byCreation)) {
    if (total >= maxCleanup) break;
    const r = u.replicasOf(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (r === 0 || r === available) continue;
    const down = Math.min(maxCleanup - total, r - available);
    const size = r - down;
    if (size > r)
      throw new Error(
        `when cleaning up unhealthy replicas, got invalid request to scale down ${rs.metadata.name} ${r} -> ${size}`,
      );
    await s.scaleReplicaSet(rs, size, 'down');
    total += down;
  }
  return total;
}

async function scaleDownOldForRollingUpdate(s: DeploymentSync, all: Obj[], olds: Obj[]): Promise<number> {
  const d = s.d;
  const minAvailable = u.replicasOf(d) - u.maxUnavailable(d);
  const available = u.availableReplicasSum(all);
  if (available <= minAvailable) return 0;
  const totalDown = available - minAvailable;
  let done = 0;
  for (const rs of [...olds].sort(u.byCreation)) {
    if (done >= totalDown) break;
    const r = u.replicasOf(rs);
    if (r === 0) continue;
    const down = Math.min(r, totalDown - done);
    await s.scaleReplicaSet(rs, r - down, 'down');
    done += down;
  }
  return done;
}

// Recreate: every old pod is gone (not just scaled away) before the new
// ReplicaSet is created and scaled up.
import type { Obj } from '../util/base';
import { allAndSyncRevision, cleanupDeployment } from './revisions';
import { syncRolloutStatus } from './status';
import type { DeploymentSync } from './sync';
import * as u from './util';

export async function rolloutRecreate(s: DeploymentSync, podMap: Map<string, Obj[]>): Promise<void> {
  let { newRS, olds } = await allAndSyncRevision(s, false);
  const all = () => [...olds, ...(newRS ? [newRS] : [])];
  let scaledDown = false;
  for (const rs of u.activeSets(olds)) if (await s.scaleIfNeeded(rs, 0)) scaledDown = true;
  ({ newRS, olds } = s.refresh(newRS, olds));
  if (scaledDown) {
    await syncRolloutStatus(s, all(), newRS);
    return;
  }
  if (oldPodsRunning(newRS, olds, podMap)) {
    await syncRolloutStatus(s, all(), newRS);
    return;
  }
  if (!newRS) ({ newRS, olds } = await allAndSyncRevision(s, true));
  await s.scaleIfNeeded(newRS!, u.replicasOf(s.d));
  ({ newRS, olds } = s.refresh(newRS, olds));
  if (u.deploymentComplete(s.d, s.d.status ?? {})) await cleanupDeployment(s, olds);
  ({ newRS, olds } = s.refresh(newRS, olds));
  await syncRolloutStatus(s, all(), newRS);
}

function oldPodsRunning(newRS: Obj | undefined, olds: Obj[], podMap: Map<string, Obj[]>): boolean {
  if (u.statusReplicasSum(olds) > 0) return true;
  for (const [uid, pods] of podMap) {
    if (newRS && newRS.metadata.uid === uid) continue;
    for (const p of pods) {
      const phase = p.status?.phase;
      if (phase === 'Failed' || phase === 'Succeeded') continue;
      return true;
    }
  }
  return false;
}

// Scaling a Deployment without a rollout step: a changed spec.replicas (seen
// through the sets' desired-replicas annotations) or a paused Deployment.
// While a rollout is in progress every active set scales in proportion.
import type { Obj } from '../util/base';
import { allAndSyncRevision, cleanupDeployment } from './revisions';
import { syncDeploymentStatus } from './status';
import type { DeploymentSync } from './sync';
import * as u from './util';

export async function isScalingEvent(s: DeploymentSync): Promise<boolean> {
  const { newRS, olds } = await allAndSyncRevision(s, false);
  for (const rs of u.activeSets([...olds, newRS])) {
    const desired = rs.metadata.annotations?.[u.DESIRED_REPLICAS_ANNOTATION];
    if (!desired || !/^\d+$/.test(desired)) continue;
    if (Number(desired) !== u.replicasOf(s.d)) return true;
  }
  return false;
}

/** sync: scaling (proportional while a rollout is in progress) and paused Deployments. */
export async function scaleSync(s: DeploymentSync): Promise<void> {
  const { newRS, olds } = await allAndSyncRevision(s, false);
  await scale(s, newRS, olds);
  const fresh = s.refresh(newRS, olds);
  if (s.d.spec?.paused) await cleanupDeployment(s, fresh.olds);
  await syncDeploymentStatus(s, [...fresh.olds, ...(fresh.newRS ? [fresh.newRS] : [])], fresh.newRS);
}

async function scale(s: DeploymentSync, newRS: Obj | undefined, olds: Obj[]): Promise<void> {
  const d = s.d;
  const target = u.findActiveOrLatest(newRS, olds);
  if (target) {
    if (u.replicasOf(target) === u.replicasOf(d)) return;
    await s.scaleIfNeeded(target, u.replicasOf(d));
    return;
  }
  if (u.isSaturated(d, newRS)) {
    for (const old of u.activeSets(olds)) await s.scaleIfNeeded(old, 0);
    return;
  }
  if (!u.isRollingUpdate(d)) return;
  const all = u.activeSets([...olds, newRS]);
  const allReplicas = u.specReplicasSum(all);
  const allowed = u.replicasOf(d) > 0 ? u.replicasOf(d) + u.maxSurge(d) : 0;
  const toAdd = allowed - allReplicas;
  let op: 'up' | 'down' | undefined;
  if (toAdd > 0) {
    all.sort(u.bySizeNewer);
    op = 'up';
  } else if (toAdd < 0) {
    all.sort(u.bySizeOlder);
    op = 'down';
  }
  let added = 0;
  const sizes = new Map<string, number>();
  for (const rs of all) {
    if (toAdd !== 0) {
      const p = u.proportion(rs, d, toAdd, added);
      sizes.set(rs.metadata.name!, u.replicasOf(rs) + p);
      added += p;
    } else sizes.set(rs.metadata.name!, u.replicasOf(rs));
  }
  for (let i = 0; i < all.length; i++) {
    const rs = all[i];
    if (i === 0 && toAdd !== 0) {
      const left = toAdd - added;
      sizes.set(rs.metadata.name!, Math.max(0, sizes.get(rs.metadata.name!)! + left));
    }
    await s.scaleReplicaSet(rs, sizes.get(rs.metadata.name!)!, op);
  }
}

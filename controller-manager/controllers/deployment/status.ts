// Deployment status: replica counts and the Available condition, plus, after a
// rollout step, the Progressing (and ReplicaFailure) conditions and a requeue
// for when the progress deadline passes; Paused/Resumed progress conditions.
import { keyOf, type Obj } from '../util/base';
import { allAndSyncRevision } from './revisions';
import type { DeploymentSync } from './sync';
import * as u from './util';
import { jsonClone } from '../../../shared/api/json-value';

function calculateStatus(s: DeploymentSync, all: Obj[], newRS: Obj | undefined): any {
  const d = s.d;
  const available = u.availableReplicasSum(all);
  const total = u.specReplicasSum(all);
  const status: any = {
    observedGeneration: d.metadata.generation,
    replicas: u.statusReplicasSum(all),
    updatedReplicas: u.statusReplicasSum([newRS]),
    readyReplicas: u.readyReplicasSum(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
  };
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  status.conditions = jsonClone(d.status?.conditions ?? []);
  const now = s.c.nowRFC();
  if (available >= u.replicasOf(d) - u.maxUnavailable(d)) {
    u.setDeploymentCondition(
      status,
      u.deploymentCondition(
        'Available',
        'True',
        u.MIN_AVAILABLE,
        'Deployment has minimum availability.',
        now,
      ),
    );
  } else {
    u.setDeploymentCondition(
      status,
      u.deploymentCondition(
        'Available',
        'False',
        u.MIN_UNAVAILABLE,
        'Deployment does not have minimum availability.',
        now,
      ),
    );
  }
  if (!status.conditions.length) delete status.conditions;
  return status;
}

/** syncDeploymentStatus: status without the progress condition logic. */
export async function syncDeploymentStatus(
  s: DeploymentSync,
  all: Obj[],
  newRS: Obj | undefined,
): Promise<void> {
  await s.writeStatus(calculateStatus(s, all, newRS));
}

export async function syncStatusOnly(s: DeploymentSync): Promise<void> {
  const { newRS, olds } = await allAndSyncRevision(s, false);
  await syncDeploymentStatus(s, [...olds, ...(newRS ? [newRS] : [])], newRS);
}

/** syncRolloutStatus: status plus Progressing (and ReplicaFailure) conditions. */
export async function syncRolloutStatus(
  s: DeploymentSync,
  all: Obj[],
  newRS: Obj | undefined,
): Promise<void> {
  const d = s.d;
  const status = calculateStatus(s, all, newRS);
  const now = s.c.now();
  const nowS = s.c.nowRFC();
  if (!u.hasProgressDeadline(d)) u.removeDeploymentCondition(status, 'Progressing');
  const cur = u.getDeploymentCondition(status, 'Progressing');
  const isComplete = status.replicas === status.updatedReplicas && cur?.reason === u.NEW_RS_AVAILABLE;
  if (u.hasProgressDeadline(d) && !isComplete) {
    const rsName = newRS?.metadata.name;
    if (u.deploymentComplete(d, status)) {
      const msg = rsName
        ? `ReplicaSet "${rsName}" has successfully progressed.`
        : 'Deployment has successfully progressed.';
      u.setDeploymentCondition(
        status,
        u.deploymentCondition('Progressing', 'True', u.NEW_RS_AVAILABLE, msg, nowS),
      );
    } else if (u.deploymentProgressing(d, status)) {
      const msg = rsName ? `ReplicaSet "${rsName}" is progressing.` : 'Deployment is actively progressing.';
      const cond = u.deploymentCondition('Progressing', 'True', u.RS_UPDATED, msg, nowS);
      if (cur) {
        if (cur.status === 'True') cond.lastTransitionTime = cur.lastTransitionTime;
        u.removeDeploymentCondition(status, 'Progressing');
      }
      u.setDeploymentCondition(status, cond);
    } else if (u.deploymentTimedOut(d, status, now)) {
      const msg = rsName
        ? `ReplicaSet "${rsName}" has timed out progressing.`
        : `Deployment "${d.metadata.name}" has timed out progressing.`;
      u.setDeploymentCondition(status, u.deploymentCondition('Progressing', 'False', u.TIMED_OUT, msg, nowS));
    }
  }
  const failure = replicaFailure(all, newRS);
  if (failure) u.setDeploymentCondition(status, failure);
  else u.removeDeploymentCondition(status, 'ReplicaFailure');
  if (status.conditions && !status.conditions.length) delete status.conditions;

  await s.writeStatus(status);
  requeueStuck(s, status);
}

/** getReplicaFailures: the new set's ReplicaFailure condition first, else any old set's. */
function replicaFailure(all: Obj[], newRS: Obj | undefined): any {
  const from = (rs: Obj | undefined) =>
    (rs?.status?.conditions ?? []).find((c: any) => c.type === 'ReplicaFailure' && c.status === 'True');
  const c =
    from(newRS) ??
    all
      .filter((rs) => rs !== newRS)
      .map(from)
      .find((x) => x !== undefined);
  if (!c) return undefined;
  return {
    type: 'ReplicaFailure',
    status: c.status,
    lastUpdateTime: c.lastTransitionTime,
    lastTransitionTime: c.lastTransitionTime,
    reason: c.reason,
    message: c.message,
  };
}

/** requeueStuckDeployment: wake up when the progress deadline passes. */
function requeueStuck(s: DeploymentSync, status: any): void {
  const d = s.d;
  const cur = u.getDeploymentCondition(status, 'Progressing');
  if (!u.hasProgressDeadline(d) || !cur) return;
  if (u.deploymentComplete(d, status) || cur.reason === u.TIMED_OUT) return;
  const last = Date.parse(cur.lastUpdateTime ?? '');
  if (Number.isNaN(last)) return;
  const after = last + d.spec.progressDeadlineSeconds * 1000 - s.c.now();
  s.c.enqueueAfter(keyOf(d), Math.max(after, 1000));
}

export async function checkPausedConditions(s: DeploymentSync): Promise<void> {
  const d = s.d;
  if (!u.hasProgressDeadline(d)) return;
  const cond = u.getDeploymentCondition(d.status, 'Progressing');
  if (cond?.reason === u.TIMED_OUT) return;
  const pausedExists = cond?.reason === u.PAUSED;
  const status = jsonClone(d.status ?? {});
  const now = s.c.nowRFC();
  if (d.spec?.paused && !pausedExists) {
    u.setDeploymentCondition(
      status,
      u.deploymentCondition('Progressing', 'Unknown', u.PAUSED, 'Deployment is paused', now),
    );
  } else if (!d.spec?.paused && pausedExists) {
    u.setDeploymentCondition(
      status,
      u.deploymentCondition('Progressing', 'Unknown', u.RESUMED, 'Deployment is resumed', now),
    );
  } else return;
  await s.writeStatus(status);
}

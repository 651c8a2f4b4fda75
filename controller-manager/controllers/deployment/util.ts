// pkg/controller/deployment/util: revisions and their annotations, the new and
// old ReplicaSets of a Deployment, surge/unavailability fenceposts, replica
// counts and the conditions `kubectl rollout status` reads.
import { parseTime, withoutNullMembers, type Obj } from '../util/base';
import { jsonEqual } from '../../../shared/api/json-value';
import { scaledValue } from '../util/intstr';
import { goParseInt64 } from '../../../shared/codec/go-strconv';
import type { Condition } from '../util/conditions';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const ROLLBACK_TO_ANNOTATION = 'deprecated.deployment.rollback.to';
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const POD_TEMPLATE_HASH = 'pod-template-hash';
/** How long revision-history may grow. */
export const MAX_REV_HISTORY_LENGTH = 2000;
const MAX_INT32 = 2147483647;

// Condition reasons.
export const FAILED_RS_CREATE = 'ReplicaSetCreateError';
export const NEW_RS_CREATED = 'NewReplicaSetCreated';
export const FOUND_NEW_RS = 'FoundNewReplicaSet';
export const RS_UPDATED = 'ReplicaSetUpdated';
export const NEW_RS_AVAILABLE = 'NewReplicaSetAvailable';
export const TIMED_OUT = 'ProgressDeadlineExceeded';
export const PAUSED = 'DeploymentPaused';
export const RESUMED = 'DeploymentResumed';
export const MIN_AVAILABLE = 'MinimumReplicasAvailable';
export const MIN_UNAVAILABLE = 'MinimumReplicasUnavailable';

const SKIPPED_ANNOTATIONS = new Set([
  LAST_APPLIED_ANNOTATION,
  REVISION_ANNOTATION,
  REVISION_HISTORY_ANNOTATION,
  DESIRED_REPLICAS_ANNOTATION,
  MAX_REPLICAS_ANNOTATION,
  ROLLBACK_TO_ANNOTATION,
]);

export const replicasOf = (o: Obj | undefined): number => (o ? (o.spec?.replicas ?? 1) : 0);

/**
 * deploymentutil.Revision: the revision annotation as the int64 it is (a bigint: revisions
 * past 2^53 must count on exactly); 0 without one, undefined when it is not an int64.
 */
export function revisionOf(rs: Obj | undefined): bigint | undefined {
  const v: string | undefined = rs?.metadata.annotations?.[REVISION_ANNOTATION];
  if (v === undefined) return 0n;
  try {
    return goParseInt64(v);
  } catch {
    return undefined;
  }
}

/** MaxRevision: sets whose revision does not parse are skipped. */
export function maxRevision(sets: Obj[]): bigint {
  let max = 0n;
  for (const rs of sets) {
    const v = revisionOf(rs);
    if (v !== undefined && v > max) max = v;
  }
  return max;
}

export function byCreation(a: Obj, b: Obj): number {
  const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

/** ReplicaSetsByRevision: older revisions first; by creation when equal or either does not parse. */
export function byRevision(a: Obj, b: Obj): number {
  const ra = revisionOf(a);
  const rb = revisionOf(b);
  if (ra === undefined || rb === undefined || ra === rb) return byCreation(a, b);
  return ra < rb ? -1 : 1;
}

/** Larger first; among equal sizes, newer first (ReplicaSetsBySizeNewer). */
export function bySizeNewer(a: Obj, b: Obj): number {
  const d = replicasOf(b) - replicasOf(a);
  return d !== 0 ? d : byCreation(b, a);
}

/** Larger first; among equal sizes, older first (ReplicaSetsBySizeOlder). */
export function bySizeOlder(a: Obj, b: Obj): number {
  const d = replicasOf(b) - replicasOf(a);
  return d !== 0 ? d : byCreation(a, b);
}

function withoutHash(template: any): any {
  // kubectl rollout undo sends templates with "creationTimestamp": null; Go sees no difference.
  const t = withoutNullMembers(template ?? {});
  if (t.metadata?.labels) {
    delete t.metadata.labels[POD_TEMPLATE_HASH];
    if (!Object.keys(t.metadata.labels).length) delete t.metadata.labels;
  }
  if (t.metadata && !Object.keys(t.metadata).length) delete t.metadata;
  return t;
}

/** EqualIgnoreHash: the templates equal apart from the pod-template-hash label. */
export function equalIgnoreHash(a: any, b: any): boolean {
  return jsonEqual(withoutHash(a), withoutHash(b));
}

/** FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's. */
export function findNewReplicaSet(d: Obj, sets: Obj[]): Obj | undefined {
  return [...sets].sort(byCreation).find((rs) => equalIgnoreHash(rs.spec?.template, d.spec?.template));
}

export const isRollingUpdate = (d: Obj) => (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

/** ResolveFenceposts: maxSurge rounded up, maxUnavailable down; both 0 means 1 unavailable. */
export function resolveFenceposts(d: Obj): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate ?? {};
  const desired = replicasOf(d);
  const surge = scaledValue(ru.maxSurge ?? '25%', desired, true);
  let unavailable = scaledValue(ru.maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxSurge(d: Obj): number {
  if (!isRollingUpdate(d)) return 0;
  return resolveFenceposts(d).surge;
}

export function maxUnavailable(d: Obj): number {
  const replicas = replicasOf(d);
  if (!isRollingUpdate(d) || replicas === 0) return 0;
  const { unavailable } = resolveFenceposts(d);
  return Math.min(unavailable, replicas);
}

export const specReplicasSum = (sets: (Obj | undefined)[]) =>
  sets.reduce((n, rs) => n + (rs ? replicasOf(rs) : 0), 0);
export const statusReplicasSum = (sets: (Obj | undefined)[]) =>
  sets.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
export const readyReplicasSum = (sets: (Obj | undefined)[]) =>
  sets.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
export const availableReplicasSum = (sets: (Obj | undefined)[]) =>
  sets.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);

export const activeSets = (sets: (Obj | undefined)[]): Obj[] =>
  sets.filter((rs): rs is Obj => !!rs && replicasOf(rs) > 0);

/** NewRSNewReplicas: how big the new ReplicaSet may be now. */
export function newRSNewReplicas(d: Obj, allSets: (Obj | undefined)[], newRS: Obj): number {
  if (!isRollingUpdate(d)) return replicasOf(d);
  const current = specReplicasSum(allSets);
  const maxTotal = replicasOf(d) + maxSurge(d);
  if (current >= maxTotal) return replicasOf(newRS);
  const up = Math.min(maxTotal - current, replicasOf(d) - replicasOf(newRS));
  return replicasOf(newRS) + up;
}

export const hasProgressDeadline = (d: Obj) =>
  d.spec?.progressDeadlineSeconds !== undefined &&
  d.spec?.progressDeadlineSeconds !== null &&
  d.spec.progressDeadlineSeconds !== MAX_INT32;

export const hasRevisionHistoryLimit = (d: Obj) =>
  d.spec?.revisionHistoryLimit !== undefined &&
  d.spec?.revisionHistoryLimit !== null &&
  d.spec.revisionHistoryLimit !== MAX_INT32;

/** SetReplicasAnnotations: desired- and max-replicas; true when changed. */
export function setReplicasAnnotations(rs: Obj, desired: number, max: number): boolean {
  const a = (rs.metadata.annotations ??= {});
  const d = String(desired);
  const m = String(max);
  if (a[DESIRED_REPLICAS_ANNOTATION] === d && a[MAX_REPLICAS_ANNOTATION] === m) return false;
  a[DESIRED_REPLICAS_ANNOTATION] = d;
  a[MAX_REPLICAS_ANNOTATION] = m;
  return true;
}

export function replicasAnnotationsNeedUpdate(rs: Obj, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {};
  return a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** SetNewReplicaSetAnnotations: copies the Deployment's annotations and sets the revision (and its history). */
export function setNewReplicaSetAnnotations(d: Obj, rs: Obj, newRevision: bigint, exists: boolean): boolean {
  let changed = false;
  const a = (rs.metadata.annotations ??= {});
  for (const [k, v] of Object.entries<string>(d.metadata.annotations ?? {})) {
    if (SKIPPED_ANNOTATIONS.has(k)) continue;
    if (a[k] !== v) {
      a[k] = v;
      changed = true;
    }
  }
  const oldRevision: string = a[REVISION_ANNOTATION] ?? '';
  // A revision that is not an int64 is left alone, and so is the rest (as Kubernetes does).
  const oldInt = oldRevision ? revisionOf(rs) : 0n;
  if (oldInt === undefined) return false;
  if (oldInt < newRevision) {
    a[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    // A ReplicaSet that had a revision and gets a newer one is rolled back to: keep the old one.
    if (oldRevision) {
      const history = a[REVISION_HISTORY_ANNOTATION] ?? '';
      let old = history ? history.split(',') : [];
      if (!old.length) a[REVISION_HISTORY_ANNOTATION] = oldRevision;
      else {
        let total = history.length + oldRevision.length + 1;
        let start = 0;
        while (total > MAX_REV_HISTORY_LENGTH && start < old.length) {
          total -= old[start].length + 1;
          start++;
        }
        if (total <= MAX_REV_HISTORY_LENGTH) {
          old = [...old.slice(start), oldRevision];
          a[REVISION_HISTORY_ANNOTATION] = old.join(',');
        }
      }
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** The condition of a Deployment, as NewDeploymentCondition makes it. */
export function deploymentCondition(
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  message: string,
  now: string,
): Condition {
  return { type, status, lastUpdateTime: now, lastTransitionTime: now, reason, message };
}

/** SetDeploymentCondition: no change when status and reason are the same. */
export function setDeploymentCondition(status: any, cond: Condition): void {
  const conditions: Condition[] = status.conditions ?? [];
  const cur = conditions.find((c) => c.type === cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason) return;
  if (cur && cur.status === cond.status) cond.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...conditions.filter((c) => c.type !== cond.type), cond];
}

export function removeDeploymentCondition(status: any, type: string): void {
  if (!status.conditions) return;
  status.conditions = status.conditions.filter((c: Condition) => c.type !== type);
}

export function getDeploymentCondition(status: any, type: string): Condition | undefined {
  return (status?.conditions ?? []).find((c: Condition) => c.type === type);
}

/** DeploymentComplete. */
export function deploymentComplete(d: Obj, status: any): boolean {
  const r = replicasOf(d);
  return (
    (status.updatedReplicas ?? 0) === r &&
    (status.replicas ?? 0) === r &&
    (status.availableReplicas ?? 0) === r &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}

/** DeploymentProgressing: the new status moved the rollout forward. */
export function deploymentProgressing(d: Obj, status: any): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (status.replicas ?? 0) - (status.updatedReplicas ?? 0);
  return (
    (status.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (status.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (status.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** DeploymentTimedOut. */
export function deploymentTimedOut(d: Obj, status: any, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const cond = getDeploymentCondition(status, 'Progressing');
  if (!cond) return false;
  if (cond.reason === NEW_RS_AVAILABLE) return false;
  if (cond.reason === TIMED_OUT) return true;
  const from = parseTime(cond.lastUpdateTime);
  if (from === undefined) return false;
  return from + d.spec.progressDeadlineSeconds * 1000 < now;
}

/** FindActiveOrLatest: the one active ReplicaSet, or the newest when none is active. */
export function findActiveOrLatest(newRS: Obj | undefined, oldSets: Obj[]): Obj | undefined {
  if (!newRS && !oldSets.length) return undefined;
  const olds = [...oldSets].sort(byCreation).reverse();
  const active = activeSets([...olds, newRS]);
  if (active.length === 0) return newRS ?? olds[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** IsSaturated: the new ReplicaSet runs all the Deployment's replicas, available. */
export function isSaturated(d: Obj, rs: Obj | undefined): boolean {
  if (!rs) return false;
  const desired = rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION];
  if (!desired || !/^\d+$/.test(desired)) return false;
  const r = replicasOf(d);
  return replicasOf(rs) === r && Number(desired) === r && (rs.status?.availableReplicas ?? 0) === r;
}

/** getReplicaSetFraction: this set's share of a proportional scale. */
function replicaSetFraction(rs: Obj, d: Obj): number {
  if (replicasOf(d) === 0) return -replicasOf(rs);
  const deploymentReplicas = replicasOf(d) + maxSurge(d);
  const annotated = rs.metadata.annotations?.[MAX_REPLICAS_ANNOTATION];
  let annotatedReplicas =
    annotated && /^\d+$/.test(annotated) ? Number(annotated) : (d.status?.replicas ?? 0);
  if (annotatedReplicas === 0) annotatedReplicas = 1;
  const size = (replicasOf(rs) * deploymentReplicas) / annotatedReplicas;
  // integer.RoundToInt32: round half away from zero
  const rounded = size < 0 ? -Math.round(-size) : Math.round(size);
  return rounded - replicasOf(rs);
}

/** GetProportion. */
export function proportion(rs: Obj, d: Obj, toAdd: number, added: number): number {
  if (replicasOf(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  const fraction = replicaSetFraction(rs, d);
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

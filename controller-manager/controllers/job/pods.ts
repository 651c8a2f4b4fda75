// Pod management of one Job sync (manageJob): pods created and deleted towards
// the wanted number of active ones, at most MAX_PODS_PER_SYNC at a time and
// after the backoff; Indexed Jobs get one pod per missing completion index.
import { isNotFound } from '../../../shared/client';
import { errMessage, keyOf, slowStartBatch, type Obj } from '../util/base';
import { controllerRef } from '../util/controller-ref';
import { podFromTemplate, podsToDelete } from '../util/pod';
import { COMPLETION_INDEX, completionIndex } from './indexes';
import { JOB_TRACKING_FINALIZER, hasFinalizer, isIndexed, isSuspended } from './predicates';
import type { JobSync } from './sync';
import { jsonClone } from '../../../shared/api/json-value';

const MAX_PODS_PER_SYNC = 500;

/** deleteJobPods: drops the finalizer first, so pods the controller removes are not counted as failed. */
export async function deletePods(s: JobSync, pods: Obj[]): Promise<number> {
  if (!pods.length) return 0;
  const { c, job, key } = s;
  c.expectations.expectDeletionsOf(key, pods.map(keyOf));
  let deleted = 0;
  await Promise.all(
    pods.map(async (p) => {
      try {
        if (hasFinalizer(p)) {
          const done = await c.removeFinalizers(key, [p]);
          if (!done.has(p.metadata.uid!))
            throw new Error(`removing the tracking finalizer of ${p.metadata.name} failed`);
        }
        await c.api.pods.namespace(p.metadata.namespace!).delete(p.metadata.name!);
        deleted++;
        c.api.recorder.event(job, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${p.metadata.name}`);
      } catch (err) {
        c.expectations.deletionObservedOf(key, keyOf(p));
        if (isNotFound(err)) {
          deleted++;
          return;
        }
        c.api.recorder.event(job, 'Warning', 'FailedDelete', 'Delete', `Error deleting: ${errMessage(err)}`);
      }
    }),
  );
  return deleted;
}

/** manageJob: creates or deletes pods towards the wanted number of active ones; returns active. */
export async function manageJob(
  s: JobSync,
  activePods: Obj[],
  succeeded: number,
  succeededIndexes?: Set<number>,
): Promise<number> {
  const { c, job, key } = s;
  let active = activePods.length;
  if (isSuspended(job)) return active - (await deletePods(s, activePods));
  const parallelism: number = job.spec?.parallelism ?? 1;
  const completions: number | undefined = job.spec?.completions ?? undefined;
  let want: number;
  if (completions === undefined) want = succeeded > 0 ? active : parallelism;
  else want = Math.max(0, Math.min(completions - succeeded, parallelism));

  // Pods to remove: excess, and for Indexed Jobs repeated, finished or invalid indexes.
  const rm: Obj[] = [];
  let left = activePods;
  if (isIndexed(job)) {
    const seen = new Set<number>();
    left = [];
    for (const p of activePods) {
      const idx = completionIndex(p);
      if (idx < 0 || idx >= (completions ?? 0) || seen.has(idx) || succeededIndexes?.has(idx)) rm.push(p);
      else {
        seen.add(idx);
        left.push(p);
      }
    }
  }
  const rmAtLeast = Math.max(0, active - want);
  if (rm.length < rmAtLeast) rm.push(...podsToDelete(left, [], rmAtLeast - rm.length, s.now));
  if (rm.length) {
    return active - (await deletePods(s, rm.slice(0, MAX_PODS_PER_SYNC)));
  }
  let diff = want - active;
  if (diff <= 0) return active;
  const remaining = c.backoffRemaining(c.backoffRecord(key));
  if (remaining > 0) {
    c.enqueueAfter(key, remaining);
    return active;
  }
  diff = Math.min(diff, MAX_PODS_PER_SYNC);
  let indexes: number[] = [];
  if (isIndexed(job)) {
    const busy = new Set(left.map(completionIndex));
    for (let i = 0; i < (completions ?? 0) && indexes.length < diff; i++)
      if (!busy.has(i) && !succeededIndexes?.has(i)) indexes.push(i);
    diff = indexes.length;
    if (!diff) return active;
  }
  c.expectations.expectCreations(key, diff);
  const ref = controllerRef(job, 'batch/v1', 'Job');
  indexes = [...indexes];
  const { successes, error } = await slowStartBatch(diff, 1, async () => {
    const pod = podFromTemplate(job.spec.template, job.metadata.name!, ref);
    pod.metadata.finalizers = [...new Set([...(pod.metadata.finalizers ?? []), JOB_TRACKING_FINALIZER])];
    if (isIndexed(job)) {
      const idx = indexes.shift()!;
      pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [COMPLETION_INDEX]: String(idx) };
      pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [COMPLETION_INDEX]: String(idx) };
      pod.metadata.generateName = `${job.metadata.name}-${idx}-`;
      pod.spec.hostname = `${job.metadata.name}-${idx}`;
      addCompletionIndexEnv(pod.spec);
    }
    await c.api.podControl.createPod(job, pod);
  });
  for (let i = successes; i < diff; i++) c.expectations.creationObserved(key);
  active += successes;
  if (error !== undefined) throw error;
  return active;
}

/** addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the pod's annotation. */
function addCompletionIndexEnv(spec: any): void {
  const env = {
    name: 'JOB_COMPLETION_INDEX',
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } },
  };
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if ((c.env ?? []).some((e: any) => e.name === env.name)) continue;
    c.env = [...(c.env ?? []), jsonClone(env)];
  }
}

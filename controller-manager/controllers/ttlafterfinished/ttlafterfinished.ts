// The ttl-after-finished controller: a finished Job (condition Complete or
// Failed True) with spec.ttlSecondsAfterFinished is deleted, with its pods
// (foreground propagation), that many seconds after it finished. The Job is
// read again from the apiserver before deleting, and the delete carries its
// uid and resourceVersion as preconditions, so a Job whose TTL was just
// changed is not deleted by mistake.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import { runWorkers } from '../../../shared/informers';
import { cachesSynced, go, queueFor, type Condition } from '../../app/controller-util';
import { parseTime } from '../util/base';

function needsCleanup(job: KubeObject): boolean {
  return (
    typeof job.spec?.ttlSecondsAfterFinished === 'number' &&
    isFinished(job) &&
    !job.metadata.deletionTimestamp
  );
}

function isFinished(job: KubeObject): boolean {
  return ((job.status?.conditions ?? []) as Condition[]).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

/** When the job finished and when its TTL runs out (ms). */
export function finishAndExpireTime(job: KubeObject): [number, number] {
  const c = ((job.status?.conditions ?? []) as Condition[]).find(
    (x) => (x.type === 'Complete' || x.type === 'Failed') && x.status === 'True',
  );
  const finishAt = parseTime(c?.lastTransitionTime);
  if (finishAt === undefined)
    throw new Error(
      `unable to find the time when the Job ${job.metadata.namespace}/${job.metadata.name} finished`,
    );
  return [finishAt, finishAt + job.spec.ttlSecondsAfterFinished * 1000];
}

export function startTTLAfterFinishedController(ctx: ControllerContext): void {
  const jobs = ctx.informers.forResource('jobs.batch');
  const queue = queueFor<string>(ctx, 'ttl_jobs_to_delete');
  const enqueue = (job: KubeObject) => {
    if (needsCleanup(job)) queue.add(`${job.metadata.namespace}/${job.metadata.name}`);
  };
  jobs.addEventHandler({ onAdd: enqueue, onUpdate: (_old, job) => enqueue(job) });
  const client = ctx.client.resource('jobs.batch');

  /** Remaining ms before the job expires, or undefined when it has (or does not apply). */
  const timeLeft = (job: KubeObject): number | undefined => {
    const [, expireAt] = finishAndExpireTime(job);
    const left = expireAt - ctx.now();
    return left > 0 ? left : undefined;
  };

  const sync = async (key: string): Promise<void> => {
    const [ns, name] = key.split('/');
    const cached = jobs.lister().get(key);
    if (!cached || !needsCleanup(cached)) return;
    const left = timeLeft(cached);
    if (left !== undefined) {
      queue.addAfter(key, left);
      return;
    }
    // The TTL may have been changed: check the latest Job before deleting it.
    let fresh: KubeObject;
    try {
      fresh = await client.namespace(ns).get(name, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!needsCleanup(fresh)) return;
    const freshLeft = timeLeft(fresh);
    if (freshLeft !== undefined) {
      queue.addAfter(key, freshLeft);
      return;
    }
    ctx.log.v(4)?.info('Cleaning up Job', { job: key });
    try {
      await client.namespace(ns).delete(name, {
        propagationPolicy: 'Foreground',
        preconditions: { uid: fresh.metadata.uid, resourceVersion: fresh.metadata.resourceVersion },
        signal: ctx.signal,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  go(ctx, 'ttl-after-finished controller', async () => {
    if (!(await cachesSynced(ctx, 'TTL after finished', jobs))) return;
    await runWorkers(queue, sync, {
      workers: ctx.options.concurrentTtlAfterFinishedSyncs ?? 5,
      signal: ctx.signal,
    });
  });
}

export const ttlAfterFinishedController: ControllerDescriptor = {
  name: 'ttl-after-finished',
  aliases: ['ttl-after-finished-controller'],
  start: startTTLAfterFinishedController,
};

// The namespace controller: terminating namespaces are emptied by the
// NamespacedResourcesDeleter and finalized. Namespace events are delayed by
// 5 s (so HA apiservers see the deletion and late creations in the
// namespace land first); a namespace with content left is looked at again
// after half the estimate; failures back off (5 ms doubling to 60 s).
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { TokenBucket, type KubeObject } from '../../../shared/client';
import {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  runWorkers,
} from '../../../shared/informers';
import { cachesSynced, go, queueFor } from '../../app/controller-util';
import { NamespacedResourcesDeleter, ResourcesRemainingError } from './deleter';

/** kube's namespaceDeletionGracePeriod. */
export const NAMESPACE_DELETION_GRACE_MS = 5_000;

export function startNamespaceController(
  ctx: ControllerContext,
  // Not a kube flag: the controller manager inside an apiserver process sets it (embedded.ts).
  graceMs: number = ctx.options.namespaceDeletionGraceMs ?? NAMESPACE_DELETION_GRACE_MS,
): void {
  const nsInformer = ctx.informers.forResource('namespaces');
  const queue = queueFor<string>(
    ctx,
    'namespace',
    new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter<string>(5, 60_000),
      new BucketRateLimiter<string>(new TokenBucket(10, 100)),
    ),
  );
  const enqueue = (ns: KubeObject) => {
    if (!ns.metadata?.deletionTimestamp) return;
    queue.addAfter(ns.metadata.name!, graceMs);
  };
  nsInformer.addEventHandler(
    { onAdd: enqueue, onUpdate: (_old, ns) => enqueue(ns) },
    ctx.options.namespaceSyncPeriod ?? 5 * 60_000,
  );
  const deleter = new NamespacedResourcesDeleter(ctx.client, ctx.log, ctx.now, ctx.signal);

  const sync = async (name: string): Promise<void> => {
    const start = Date.now();
    try {
      if (!nsInformer.lister().get(name)) return;
      await deleter.delete(name);
    } catch (err) {
      if (err instanceof ResourcesRemainingError) {
        const t = Math.floor(err.estimate / 2) + 1;
        ctx.log.v(4)?.info('Content remaining in namespace', { namespace: name, waitSeconds: t });
        queue.addAfter(name, t * 1000);
        return;
      }
      throw err;
    } finally {
      ctx.log.v(4)?.info('Finished syncing namespace', { namespace: name, durationMs: Date.now() - start });
    }
  };

  go(ctx, 'namespace controller', async () => {
    if (!(await cachesSynced(ctx, 'namespace', nsInformer))) return;
    await runWorkers(queue, sync, {
      workers: ctx.options.concurrentNamespaceSyncs ?? 10,
      signal: ctx.signal,
      onError: (name, err) =>
        ctx.log.warn('deletion of namespace failed', { namespace: name, err: String(err) }),
    });
  });
}

export const namespaceController: ControllerDescriptor = {
  name: 'namespace',
  aliases: ['namespace-controller'],
  start: (ctx) => startNamespaceController(ctx),
};

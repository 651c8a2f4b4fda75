// shared/informers: client-go's tools/cache and util/workqueue for tkube's
// controllers (and anyone else's). The usual shape of a controller:
//
//   const client = Client.create(loadKubeconfig(path), { qps: 20, burst: 30 });
//   const factory = new SharedInformerFactory(client, { resyncPeriodMs: 0 });
//   const pods = factory.forResource('pods');
//   const queue = new RateLimitingQueue<string>({ name: 'my-controller' });
//   pods.addEventHandler({
//     onAdd: (o) => queue.add(metaNamespaceKey(o)),
//     onUpdate: (_old, o) => queue.add(metaNamespaceKey(o)),
//     onDelete: (o) => queue.add(metaNamespaceKey(o)),   // o may be a DeletedFinalStateUnknown
//   });
//   factory.start(signal);
//   await factory.waitForCacheSync(signal);
//   await runWorkers(queue, async (key) => {
//     const { namespace, name } = splitKey(key);
//     const pod = pods.lister().namespace(namespace).get(name);   // cached; do not mutate
//     if (!pod) return;                                          // deleted
//     await client.resource('pods').namespace(namespace).patch(name, {...}, 'merge');
//   }, { workers: 5, signal });
export {
  Reflector,
  type ListerWatcher,
  type ReflectorOptions,
  type ReflectorStore,
  type WatchInterface,
} from './reflector';
export { SharedIndexInformer, type SharedInformerOptions } from './shared-informer';
export {
  SharedInformerFactory,
  listWatchFor,
  type FactoryOptions,
  type InformerRequest,
  type ListWatchFilter,
} from './factory';
export { Lister, NamespaceLister, type SelectorArg } from './lister';
export {
  DeletedFinalStateUnknown,
  Indexer,
  NAMESPACE_INDEX,
  metaNamespaceIndex,
  metaNamespaceKey,
  unwrapTombstone,
  type IndexFunc,
  type Indexers,
  type KeyFunc,
} from './store';
export type { EventHandlerRegistration, ResourceEventHandler } from './processor';
export { filteringHandler } from './handlers';
export { ExponentialBackoff, jitter, type BackoffOptions } from './backoff';
export {
  WorkQueue,
  DelayingQueue,
  RateLimitingQueue,
  runWorkers,
  yielder,
  forEachConcurrently,
  type GetResult,
  type QueueOptions,
  type WorkerOptions,
} from './workqueue';
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type ItemRateLimiter,
} from './rate-limiters';
export { waitForCacheSync, waitForCacheSyncWith, waitForNamedCacheSync, type Synced } from './wait';

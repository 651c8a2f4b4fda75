// Feeds the record index from shared informers, the path every controller
// takes to the apiserver: Services, EndpointSlices and Namespaces, and pods
// only when pod records are verified against them.
import type { KubeObject } from '../shared/client';
import { DeletedFinalStateUnknown, type SharedInformerFactory } from '../shared/informers';
import type { RecordIndex } from './records';

const finalState = <T>(o: T | DeletedFinalStateUnknown<T>): T =>
  o instanceof DeletedFinalStateUnknown ? o.obj : o;

/** Registers the index's handlers; the caller starts the factory and waits for its caches. */
export function watchCluster(
  factory: SharedInformerFactory,
  index: RecordIndex,
  opts: { pods: boolean },
): void {
  factory.forResource<KubeObject>('services').addEventHandler({
    onAdd: (o) => index.upsertService(o),
    onUpdate: (_old, o) => index.upsertService(o),
    onDelete: (o) => index.deleteService(finalState(o)),
  });
  factory.forResource<KubeObject>('endpointslices.discovery.k8s.io').addEventHandler({
    onAdd: (o) => index.upsertSlice(o),
    onUpdate: (_old, o) => index.upsertSlice(o),
    onDelete: (o) => index.deleteSlice(finalState(o)),
  });
  factory.forResource<KubeObject>('namespaces').addEventHandler({
    onAdd: (o) => index.addNamespace(o),
    onDelete: (o) => index.deleteNamespace(finalState(o)),
  });
  if (opts.pods) {
    factory.forResource<KubeObject>('pods').addEventHandler({
      onAdd: (o) => index.changePod(undefined, o),
      onUpdate: (old, o) => index.changePod(old, o),
      onDelete: (o) => index.changePod(finalState(o), undefined),
    });
  }
}

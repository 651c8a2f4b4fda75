// Which behaviour each resource has beyond the generic store ("group/resource").
import type { Registry, ResourceBehaviour } from '../registry';
import { namespaceBehaviour } from './namespace';
import { nodeBehaviour } from './node';
import { persistentVolumeBehaviour } from './persistentvolume';
import { eventBehaviour, eventsV1Behaviour } from './event';
import { bind, podBehaviour } from './pod';
import { scaleSubresource } from './scale';
import { generateJobSelector } from '../../../shared/api/validation/batch';
import { crdBehaviour } from '../crd/strategy';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa-conversion';
import { kubeletConnectBehaviours, type KubeletConnection } from './pod-log';
import { podServiceProxyBehaviours } from './pod-service-proxy';

export interface BehaviourOptions {
  eventTTLSeconds: number;
  /** Late-bound: strategies that reach other resources (eviction → PDBs). */
  registry: () => Registry;
  /** Services: ClusterIP and NodePort allocation (set by the server). */
  services?: ResourceBehaviour;
  /** Behaviours from other parts of the server (security's review resources ...), by "group/resource". */
  extra?: Record<string, ResourceBehaviour>;
  /** How to reach node agents: enables pods/log and nodes/proxy (pod-log.ts). */
  kubelet?: KubeletConnection;
}

// How long a pods/ or services/ proxy waits to connect and for an answer's headers (Kubernetes'
// proxy dialer: 30 s).
const PROXY_TIMEOUT_MS = 30_000;

const RECONCILED = { strategy: { allowCreateOnUpdate: true } };

export function behaviours(o: BehaviourOptions): (group: string, resource: string) => ResourceBehaviour {
  const table: Record<string, ResourceBehaviour> = {
    '/namespaces': namespaceBehaviour,
    '/nodes': nodeBehaviour,
    '/persistentvolumes': persistentVolumeBehaviour,
    '/pods': podBehaviour(o.registry),
    '/events': eventBehaviour(o.eventTTLSeconds),
    // The legacy POST .../bindings: the same as pods/<name>/binding.
    '/bindings': {
      virtual: {
        create: async (ctx, binding) => {
          const pods = o.registry().preferred('', 'pods')!;
          return (await bind(ctx, binding.metadata?.name ?? '', binding, pods)).obj;
        },
      },
    },
    'events.k8s.io/events': eventsV1Behaviour(o.eventTTLSeconds),
    '/endpoints': RECONCILED,
    '/limitranges': RECONCILED,
    'coordination.k8s.io/leases': RECONCILED,
    'discovery.k8s.io/endpointslices': RECONCILED,
    'rbac.authorization.k8s.io/roles': RECONCILED,
    'rbac.authorization.k8s.io/rolebindings': RECONCILED,
    'rbac.authorization.k8s.io/clusterroles': RECONCILED,
    'rbac.authorization.k8s.io/clusterrolebindings': RECONCILED,
    '/replicationcontrollers': { subresources: { scale: { custom: scaleSubresource() } } },
    'apps/deployments': { subresources: { scale: { custom: scaleSubresource() } } },
    'apps/replicasets': { subresources: { scale: { custom: scaleSubresource() } } },
    'apps/statefulsets': { subresources: { scale: { custom: scaleSubresource() } } },
    // Stored as autoscaling/v2; autoscaling/v1 is a lossless view.
    'autoscaling/horizontalpodautoscalers': {
      conversions: { 'autoscaling/v1': { toStorage: hpaV1ToV2, fromStorage: hpaV2ToV1 } },
    },
    // Jobs get a selector on their own uid unless the user asked to choose one.
    'batch/jobs': { strategy: { prepareForCreate: (job) => generateJobSelector(job, job.metadata.uid) } },
    'apiextensions.k8s.io/customresourcedefinitions': crdBehaviour,
  };
  if (o.services) table['/services'] = o.services;
  const extras = [
    kubeletConnectBehaviours(o.registry, o.kubelet),
    podServiceProxyBehaviours(o.registry, PROXY_TIMEOUT_MS),
    o.extra ?? {},
  ];
  for (const [k, b] of extras.flatMap((e) => Object.entries(e))) {
    const base = table[k] ?? {};
    table[k] = {
      ...base,
      ...b,
      strategy: { ...base.strategy, ...b.strategy },
      subresources: { ...base.subresources, ...b.subresources },
    };
  }
  return (group, resource) => table[`${group}/${resource}`] ?? {};
}

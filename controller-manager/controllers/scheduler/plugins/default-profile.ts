// The default profile's plugins in kube-scheduler's order (default_plugins.go),
// with their score weights on each plugin: filters run in this order and stop
// at a node's first failure.
import type { Plugin } from '../framework';
import { balancedAllocation } from './balanced-allocation';
import { imageLocality } from './image-locality';
import { interPodAffinity, type NamespaceLabels } from './inter-pod-affinity';
import { nodeAffinity } from './node-affinity';
import { nodeName } from './node-name';
import { nodePorts } from './node-ports';
import { nodeResourcesFit } from './node-resources-fit';
import { nodeUnschedulable } from './node-unschedulable';
import { podTopologySpread } from './pod-topology-spread';
import { taintToleration } from './taint-toleration';
import { volumeBinding, type VolumeInformers } from './volume-binding';

export function defaultPlugins(volumes: VolumeInformers, namespaceLabels: NamespaceLabels): Plugin[] {
  return [
    nodeUnschedulable,
    nodeName,
    taintToleration,
    nodeAffinity,
    nodePorts,
    nodeResourcesFit,
    volumeBinding(volumes),
    podTopologySpread,
    interPodAffinity(namespaceLabels),
    balancedAllocation,
    imageLocality,
  ];
}

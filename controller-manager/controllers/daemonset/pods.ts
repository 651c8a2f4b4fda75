// A DaemonSet's pods, node by node: a missing pod created (pinned to its
// node), failed, surplus and misplaced pods deleted, with expectations so a
// sync does not act again before the informer has seen its writes.
import type { EventRecorderLike } from '../../controller';
import { isNotFound } from '../../../shared/client';
import { keyOf, parseTime, slowStartBatch, type Obj } from '../util/base';
import { controllerRef } from '../util/controller-ref';
import type { UIDTrackingExpectations } from '../util/expectations';
import { CONTROLLER_REVISION_HASH } from '../util/history';
import type { PodControl } from '../util/pod';
import { nodeShouldRunDaemonPod, pinToNode, withDaemonTolerations } from './node-selection';
import {
  TEMPLATE_GENERATION_LABEL,
  isPodUpdated,
  maxSurgeAndUnavailable,
  templateGeneration,
} from './rollout';
import { jsonClone } from '../../../shared/api/json-value';

const BURST_REPLICAS = 250;

export const byCreation = (a: Obj, b: Obj) =>
  (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0) ||
  ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);

export class DaemonPods {
  constructor(
    private readonly expectations: UIDTrackingExpectations,
    private readonly podControl: PodControl,
    private readonly recorder: EventRecorderLike,
  ) {}

  async manage(ds: Obj, nodes: Obj[], byNode: Map<string, Obj[]>, hash: string): Promise<void> {
    const { surge } = maxSurgeAndUnavailable(ds, nodes);
    const needing: string[] = [];
    const toDelete: Obj[] = [];
    const nodeNames = new Set<string>();
    for (const node of nodes) {
      const name = node.metadata.name!;
      nodeNames.add(name);
      const { shouldRun, shouldContinueRunning } = nodeShouldRunDaemonPod(node, ds);
      const daemonPods = byNode.get(name) ?? [];
      const exists = daemonPods.length > 0;
      if (shouldRun && !exists) {
        needing.push(name);
      } else if (shouldContinueRunning && exists) {
        const running: Obj[] = [];
        for (const p of daemonPods) {
          if (p.metadata.deletionTimestamp) continue;
          if (p.status?.phase === 'Failed') {
            this.recorder.event(
              ds,
              'Warning',
              'FailedDaemonPod',
              'Sync',
              `Found failed daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${name}, will try to kill it`,
            );
            toDelete.push(p);
            continue;
          }
          running.push(p);
        }
        if (!running.length && shouldRun) needing.push(name);
        else if (running.length > 1) {
          running.sort(byCreation);
          if (surge === 0) toDelete.push(...running.slice(1));
          else {
            // While surging, one updated and one old pod may share a node: keep the oldest of each.
            let keptNew = false;
            let keptOld = false;
            for (const p of running) {
              const updated = isPodUpdated(p, hash, templateGeneration(ds));
              if (updated && !keptNew) keptNew = true;
              else if (!updated && !keptOld) keptOld = true;
              else toDelete.push(p);
            }
          }
        }
      } else if (!shouldContinueRunning && exists) {
        for (const p of daemonPods) if (!p.metadata.deletionTimestamp) toDelete.push(p);
      }
    }
    // Pods pinned to nodes that no longer exist.
    for (const [name, pods] of byNode)
      if (!nodeNames.has(name))
        for (const p of pods) if (!p.metadata.deletionTimestamp && !p.spec?.nodeName) toDelete.push(p);
    await this.syncNodes(ds, toDelete, needing, hash);
  }

  /** Deletes pods and creates pods for nodes, with expectations. */
  async syncNodes(ds: Obj, toDelete: Obj[], nodesNeeding: string[], hash: string): Promise<void> {
    const key = keyOf(ds);
    const create = nodesNeeding.slice(0, BURST_REPLICAS);
    const del = toDelete.slice(0, BURST_REPLICAS);
    if (!create.length && !del.length) return;
    this.expectations.expectDeletionsOf(key, del.map(keyOf), create.length);
    const errors: unknown[] = [];
    const template = jsonClone(ds.spec.template);
    template.metadata = { ...(template.metadata ?? {}) };
    template.metadata.labels = { ...(template.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH]: hash };
    const gen = templateGeneration(ds);
    if (gen) template.metadata.labels[TEMPLATE_GENERATION_LABEL] = gen;
    template.spec = withDaemonTolerations(template.spec);
    const ref = controllerRef(ds, 'apps/v1', 'DaemonSet');
    let next = 0;
    const { successes, error } = await slowStartBatch(create.length, 1, async () => {
      const nodeName = create[next++];
      const pod: Obj = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          generateName: `${ds.metadata.name}-`,
          labels: { ...template.metadata.labels },
          ...(template.metadata.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
          ownerReferences: [ref],
        },
        spec: { ...jsonClone(template.spec), affinity: pinToNode(template.spec.affinity, nodeName) },
      };
      await this.podControl.createPod(ds, pod);
    });
    for (let i = successes; i < create.length; i++) this.expectations.creationObserved(key);
    if (error !== undefined) errors.push(error);
    await Promise.all(
      del.map(async (p) => {
        try {
          await this.podControl.deletePod(ds, p);
        } catch (err) {
          this.expectations.deletionObservedOf(key, keyOf(p));
          if (!isNotFound(err)) errors.push(err);
        }
      }),
    );
    if (errors.length) throw errors[0];
  }
}

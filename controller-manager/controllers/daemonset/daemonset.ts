// The DaemonSet controller (pkg/controller/daemon): one pod per eligible node
// (template nodeName, nodeSelector, required node affinity, taints against the
// pod's tolerations plus the ones every daemon pod gets), each pinned to its
// node by a matchFields node affinity for the scheduler to bind; failed pods
// replaced; RollingUpdate by maxUnavailable or maxSurge over ControllerRevisions;
// status counts of scheduled, misscheduled, ready, updated and available pods.
//
// This file watches and syncs; beside it: node-selection.ts (which nodes run
// a daemon pod), pods.ts (creating and deleting them), rollout.ts (rolling
// updates and revision history) and status.ts.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import type { ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { QueueController, getLatest, intOption, keyOf, unwrap, type Obj } from '../util/base';
import { UIDTrackingExpectations } from '../util/expectations';
import {
  claimObjects,
  controllerRef,
  getControllerOf,
  resolveControllerRef,
  selectingControllers,
  selectorOf,
} from '../util/controller-ref';
import { claimCandidates, informerWithOwnerIndex, podInformer } from '../util/informers';
import { PodControl, isPodReady } from '../util/pod';
import { updateStatus } from '../util/status';
import { REVISION_HASH_LABEL, ensureRevision, sortRevisions } from '../util/history';
import { targetNodeName } from './node-selection';
import { DaemonPods } from './pods';
import { cleanupHistory, rollingUpdate } from './rollout';
import { daemonSetStatus } from './status';
import { jsonClone } from '../../../shared/api/json-value';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';

export { daemonPodTolerations, nodeShouldRunDaemonPod, targetNodeName } from './node-selection';
export { TEMPLATE_GENERATION_LABEL } from './rollout';

export class DaemonSetController extends QueueController {
  readonly expectations = new UIDTrackingExpectations();
  private readonly dsInformer: SharedIndexInformer<Obj>;
  private readonly podInformer: SharedIndexInformer<Obj>;
  private readonly nodeInformer: SharedIndexInformer<Obj>;
  private readonly revInformer: SharedIndexInformer<Obj>;
  private readonly dsClient: ResourceClient<Obj>;
  private readonly podClient: ResourceClient<Obj>;
  private readonly revClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;
  private readonly daemonPods: DaemonPods;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentDaemonsetSyncs', 2)) {
    super(ctx, { name: 'daemonset', workers });
    this.dsInformer = ctx.informers.forResource<Obj>('daemonsets.apps');
    this.podInformer = podInformer(ctx);
    this.nodeInformer = ctx.informers.forResource<Obj>('nodes');
    this.revInformer = informerWithOwnerIndex(ctx, 'controllerrevisions.apps');
    this.dsClient = ctx.client.resource<Obj>('daemonsets.apps');
    this.podClient = ctx.client.resource<Obj>('pods');
    this.revClient = ctx.client.resource<Obj>('controllerrevisions.apps');
    this.recorder = ctx.recorder('daemonset-controller');
    this.daemonPods = new DaemonPods(
      this.expectations,
      new PodControl(this.podClient, this.recorder),
      this.recorder,
    );
    this.waitFor(this.dsInformer, this.podInformer, this.nodeInformer, this.revInformer);

    this.dsInformer.addEventHandler({
      onAdd: (ds) => this.enqueue(keyOf(ds)),
      onUpdate: (_o, ds) => this.enqueue(keyOf(ds)),
      onDelete: (obj) => {
        const ds = unwrap(obj);
        this.expectations.delete(keyOf(ds));
      },
    });
    this.nodeInformer.addEventHandler({
      onAdd: () => this.enqueueAll(),
      onUpdate: (old, cur) => {
        if (
          JSON.stringify(old.metadata.labels) !== JSON.stringify(cur.metadata.labels) ||
          stringifyJSONInt64(old.spec) !== stringifyJSONInt64(cur.spec)
        )
          this.enqueueAll();
      },
      onDelete: () => this.enqueueAll(),
    });
    this.podInformer.addEventHandler({
      onAdd: (pod) => {
        if (pod.metadata.deletionTimestamp) return this.podDeleted(pod);
        const ds = this.resolve(pod);
        if (ds) {
          this.expectations.creationObserved(keyOf(ds));
          this.enqueue(keyOf(ds));
        } else if (!getControllerOf(pod)) this.enqueueMatching(pod);
      },
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (cur.metadata.deletionTimestamp) return this.podDeleted(cur);
        const ds = this.resolve(cur);
        if (ds) {
          this.enqueue(keyOf(ds));
          const min = ds.spec?.minReadySeconds ?? 0;
          if (min > 0 && !isPodReady(old) && isPodReady(cur)) this.enqueueAfter(keyOf(ds), min * 1000 + 100);
        } else if (!getControllerOf(cur)) this.enqueueMatching(cur);
        const oldDs = this.resolve(old);
        if (oldDs && oldDs !== ds) this.enqueue(keyOf(oldDs));
      },
      onDelete: (obj) => this.podDeleted(unwrap(obj)),
    });
  }

  private enqueueAll(): void {
    for (const ds of this.dsInformer.lister().list()) this.enqueue(keyOf(ds));
  }

  private enqueueMatching(pod: Obj): void {
    for (const ds of selectingControllers(this.dsInformer, pod)) this.enqueue(keyOf(ds));
  }

  private resolve(pod: Obj): Obj | undefined {
    return resolveControllerRef(this.dsInformer, 'DaemonSet', pod);
  }

  private podDeleted(pod: Obj): void {
    const ds = this.resolve(pod);
    if (!ds) return;
    this.expectations.deletionObservedOf(keyOf(ds), keyOf(pod));
    this.enqueue(keyOf(ds));
  }

  protected async sync(key: string): Promise<void> {
    const cached = this.dsInformer.indexer.getByKey(key);
    if (!cached) {
      this.expectations.delete(key);
      return;
    }
    const ds = jsonClone(cached);
    const sel = selectorOf(ds);
    if (!sel || sel.empty) {
      this.recorder.event(
        ds,
        'Warning',
        'SelectingAll',
        'Sync',
        'This daemon set is selecting all pods. A non-empty selector is required.',
      );
      return;
    }
    const fresh = () => getLatest(this.dsClient, ds);
    const nodes = this.nodeInformer.lister().list();
    const pods = await claimObjects(claimCandidates(this.podInformer, ds), {
      owner: ds,
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      matches: (p) => sel.matches(p.metadata.labels),
      client: this.podClient,
      fresh,
    });
    const byNode = new Map<string, Obj[]>();
    for (const p of pods) {
      // A finished pod being deleted is nothing the controller still has to handle.
      if (p.metadata.deletionTimestamp && ['Succeeded', 'Failed'].includes(p.status?.phase)) continue;
      const n = targetNodeName(p);
      if (!n) continue;
      if (!byNode.has(n)) byNode.set(n, []);
      byNode.get(n)!.push(p);
    }
    if (ds.metadata.deletionTimestamp) {
      await this.writeStatus(ds, nodes, byNode, '');
      return;
    }
    const revisions = await claimObjects(claimCandidates(this.revInformer, ds), {
      owner: ds,
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      matches: (r) => sel.matches(r.metadata.labels),
      client: this.revClient,
      fresh,
    });
    const ensured = await ensureRevision(
      this.revClient,
      ds,
      controllerRef(ds, 'apps/v1', 'DaemonSet'),
      sortRevisions(revisions),
      ds.status?.collisionCount ?? 0,
    );
    const hash = ensured.revision.metadata.labels?.[REVISION_HASH_LABEL] ?? '';
    if (ensured.collisionCount !== (ds.status?.collisionCount ?? 0))
      ds.status = { ...ds.status, collisionCount: ensured.collisionCount };

    if (!this.expectations.satisfied(key)) {
      await this.writeStatus(ds, nodes, byNode, hash);
      return;
    }
    await this.daemonPods.manage(ds, nodes, byNode, hash);
    if (
      this.expectations.satisfied(key) &&
      (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate'
    ) {
      await rollingUpdate(this.daemonPods, ds, nodes, byNode, hash, this.ctx.now());
    }
    await cleanupHistory(this.revClient, ds, pods, revisions, ensured.revision);
    await this.writeStatus(ds, nodes, byNode, hash);
  }

  private async writeStatus(ds: Obj, nodes: Obj[], byNode: Map<string, Obj[]>, hash: string): Promise<void> {
    const { status, ready, available } = daemonSetStatus(ds, nodes, byNode, hash, this.ctx.now());
    const min = ds.spec?.minReadySeconds ?? 0;
    const cached = this.dsInformer.indexer.getByKey(keyOf(ds)) ?? ds;
    await updateStatus(this.dsClient, cached, status, { retryOnConflict: true });
    if (min > 0 && ready !== available) this.enqueueAfter(keyOf(ds), min * 1000);
  }
}

export const daemonSetController: ControllerDescriptor = {
  name: 'daemonset',
  start(ctx) {
    void new DaemonSetController(ctx).run();
  },
};

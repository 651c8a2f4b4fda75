// The ReplicaSet controller (pkg/controller/replicaset), which also runs
// ReplicationControllers: keeps as many active pods as spec.replicas, creating
// them from the template in slow-start batches and deleting the ones ranked
// first (unscheduled, pending, not ready, doubled up, newer ...), with
// expectations so pods in flight are not created twice, and writes status.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { LabelSelector, parseLabelSelector } from '../../../shared/api/labels';
import {
  QueueController,
  errMessage,
  getLatest,
  intOption,
  keyOf,
  rfc3339,
  slowStartBatch,
  unwrap,
  type Obj,
} from '../util/base';
import { UIDTrackingExpectations } from '../util/expectations';
import {
  claimObjects,
  controllerRef,
  getControllerOf,
  resolveControllerRef,
  selectingControllers,
  selectorOf,
} from '../util/controller-ref';
import {
  CONTROLLER_UID_INDEX,
  claimCandidates,
  informerWithOwnerIndex,
  ownedBy,
  podInformer,
} from '../util/informers';
import {
  PodControl,
  isPodActive,
  isPodAvailable,
  isPodReady,
  podFromTemplate,
  podsToDelete,
} from '../util/pod';
import { getCondition, removeCondition, setCondition } from '../util/conditions';
import { updateStatus } from '../util/status';

/** BurstReplicas: at most this many creates or deletes per sync. */
export const BURST_REPLICAS = 500;

export interface ReplicaSetKind {
  /** --controllers name. */
  name: string;
  resource: string;
  apiVersion: string;
  kind: string;
  /** reportingController of events. */
  component: string;
  workersOption: string;
  selector(obj: Obj): LabelSelector | null;
}

export const REPLICASET_KIND: ReplicaSetKind = {
  name: 'replicaset',
  resource: 'replicasets.apps',
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  component: 'replicaset-controller',
  workersOption: 'concurrentReplicasetSyncs',
  selector: selectorOf,
};

export const REPLICATION_CONTROLLER_KIND: ReplicaSetKind = {
  name: 'replicationcontroller',
  resource: 'replicationcontrollers',
  apiVersion: 'v1',
  kind: 'ReplicationController',
  component: 'replication-controller',
  workersOption: 'concurrentRcSyncs',
  selector: (rc) => {
    const sel: Record<string, string> = rc.spec?.selector ?? {};
    const parts = Object.entries(sel).map(([k, v]) => `${k}=${v}`);
    try {
      return parseLabelSelector(parts.join(','));
    } catch {
      return null;
    }
  },
};

export class ReplicaSetController extends QueueController {
  readonly expectations = new UIDTrackingExpectations();
  private readonly rsInformer: SharedIndexInformer<Obj>;
  private readonly podInformer: SharedIndexInformer<Obj>;
  private readonly rsClient: ResourceClient<Obj>;
  private readonly podClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;
  private readonly podControl: PodControl;

  constructor(
    ctx: ControllerContext,
    readonly kind: ReplicaSetKind = REPLICASET_KIND,
    workers = intOption(ctx, kind.workersOption, 5),
  ) {
    super(ctx, { name: kind.name, workers });
    this.rsInformer = informerWithOwnerIndex(ctx, kind.resource);
    this.podInformer = podInformer(ctx);
    this.rsClient = ctx.client.resource<Obj>(kind.resource);
    this.podClient = ctx.client.resource<Obj>('pods');
    this.recorder = ctx.recorder(kind.component);
    this.podControl = new PodControl(this.podClient, this.recorder);
    this.waitFor(this.rsInformer, this.podInformer);

    this.rsInformer.addEventHandler({
      onAdd: (rs) => this.enqueue(keyOf(rs)),
      onUpdate: (_old, cur) => this.enqueue(keyOf(cur)),
      onDelete: (obj) => {
        const rs = unwrap(obj);
        this.expectations.delete(keyOf(rs));
        this.enqueue(keyOf(rs));
      },
    });
    this.podInformer.addEventHandler({
      onAdd: (pod) => this.addPod(pod),
      onUpdate: (old, cur) => this.updatePod(old, cur),
      onDelete: (obj) => this.deletePod(unwrap(obj)),
    });
  }

  private resolveRef(pod: Obj): Obj | undefined {
    return resolveControllerRef(this.rsInformer, this.kind.kind, pod);
  }

  /** Controllers whose selector matches an orphan pod. */
  private matchingControllers(pod: Obj): Obj[] {
    return selectingControllers(this.rsInformer, pod, this.kind.selector);
  }

  private addPod(pod: Obj): void {
    if (pod.metadata.deletionTimestamp) {
      this.deletePod(pod);
      return;
    }
    const ref = getControllerOf(pod);
    if (ref) {
      const rs = this.resolveRef(pod);
      if (!rs) return;
      const key = keyOf(rs);
      this.expectations.creationObserved(key);
      this.enqueue(key);
      return;
    }
    for (const rs of this.matchingControllers(pod)) this.enqueue(keyOf(rs));
  }

  private updatePod(old: Obj, cur: Obj): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const labelsChanged =
      JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
    if (cur.metadata.deletionTimestamp) {
      this.deletePod(cur);
      if (labelsChanged) this.deletePod(old);
      return;
    }
    const curRef = getControllerOf(cur);
    const oldRef = getControllerOf(old);
    const refChanged = curRef?.uid !== oldRef?.uid;
    if (refChanged && oldRef) {
      const rs = this.resolveRef(old);
      if (rs) this.enqueue(keyOf(rs));
    }
    if (curRef) {
      const rs = this.resolveRef(cur);
      if (!rs) return;
      this.enqueue(keyOf(rs));
      const minReady = rs.spec?.minReadySeconds ?? 0;
      if (minReady > 0 && !isPodReady(old) && isPodReady(cur))
        this.enqueueAfter(keyOf(rs), minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged) for (const rs of this.matchingControllers(cur)) this.enqueue(keyOf(rs));
  }

  private deletePod(pod: Obj): void {
    const rs = this.resolveRef(pod);
    if (!rs) return;
    const key = keyOf(rs);
    this.expectations.deletionObservedOf(key, keyOf(pod));
    this.enqueue(key);
  }

  protected async sync(key: string): Promise<void> {
    const rs = this.rsInformer.indexer.getByKey(key);
    if (!rs) {
      this.expectations.delete(key);
      return;
    }
    const needsSync = this.expectations.satisfied(key);
    const selector = this.kind.selector(rs);
    if (!selector) {
      this.log.warn('invalid selector', { key });
      return;
    }
    const active = claimCandidates(this.podInformer, rs).filter(isPodActive);
    const pods = await claimObjects(active, {
      owner: rs,
      apiVersion: this.kind.apiVersion,
      kind: this.kind.kind,
      matches: (p) => !selector.empty && selector.matches(p.metadata.labels),
      client: this.podClient,
      fresh: () => getLatest(this.rsClient, rs),
    });
    let manageErr: unknown;
    if (needsSync && !rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(pods, rs, key);
      } catch (err) {
        manageErr = err ?? new Error('unknown error');
      }
    }
    const status = this.calculateStatus(rs, pods, manageErr);
    const updated = await updateStatus(this.rsClient, rs, status, { retryOnConflict: true });
    if (
      manageErr === undefined &&
      updated &&
      (rs.spec?.minReadySeconds ?? 0) > 0 &&
      status.readyReplicas === (rs.spec?.replicas ?? 1) &&
      status.availableReplicas !== (rs.spec?.replicas ?? 1)
    ) {
      this.enqueueAfter(key, rs.spec.minReadySeconds * 1000);
    }
    if (manageErr !== undefined) throw manageErr;
  }

  /** Pods of the ReplicaSets sharing rs's controller (a Deployment's), for ranking. */
  private relatedPods(rs: Obj): Obj[] {
    const owner = getControllerOf(rs);
    const sets = owner ? this.rsInformer.indexer.byIndex(CONTROLLER_UID_INDEX, owner.uid) : [rs];
    const out: Obj[] = [];
    for (const s of sets.length ? sets : [rs]) out.push(...ownedBy(this.podInformer, s.metadata.uid));
    return out;
  }

  private async manageReplicas(pods: Obj[], rs: Obj, key: string): Promise<void> {
    const replicas: number = rs.spec?.replicas ?? 1;
    let diff = pods.length - replicas;
    if (diff < 0) {
      diff = Math.min(-diff, BURST_REPLICAS);
      this.expectations.expectCreations(key, diff);
      this.log.v(2)?.info('too few replicas', { key, need: replicas, creating: diff });
      const ref = controllerRef(rs, this.kind.apiVersion, this.kind.kind);
      const { successes, error } = await slowStartBatch(diff, 1, async () => {
        const pod = podFromTemplate(rs.spec?.template, rs.metadata.name!, ref);
        await this.podControl.createPod(rs, pod);
      });
      // Creates that were never sent will never be observed.
      for (let i = successes; i < diff; i++) this.expectations.creationObserved(key);
      if (error !== undefined) throw error;
      return;
    }
    if (diff > 0) {
      diff = Math.min(diff, BURST_REPLICAS);
      const victims = podsToDelete(pods, this.relatedPods(rs), diff, this.ctx.now());
      this.expectations.expectDeletionsOf(key, victims.map(keyOf));
      this.log.v(2)?.info('too many replicas', { key, need: replicas, deleting: diff });
      const results = await Promise.allSettled(
        victims.map(async (pod) => {
          try {
            await this.podControl.deletePod(rs, pod);
          } catch (err) {
            // The pod will not be seen deleted by us: do not wait for it.
            this.expectations.deletionObservedOf(key, keyOf(pod));
            if (!isNotFound(err)) throw err;
          }
        }),
      );
      const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      if (failed) throw failed.reason;
    }
  }

  private calculateStatus(rs: Obj, pods: Obj[], manageErr: unknown): any {
    const now = this.ctx.now();
    // Once per sync, not per pod: a sync walks every pod of the ReplicaSet.
    const templateLabels = Object.entries<string>(rs.spec?.template?.metadata?.labels ?? {});
    const minReady = rs.spec?.minReadySeconds ?? 0;
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    for (const p of pods) {
      const labels = p.metadata.labels ?? {};
      if (templateLabels.every(([k, v]) => labels[k] === v)) fullyLabeled++;
      if (isPodReady(p)) {
        ready++;
        if (isPodAvailable(p, minReady, now)) available++;
      }
    }
    const status: any = { ...(rs.status ?? {}) };
    status.replicas = pods.length;
    status.fullyLabeledReplicas = fullyLabeled;
    status.readyReplicas = ready;
    status.availableReplicas = available;
    status.observedGeneration = rs.metadata.generation;
    const failure = getCondition(status, 'ReplicaFailure');
    if (manageErr !== undefined && !failure) {
      const diff = pods.length - (rs.spec?.replicas ?? 1);
      setCondition(status, {
        type: 'ReplicaFailure',
        status: 'True',
        lastTransitionTime: rfc3339(now),
        reason: diff < 0 ? 'FailedCreate' : 'FailedDelete',
        message: errMessage(manageErr),
      });
    } else if (manageErr === undefined && failure) {
      removeCondition(status, 'ReplicaFailure');
    }
    return status;
  }
}

export const replicaSetController: ControllerDescriptor = {
  name: 'replicaset',
  start(ctx) {
    void new ReplicaSetController(ctx, REPLICASET_KIND).run();
  },
};

export const replicationController: ControllerDescriptor = {
  name: 'replicationcontroller',
  start(ctx) {
    void new ReplicaSetController(ctx, REPLICATION_CONTROLLER_KIND).run();
  },
};

// The Deployment controller (pkg/controller/deployment): one ReplicaSet per pod
// template (named <deployment>-<pod-template-hash>), rolled out by RollingUpdate
// (maxSurge / maxUnavailable) or Recreate, proportional scaling of all sets
// while a rollout is in progress, revisions (and rollbacks, by template),
// history cleanup, pause, and the Progressing / Available conditions with the
// status fields `kubectl rollout status` reads.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isAlreadyExists, isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import type { LabelSelector } from '../../../shared/api/labels';
import {
  QueueController,
  clone,
  errMessage,
  getLatest,
  intOption,
  keyOf,
  rfc3339,
  splitKey,
  unwrap,
  type Obj,
} from '../util/base';
import {
  claimObjects,
  controllerRef,
  getControllerOf,
  isControlledBy,
  resolveControllerRef,
  selectingControllers,
  selectorOf,
} from '../util/controller-ref';
import { CONTROLLER_UID_INDEX, informerWithOwnerIndex, podInformer } from '../util/informers';
import { computeHash } from '../util/hash';
import { updateStatus } from '../util/status';
import * as u from './util';

const APPS_V1 = 'apps/v1';

export class DeploymentController extends QueueController {
  private readonly dInformer: SharedIndexInformer<Obj>;
  private readonly rsInformer: SharedIndexInformer<Obj>;
  private readonly podInformer: SharedIndexInformer<Obj>;
  private readonly dClient: ResourceClient<Obj>;
  private readonly rsClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentDeploymentSyncs', 5)) {
    super(ctx, { name: 'deployment', workers });
    this.dInformer = ctx.informers.forResource<Obj>('deployments.apps');
    this.rsInformer = informerWithOwnerIndex(ctx, 'replicasets.apps');
    this.podInformer = podInformer(ctx);
    this.dClient = ctx.client.resource<Obj>('deployments.apps');
    this.rsClient = ctx.client.resource<Obj>('replicasets.apps');
    this.recorder = ctx.recorder('deployment-controller');
    this.waitFor(this.dInformer, this.rsInformer, this.podInformer);

    this.dInformer.addEventHandler({
      onAdd: (d) => this.enqueue(keyOf(d)),
      onUpdate: (_o, d) => this.enqueue(keyOf(d)),
      onDelete: (d) => this.enqueue(keyOf(unwrap(d))),
    });
    this.rsInformer.addEventHandler({
      onAdd: (rs) => this.rsChanged(rs),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        const oldRef = getControllerOf(old);
        const curRef = getControllerOf(cur);
        if (oldRef && oldRef.uid !== curRef?.uid) this.rsChanged(old);
        this.rsChanged(cur, JSON.stringify(old.metadata.labels) !== JSON.stringify(cur.metadata.labels));
      },
      onDelete: (rs) => this.rsChanged(unwrap(rs)),
    });
    this.podInformer.addEventHandler({
      // Recreate waits for the old pods to be gone.
      onDelete: (obj) => {
        const pod = unwrap(obj);
        const ref = getControllerOf(pod);
        if (!ref || ref.kind !== 'ReplicaSet') return;
        const rs = this.rsInformer.indexer.getByKey(`${pod.metadata.namespace}/${ref.name}`);
        const d = rs && this.deploymentOf(rs);
        if (d && d.spec?.strategy?.type === 'Recreate') this.enqueue(keyOf(d));
      },
    });
  }

  private deploymentOf(rs: Obj): Obj | undefined {
    return resolveControllerRef(this.dInformer, 'Deployment', rs);
  }

  private rsChanged(rs: Obj, labelsChanged = true): void {
    const ref = getControllerOf(rs);
    if (ref) {
      const d = this.deploymentOf(rs);
      if (d) this.enqueue(keyOf(d));
      return;
    }
    if (!labelsChanged || rs.metadata.deletionTimestamp) return;
    // An orphan: every Deployment that would adopt it.
    for (const d of selectingControllers(this.dInformer, rs)) this.enqueue(keyOf(d));
  }

  private nowString(): string {
    return rfc3339(this.ctx.now());
  }

  protected async sync(key: string): Promise<void> {
    const cached = this.dInformer.indexer.getByKey(key);
    if (!cached) return;
    const d = clone(cached);
    const sel = selectorOf(d);
    if (!sel || sel.empty) {
      this.recorder.event(
        d,
        'Warning',
        'SelectingAll',
        'Sync',
        'This deployment is selecting all pods. A non-empty selector is required.',
      );
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        await updateStatus(this.dClient, cached, {
          ...(d.status ?? {}),
          observedGeneration: d.metadata.generation,
        });
      }
      return;
    }
    const [ns] = splitKey(key);
    const sets = await claimObjects(this.rsInformer.lister().namespace(ns).list(), {
      owner: d,
      apiVersion: APPS_V1,
      kind: 'Deployment',
      matches: (rs) => sel.matches(rs.metadata.labels),
      client: this.rsClient,
      fresh: () => getLatest(this.dClient, d),
    });
    const s = new Sync(
      this,
      d,
      sets.map((x) => clone(x)),
    );
    if (d.metadata.deletionTimestamp) {
      await s.syncStatusOnly();
      return;
    }
    await s.checkPausedConditions();
    if (d.spec?.paused) {
      await s.scaleSync();
      return;
    }
    if (await s.isScalingEvent()) {
      await s.scaleSync();
      return;
    }
    if (d.spec?.strategy?.type === 'Recreate') await s.rolloutRecreate(this.podsByReplicaSet(d, sel, sets));
    else await s.rolloutRolling();
  }

  private podsByReplicaSet(d: Obj, sel: LabelSelector, sets: Obj[]): Map<string, Obj[]> {
    const out = new Map<string, Obj[]>();
    for (const rs of sets) out.set(rs.metadata.uid!, []);
    for (const p of this.podInformer.lister().namespace(d.metadata.namespace!).list(sel)) {
      const ref = getControllerOf(p);
      if (ref && out.has(ref.uid)) out.get(ref.uid)!.push(p);
    }
    return out;
  }

  // ---- what Sync uses ----------------------------------------------------------

  /** @internal */ get clients() {
    return { d: this.dClient, rs: this.rsClient };
  }
  /** @internal */ get events() {
    return this.recorder;
  }
  /** @internal */ cachedReplicaSet(ns: string, name: string): Obj | undefined {
    return this.rsInformer.indexer.getByKey(`${ns}/${name}`);
  }
  /** @internal */ ownedReplicaSets(uid: string): Obj[] {
    return this.rsInformer.indexer.byIndex(CONTROLLER_UID_INDEX, uid);
  }
  /** @internal */ now(): number {
    return this.ctx.now();
  }
  /** @internal */ nowRFC(): string {
    return this.nowString();
  }
  /** @internal */ logger() {
    return this.log;
  }
}

/** One sync of one Deployment: d and its ReplicaSets are private copies kept current across writes. */
class Sync {
  constructor(
    private readonly c: DeploymentController,
    private d: Obj,
    private sets: Obj[],
  ) {}

  private get ns(): string {
    return this.d.metadata.namespace!;
  }

  /** Replaces a set in this.sets after a write. */
  private replaced(rs: Obj): Obj {
    const i = this.sets.findIndex((x) => x.metadata.uid === rs.metadata.uid);
    if (i >= 0) this.sets[i] = rs;
    else this.sets.push(rs);
    return rs;
  }

  private async writeStatus(status: any): Promise<void> {
    const updated = await updateStatus(this.c.clients.d, this.d, status);
    if (updated) this.d = { ...this.d, metadata: updated.metadata, status: updated.status };
  }

  /** Sets the Deployment's revision annotation (a metadata patch) when it differs. */
  private async setDeploymentRevision(revision: string): Promise<void> {
    if (this.d.metadata.annotations?.[u.REVISION_ANNOTATION] === revision) return;
    const updated = await this.c.clients.d
      .namespace(this.ns)
      .patch(
        this.d.metadata.name!,
        { metadata: { annotations: { [u.REVISION_ANNOTATION]: revision } } },
        'merge',
      );
    this.d = { ...this.d, metadata: updated.metadata };
  }

  /** getAllReplicaSetsAndSyncRevision. */
  private async allAndSyncRevision(create: boolean): Promise<{ newRS?: Obj; olds: Obj[] }> {
    const found = u.findNewReplicaSet(this.d, this.sets);
    const olds = this.sets.filter((rs) => rs !== found);
    const newRS = await this.getNewReplicaSet(found, olds, create);
    return { newRS, olds: this.sets.filter((rs) => rs.metadata.uid !== newRS?.metadata.uid) };
  }

  private async getNewReplicaSet(
    existing: Obj | undefined,
    olds: Obj[],
    create: boolean,
  ): Promise<Obj | undefined> {
    const d = this.d;
    const newRevision = u.maxRevision(olds) + 1;
    if (existing) {
      const rs = clone(existing);
      const annotationsUpdated = u.setNewReplicaSetAnnotations(d, rs, newRevision, true);
      const minReadyUpdate = (rs.spec?.minReadySeconds ?? 0) !== (d.spec?.minReadySeconds ?? 0);
      if (annotationsUpdated || minReadyUpdate) {
        rs.spec.minReadySeconds = d.spec?.minReadySeconds ?? 0;
        return this.replaced(await this.c.clients.rs.namespace(this.ns).update(rs));
      }
      await this.setDeploymentRevision(
        rs.metadata.annotations?.[u.REVISION_ANNOTATION] ?? String(newRevision),
      );
      if (u.hasProgressDeadline(d) && !u.getDeploymentCondition(d.status, 'Progressing')) {
        const status = clone(d.status ?? {});
        u.setDeploymentCondition(
          status,
          u.deploymentCondition(
            'Progressing',
            'True',
            u.FOUND_NEW_RS,
            `Found new replica set "${rs.metadata.name}"`,
            this.c.nowRFC(),
          ),
        );
        await this.writeStatus(status);
      }
      return rs;
    }
    if (!create) return undefined;

    const hash = computeHash(d.spec.template, d.status?.collisionCount);
    const template = clone(d.spec.template);
    template.metadata = { ...(template.metadata ?? {}) };
    template.metadata.labels = { ...(template.metadata.labels ?? {}), [u.POD_TEMPLATE_HASH]: hash };
    const selector = clone(d.spec.selector);
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [u.POD_TEMPLATE_HASH]: hash };
    const rs: Obj = {
      apiVersion: APPS_V1,
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: this.ns,
        ownerReferences: [controllerRef(d, APPS_V1, 'Deployment')],
        labels: template.metadata.labels,
      },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
    };
    rs.spec.replicas = u.newRSNewReplicas(d, [...olds, rs], rs);
    u.setNewReplicaSetAnnotations(d, rs, newRevision, false);

    let created: Obj | undefined;
    let alreadyExists = false;
    try {
      created = await this.c.clients.rs.namespace(this.ns).create(rs);
    } catch (err) {
      if (isAlreadyExists(err)) {
        alreadyExists = true;
        let other = this.c.cachedReplicaSet(this.ns, rs.metadata.name!);
        if (!other) {
          try {
            other = await this.c.clients.rs.namespace(this.ns).get(rs.metadata.name!);
          } catch (e) {
            if (!isNotFound(e)) throw e;
          }
        }
        if (other && isControlledBy(other, d) && u.equalIgnoreHash(other.spec?.template, d.spec.template)) {
          created = clone(other);
        } else {
          // A hash collision: count it, so the next hash differs.
          const status = clone(d.status ?? {});
          status.collisionCount = (status.collisionCount ?? 0) + 1;
          await this.writeStatus(status);
          throw new Error(
            `replica set "${rs.metadata.name}" already exists with a different template (hash collision)`,
            { cause: err },
          );
        }
      } else {
        if (u.hasProgressDeadline(d)) {
          const status = clone(d.status ?? {});
          u.setDeploymentCondition(
            status,
            u.deploymentCondition(
              'Progressing',
              'False',
              u.FAILED_RS_CREATE,
              `Failed to create new replica set "${rs.metadata.name}": ${errMessage(err)}`,
              this.c.nowRFC(),
            ),
          );
          await this.writeStatus(status);
        }
        throw err;
      }
    }
    const newRS = this.replaced(created!);
    if (!alreadyExists && u.replicasOf(newRS) > 0) {
      this.c.events.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        'Scale',
        `Scaled up replica set ${newRS.metadata.name} from 0 to ${u.replicasOf(newRS)}`,
      );
    }
    await this.setDeploymentRevision(String(newRevision));
    if (!alreadyExists && u.hasProgressDeadline(d)) {
      const status = clone(this.d.status ?? {});
      u.setDeploymentCondition(
        status,
        u.deploymentCondition(
          'Progressing',
          'True',
          u.NEW_RS_CREATED,
          `Created new replica set "${newRS.metadata.name}"`,
          this.c.nowRFC(),
        ),
      );
      await this.writeStatus(status);
    }
    return newRS;
  }

  /** scaleReplicaSetAndRecordEvent; true when the size changed. */
  private async scaleReplicaSet(rs: Obj, size: number, op?: 'up' | 'down'): Promise<boolean> {
    const d = this.d;
    const oldSize = u.replicasOf(rs);
    const sizeChange = oldSize !== size;
    const max = u.replicasOf(d) + u.maxSurge(d);
    if (!sizeChange && !u.replicasAnnotationsNeedUpdate(rs, u.replicasOf(d), max)) return false;
    const copy = clone(rs);
    copy.spec.replicas = size;
    u.setReplicasAnnotations(copy, u.replicasOf(d), max);
    this.replaced(await this.c.clients.rs.namespace(this.ns).update(copy));
    if (sizeChange) {
      const dir = op ?? (oldSize < size ? 'up' : 'down');
      this.c.events.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        'Scale',
        `Scaled ${dir} replica set ${rs.metadata.name} from ${oldSize} to ${size}`,
      );
    }
    return sizeChange;
  }

  private async scaleIfNeeded(rs: Obj, size: number): Promise<boolean> {
    if (u.replicasOf(rs) === size) return false;
    return this.scaleReplicaSet(rs, size);
  }

  // ---- status ----------------------------------------------------------------

  private calculateStatus(all: Obj[], newRS: Obj | undefined): any {
    const d = this.d;
    const available = u.availableReplicasSum(all);
    const total = u.specReplicasSum(all);
    const status: any = {
      observedGeneration: d.metadata.generation,
      replicas: u.statusReplicasSum(all),
      updatedReplicas: u.statusReplicasSum([newRS]),
      readyReplicas: u.readyReplicasSum(all),
      availableReplicas: available,
      unavailableReplicas: Math.max(0, total - available),
    };
    if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
    status.conditions = clone(d.status?.conditions ?? []);
    const now = this.c.nowRFC();
    if (available >= u.replicasOf(d) - u.maxUnavailable(d)) {
      u.setDeploymentCondition(
        status,
        u.deploymentCondition(
          'Available',
          'True',
          u.MIN_AVAILABLE,
          'Deployment has minimum availability.',
          now,
        ),
      );
    } else {
      u.setDeploymentCondition(
        status,
        u.deploymentCondition(
          'Available',
          'False',
          u.MIN_UNAVAILABLE,
          'Deployment does not have minimum availability.',
          now,
        ),
      );
    }
    if (!status.conditions.length) delete status.conditions;
    return status;
  }

  /** syncDeploymentStatus: status without the progress condition logic. */
  private async syncDeploymentStatus(all: Obj[], newRS: Obj | undefined): Promise<void> {
    await this.writeStatus(this.calculateStatus(all, newRS));
  }

  async syncStatusOnly(): Promise<void> {
    const { newRS, olds } = await this.allAndSyncRevision(false);
    await this.syncDeploymentStatus([...olds, ...(newRS ? [newRS] : [])], newRS);
  }

  /** syncRolloutStatus: status plus Progressing (and ReplicaFailure) conditions. */
  private async syncRolloutStatus(all: Obj[], newRS: Obj | undefined): Promise<void> {
    const d = this.d;
    const status = this.calculateStatus(all, newRS);
    const now = this.c.now();
    const nowS = this.c.nowRFC();
    if (!u.hasProgressDeadline(d)) u.removeDeploymentCondition(status, 'Progressing');
    const cur = u.getDeploymentCondition(status, 'Progressing');
    const isComplete = status.replicas === status.updatedReplicas && cur?.reason === u.NEW_RS_AVAILABLE;
    if (u.hasProgressDeadline(d) && !isComplete) {
      const rsName = newRS?.metadata.name;
      if (u.deploymentComplete(d, status)) {
        const msg = rsName
          ? `ReplicaSet "${rsName}" has successfully progressed.`
          : 'Deployment has successfully progressed.';
        u.setDeploymentCondition(
          status,
          u.deploymentCondition('Progressing', 'True', u.NEW_RS_AVAILABLE, msg, nowS),
        );
      } else if (u.deploymentProgressing(d, status)) {
        const msg = rsName ? `ReplicaSet "${rsName}" is progressing.` : 'Deployment is actively progressing.';
        const cond = u.deploymentCondition('Progressing', 'True', u.RS_UPDATED, msg, nowS);
        if (cur) {
          if (cur.status === 'True') cond.lastTransitionTime = cur.lastTransitionTime;
          u.removeDeploymentCondition(status, 'Progressing');
        }
        u.setDeploymentCondition(status, cond);
      } else if (u.deploymentTimedOut(d, status, now)) {
        const msg = rsName
          ? `ReplicaSet "${rsName}" has timed out progressing.`
          : `Deployment "${d.metadata.name}" has timed out progressing.`;
        u.setDeploymentCondition(
          status,
          u.deploymentCondition('Progressing', 'False', u.TIMED_OUT, msg, nowS),
        );
      }
    }
    const failure = this.replicaFailure(all, newRS);
    if (failure) u.setDeploymentCondition(status, failure);
    else u.removeDeploymentCondition(status, 'ReplicaFailure');
    if (status.conditions && !status.conditions.length) delete status.conditions;

    await this.writeStatus(status);
    this.requeueStuck(status);
  }

  /** getReplicaFailures: the new set's ReplicaFailure condition first, else any old set's. */
  private replicaFailure(all: Obj[], newRS: Obj | undefined): any {
    const from = (rs: Obj | undefined) =>
      (rs?.status?.conditions ?? []).find((c: any) => c.type === 'ReplicaFailure' && c.status === 'True');
    const c =
      from(newRS) ??
      all
        .filter((rs) => rs !== newRS)
        .map(from)
        .find((x) => x !== undefined);
    if (!c) return undefined;
    return {
      type: 'ReplicaFailure',
      status: c.status,
      lastUpdateTime: c.lastTransitionTime,
      lastTransitionTime: c.lastTransitionTime,
      reason: c.reason,
      message: c.message,
    };
  }

  /** requeueStuckDeployment: wake up when the progress deadline passes. */
  private requeueStuck(status: any): void {
    const d = this.d;
    const cur = u.getDeploymentCondition(status, 'Progressing');
    if (!u.hasProgressDeadline(d) || !cur) return;
    if (u.deploymentComplete(d, status) || cur.reason === u.TIMED_OUT) return;
    const last = Date.parse(cur.lastUpdateTime ?? '');
    if (Number.isNaN(last)) return;
    const after = last + d.spec.progressDeadlineSeconds * 1000 - this.c.now();
    this.c.enqueueAfter(keyOf(d), Math.max(after, 1000));
  }

  async checkPausedConditions(): Promise<void> {
    const d = this.d;
    if (!u.hasProgressDeadline(d)) return;
    const cond = u.getDeploymentCondition(d.status, 'Progressing');
    if (cond?.reason === u.TIMED_OUT) return;
    const pausedExists = cond?.reason === u.PAUSED;
    const status = clone(d.status ?? {});
    const now = this.c.nowRFC();
    if (d.spec?.paused && !pausedExists) {
      u.setDeploymentCondition(
        status,
        u.deploymentCondition('Progressing', 'Unknown', u.PAUSED, 'Deployment is paused', now),
      );
    } else if (!d.spec?.paused && pausedExists) {
      u.setDeploymentCondition(
        status,
        u.deploymentCondition('Progressing', 'Unknown', u.RESUMED, 'Deployment is resumed', now),
      );
    } else return;
    await this.writeStatus(status);
  }

  // ---- scaling ---------------------------------------------------------------

  async isScalingEvent(): Promise<boolean> {
    const { newRS, olds } = await this.allAndSyncRevision(false);
    for (const rs of u.activeSets([...olds, newRS])) {
      const desired = rs.metadata.annotations?.[u.DESIRED_REPLICAS_ANNOTATION];
      if (!desired || !/^\d+$/.test(desired)) continue;
      if (Number(desired) !== u.replicasOf(this.d)) return true;
    }
    return false;
  }

  /** sync: scaling (proportional while a rollout is in progress) and paused Deployments. */
  async scaleSync(): Promise<void> {
    const { newRS, olds } = await this.allAndSyncRevision(false);
    await this.scale(newRS, olds);
    const fresh = this.refresh(newRS, olds);
    if (this.d.spec?.paused) await this.cleanup(fresh.olds);
    await this.syncDeploymentStatus([...fresh.olds, ...(fresh.newRS ? [fresh.newRS] : [])], fresh.newRS);
  }

  /** The current copies of newRS and olds after writes. */
  private refresh(newRS: Obj | undefined, olds: Obj[]): { newRS?: Obj; olds: Obj[] } {
    const get = (rs: Obj) => this.sets.find((x) => x.metadata.uid === rs.metadata.uid) ?? rs;
    return { newRS: newRS && get(newRS), olds: olds.map(get) };
  }

  private async scale(newRS: Obj | undefined, olds: Obj[]): Promise<void> {
    const d = this.d;
    const target = u.findActiveOrLatest(newRS, olds);
    if (target) {
      if (u.replicasOf(target) === u.replicasOf(d)) return;
      await this.scaleIfNeeded(target, u.replicasOf(d));
      return;
    }
    if (u.isSaturated(d, newRS)) {
      for (const old of u.activeSets(olds)) await this.scaleIfNeeded(old, 0);
      return;
    }
    if (!u.isRollingUpdate(d)) return;
    const all = u.activeSets([...olds, newRS]);
    const allReplicas = u.specReplicasSum(all);
    const allowed = u.replicasOf(d) > 0 ? u.replicasOf(d) + u.maxSurge(d) : 0;
    const toAdd = allowed - allReplicas;
    let op: 'up' | 'down' | undefined;
    if (toAdd > 0) {
      all.sort(u.bySizeNewer);
      op = 'up';
    } else if (toAdd < 0) {
      all.sort(u.bySizeOlder);
      op = 'down';
    }
    let added = 0;
    const sizes = new Map<string, number>();
    for (const rs of all) {
      if (toAdd !== 0) {
        const p = u.proportion(rs, d, toAdd, added);
        sizes.set(rs.metadata.name!, u.replicasOf(rs) + p);
        added += p;
      } else sizes.set(rs.metadata.name!, u.replicasOf(rs));
    }
    for (let i = 0; i < all.length; i++) {
      const rs = all[i];
      if (i === 0 && toAdd !== 0) {
        const left = toAdd - added;
        sizes.set(rs.metadata.name!, Math.max(0, sizes.get(rs.metadata.name!)! + left));
      }
      await this.scaleReplicaSet(rs, sizes.get(rs.metadata.name!)!, op);
    }
  }

  // ---- RollingUpdate ------------------------------------------------------------

  async rolloutRolling(): Promise<void> {
    let { newRS, olds } = await this.allAndSyncRevision(true);
    const all = () => [...olds, ...(newRS ? [newRS] : [])];
    if (await this.reconcileNewReplicaSet(all(), newRS!)) {
      ({ newRS, olds } = this.refresh(newRS, olds));
      await this.syncRolloutStatus(all(), newRS);
      return;
    }
    ({ newRS, olds } = this.refresh(newRS, olds));
    if (await this.reconcileOldReplicaSets(all(), u.activeSets(olds), newRS)) {
      ({ newRS, olds } = this.refresh(newRS, olds));
      await this.syncRolloutStatus(all(), newRS);
      return;
    }
    ({ newRS, olds } = this.refresh(newRS, olds));
    if (u.deploymentComplete(this.d, this.d.status ?? {})) await this.cleanup(olds);
    ({ newRS, olds } = this.refresh(newRS, olds));
    await this.syncRolloutStatus(all(), newRS);
  }

  private async reconcileNewReplicaSet(all: Obj[], newRS: Obj): Promise<boolean> {
    const d = this.d;
    if (u.replicasOf(newRS) === u.replicasOf(d)) return false;
    if (u.replicasOf(newRS) > u.replicasOf(d)) return this.scaleReplicaSet(newRS, u.replicasOf(d), 'down');
    return this.scaleIfNeeded(newRS, u.newRSNewReplicas(d, all, newRS));
  }

  private async reconcileOldReplicaSets(all: Obj[], olds: Obj[], newRS: Obj | undefined): Promise<boolean> {
    const d = this.d;
    if (u.specReplicasSum(olds) === 0) return false;
    const allPods = u.specReplicasSum(all);
    const minAvailable = u.replicasOf(d) - u.maxUnavailable(d);
    const newUnavailable = u.replicasOf(newRS) - (newRS?.status?.availableReplicas ?? 0);
    const maxScaledDown = allPods - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    const cleaned = await this.cleanupUnhealthyReplicas(olds, maxScaledDown);
    const fresh = this.refresh(newRS, olds);
    const allNow = [...fresh.olds, ...(fresh.newRS ? [fresh.newRS] : [])];
    const scaledDown = await this.scaleDownOldForRollingUpdate(allNow, u.activeSets(fresh.olds));
    return cleaned + scaledDown > 0;
  }

  /** Scales down old sets' unavailable pods first, oldest sets first. */
  private async cleanupUnhealthyReplicas(olds: Obj[], maxCleanup: number): Promise<number> {
    let total = 0;
    for (const rs of [...olds].sort(u.byCreation)) {
      if (total >= maxCleanup) break;
      const r = u.replicasOf(rs);
      const available = rs.status?.availableReplicas ?? 0;
      if (r === 0 || r === available) continue;
      const down = Math.min(maxCleanup - total, r - available);
      const size = r - down;
      if (size > r)
        throw new Error(
          `when cleaning up unhealthy replicas, got invalid request to scale down ${rs.metadata.name} ${r} -> ${size}`,
        );
      await this.scaleReplicaSet(rs, size, 'down');
      total += down;
    }
    return total;
  }

  private async scaleDownOldForRollingUpdate(all: Obj[], olds: Obj[]): Promise<number> {
    const d = this.d;
    const minAvailable = u.replicasOf(d) - u.maxUnavailable(d);
    const available = u.availableReplicasSum(all);
    if (available <= minAvailable) return 0;
    const totalDown = available - minAvailable;
    let done = 0;
    for (const rs of [...olds].sort(u.byCreation)) {
      if (done >= totalDown) break;
      const r = u.replicasOf(rs);
      if (r === 0) continue;
      const down = Math.min(r, totalDown - done);
      await this.scaleReplicaSet(rs, r - down, 'down');
      done += down;
    }
    return done;
  }

  // ---- Recreate --------------------------------------------------------------------

  async rolloutRecreate(podMap: Map<string, Obj[]>): Promise<void> {
    let { newRS, olds } = await this.allAndSyncRevision(false);
    const all = () => [...olds, ...(newRS ? [newRS] : [])];
    let scaledDown = false;
    for (const rs of u.activeSets(olds)) if (await this.scaleIfNeeded(rs, 0)) scaledDown = true;
    ({ newRS, olds } = this.refresh(newRS, olds));
    if (scaledDown) {
      await this.syncRolloutStatus(all(), newRS);
      return;
    }
    if (this.oldPodsRunning(newRS, olds, podMap)) {
      await this.syncRolloutStatus(all(), newRS);
      return;
    }
    if (!newRS) ({ newRS, olds } = await this.allAndSyncRevision(true));
    await this.scaleIfNeeded(newRS!, u.replicasOf(this.d));
    ({ newRS, olds } = this.refresh(newRS, olds));
    if (u.deploymentComplete(this.d, this.d.status ?? {})) await this.cleanup(olds);
    ({ newRS, olds } = this.refresh(newRS, olds));
    await this.syncRolloutStatus(all(), newRS);
  }

  private oldPodsRunning(newRS: Obj | undefined, olds: Obj[], podMap: Map<string, Obj[]>): boolean {
    if (u.statusReplicasSum(olds) > 0) return true;
    for (const [uid, pods] of podMap) {
      if (newRS && newRS.metadata.uid === uid) continue;
      for (const p of pods) {
        const phase = p.status?.phase;
        if (phase === 'Failed' || phase === 'Succeeded') continue;
        return true;
      }
    }
    return false;
  }

  // ---- history ---------------------------------------------------------------------

  /** cleanupDeployment: deletes the oldest idle sets beyond revisionHistoryLimit. */
  private async cleanup(olds: Obj[]): Promise<void> {
    const d = this.d;
    if (!u.hasRevisionHistoryLimit(d)) return;
    const cleanable = olds.filter((rs) => !rs.metadata.deletionTimestamp);
    const diff = cleanable.length - d.spec.revisionHistoryLimit;
    if (diff <= 0) return;
    cleanable.sort(u.byRevision);
    for (let i = 0; i < diff; i++) {
      const rs = cleanable[i];
      if (
        (rs.status?.replicas ?? 0) !== 0 ||
        u.replicasOf(rs) !== 0 ||
        (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0) ||
        rs.metadata.deletionTimestamp
      )
        continue;
      this.c.logger().v(2)?.info('deleting old replica set', { rs: rs.metadata.name });
      try {
        await this.c.clients.rs.namespace(this.ns).delete(rs.metadata.name!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

export const deploymentController: ControllerDescriptor = {
  name: 'deployment',
  start(ctx) {
    void new DeploymentController(ctx).run();
  },
};

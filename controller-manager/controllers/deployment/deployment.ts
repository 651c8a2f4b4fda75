// The Deployment controller (pkg/controller/deployment): one ReplicaSet per pod
// template (named <deployment>-<pod-template-hash>), rolled out by RollingUpdate
// (maxSurge / maxUnavailable) or Recreate, proportional scaling of all sets
// while a rollout is in progress, revisions (and rollbacks, by template),
// history cleanup, pause, and the Progressing / Available conditions with the
// status fields `kubectl rollout status` reads.
//
// This file watches and dispatches; one sync's steps live beside it: sync.ts
// (the sync's state and its ReplicaSet writes), revisions.ts, scaling.ts,
// rolling.ts, recreate.ts and status.ts.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import type { ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import type { LabelSelector } from '../../../shared/api/labels';
import { QueueController, getLatest, intOption, keyOf, rfc3339, unwrap, type Obj } from '../util/base';
import {
  claimObjects,
  getControllerOf,
  resolveControllerRef,
  selectingControllers,
  selectorOf,
} from '../util/controller-ref';
import {
  CONTROLLER_UID_INDEX,
  claimCandidates,
  informerWithOwnerIndex,
  podInformer,
} from '../util/informers';
import { updateStatus } from '../util/status';
import { APPS_V1, DeploymentSync } from './sync';
import { rolloutRecreate } from './recreate';
import { rolloutRolling } from './rolling';
import { isScalingEvent, scaleSync } from './scaling';
import { checkPausedConditions, syncStatusOnly } from './status';
import { jsonClone } from '../../../shared/api/json-value';

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
    const d = jsonClone(cached);
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
    const sets = await claimObjects(claimCandidates(this.rsInformer, d), {
      owner: d,
      apiVersion: APPS_V1,
      kind: 'Deployment',
      matches: (rs) => sel.matches(rs.metadata.labels),
      client: this.rsClient,
      fresh: () => getLatest(this.dClient, d),
    });
    const s = new DeploymentSync(
      this,
      d,
      sets.map((x) => jsonClone(x)),
    );
    if (d.metadata.deletionTimestamp) {
      await syncStatusOnly(s);
      return;
    }
    await checkPausedConditions(s);
    if (d.spec?.paused) {
      await scaleSync(s);
      return;
    }
    if (await isScalingEvent(s)) {
      await scaleSync(s);
      return;
    }
    if (d.spec?.strategy?.type === 'Recreate') await rolloutRecreate(s, this.podsByReplicaSet(d, sel, sets));
    else await rolloutRolling(s);
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

  // ---- what DeploymentSync uses -------------------------------------------------

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

export const deploymentController: ControllerDescriptor = {
  name: 'deployment',
  start(ctx) {
    void new DeploymentController(ctx).run();
  },
};

// The disruption controller (pkg/controller/disruption): PodDisruptionBudget
// status — expected pods (from the scale of the pods' controllers, or the pod
// count for an integer minAvailable), desired and current healthy pods, pods
// evicted but not yet deleted (status.disruptedPods, expected gone within 2
// minutes), disruptionsAllowed and the DisruptionAllowed condition that the
// apiserver's pods/eviction reads.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import type { ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import {
  QueueController,
  errMessage,
  intOption,
  keyOf,
  parseTime,
  rfc3339,
  splitKey,
  unwrap,
  type Obj,
} from '../util/base';
import { getControllerOf, selectorOf } from '../util/controller-ref';
import { podInformer } from '../util/informers';
import { isPodReady } from '../util/pod';
import { isPercent, scaledValue } from '../util/intstr';
import { updateStatus } from '../util/status';
import { jsonClone } from '../../../shared/api/json-value';

/** DeletionTimeout: an evicted pod not deleted within this is counted again. */
export const DELETION_TIMEOUT_MS = 2 * 60_000;

class NoControllerError extends Error {}

export class DisruptionController extends QueueController {
  private readonly pdbs: SharedIndexInformer<Obj>;
  private readonly pods: SharedIndexInformer<Obj>;
  private readonly rs: SharedIndexInformer<Obj>;
  private readonly deployments: SharedIndexInformer<Obj>;
  private readonly rcs: SharedIndexInformer<Obj>;
  private readonly sets: SharedIndexInformer<Obj>;
  private readonly client: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentDisruptionSyncs', 1)) {
    super(ctx, { name: 'disruption', workers });
    this.pdbs = ctx.informers.forResource<Obj>('poddisruptionbudgets.policy');
    this.pods = podInformer(ctx);
    this.rs = ctx.informers.forResource<Obj>('replicasets.apps');
    this.deployments = ctx.informers.forResource<Obj>('deployments.apps');
    this.rcs = ctx.informers.forResource<Obj>('replicationcontrollers');
    this.sets = ctx.informers.forResource<Obj>('statefulsets.apps');
    this.client = ctx.client.resource<Obj>('poddisruptionbudgets.policy');
    this.recorder = ctx.recorder('controllermanager');
    this.waitFor(this.pdbs, this.pods, this.rs, this.deployments, this.rcs, this.sets);
    this.pdbs.addEventHandler({
      onAdd: (p) => this.enqueue(keyOf(p)),
      onUpdate: (_o, p) => this.enqueue(keyOf(p)),
    });
    const podEvent = (pod: Obj) => {
      for (const pdb of this.pdbs.lister().namespace(pod.metadata.namespace!).list()) {
        const sel = selectorOf(pdb);
        if (sel && sel.matches(pod.metadata.labels)) this.enqueue(keyOf(pdb));
      }
    };
    this.pods.addEventHandler({
      onAdd: podEvent,
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        podEvent(cur);
        if (JSON.stringify(old.metadata.labels) !== JSON.stringify(cur.metadata.labels)) podEvent(old);
      },
      onDelete: (p) => podEvent(unwrap(p)),
    });
    // Scale changes move expectedPods.
    const scaleEvent = (o: Obj) => {
      for (const pdb of this.pdbs.lister().namespace(o.metadata.namespace!).list()) this.enqueue(keyOf(pdb));
    };
    for (const inf of [this.deployments, this.sets, this.rcs])
      inf.addEventHandler({
        onUpdate: (old, cur) => {
          if (old.spec?.replicas !== cur.spec?.replicas) scaleEvent(cur);
        },
      });
  }

  /** getExpectedScale: the summed scale of the pods' controllers. */
  private expectedScale(pods: Obj[]): { expected: number; unmanaged: string[] } {
    const seen = new Set<string>();
    let expected = 0;
    const unmanaged: string[] = [];
    for (const pod of pods) {
      const ref = getControllerOf(pod);
      if (!ref) {
        unmanaged.push(pod.metadata.name!);
        continue;
      }
      if (seen.has(ref.uid)) continue;
      const ns = pod.metadata.namespace!;
      const found = this.scaleOf(ns, ref.kind, ref.name, ref.uid);
      if (!found) throw new NoControllerError(`found no controllers for pod "${pod.metadata.name}"`);
      if (seen.has(found.uid)) continue;
      seen.add(ref.uid);
      seen.add(found.uid);
      expected += found.scale;
    }
    return { expected, unmanaged };
  }

  private scaleOf(
    ns: string,
    kind: string,
    name: string,
    uid: string,
  ): { uid: string; scale: number } | undefined {
    const get = (inf: SharedIndexInformer<Obj>) => {
      const o = inf.indexer.getByKey(`${ns}/${name}`);
      return o && o.metadata.uid === uid ? o : undefined;
    };
    if (kind === 'ReplicaSet') {
      const rs = get(this.rs);
      if (!rs) return undefined;
      const owner = getControllerOf(rs);
      if (owner?.kind === 'Deployment') {
        const d = this.deployments.indexer.getByKey(`${ns}/${owner.name}`);
        if (d && d.metadata.uid === owner.uid) return { uid: d.metadata.uid!, scale: d.spec?.replicas ?? 1 };
        return undefined;
      }
      return { uid, scale: rs.spec?.replicas ?? 1 };
    }
    const inf =
      kind === 'ReplicationController'
        ? this.rcs
        : kind === 'StatefulSet'
          ? this.sets
          : kind === 'Deployment'
            ? this.deployments
            : undefined;
    if (!inf) return undefined;
    const o = get(inf);
    return o ? { uid, scale: o.spec?.replicas ?? 1 } : undefined;
  }

  protected async sync(key: string): Promise<void> {
    const cached = this.pdbs.indexer.getByKey(key);
    if (!cached) return;
    const pdb = jsonClone(cached);
    const [ns] = splitKey(key);
    const sel = selectorOf(pdb);
    // policy/v1: an unset selector selects no pods, an empty one all pods of the namespace.
    const pods = sel
      ? this.pods
          .lister()
          .namespace(ns)
          .list()
          .filter((p) => sel.matches(p.metadata.labels))
      : [];
    if (!pods.length) this.recorder.event(pdb, 'Normal', 'NoPods', 'Sync', 'No matching pods found');
    let expected: number;
    let desired: number;
    try {
      ({ expected, desired } = this.expectedPodCount(pdb, pods));
    } catch (err) {
      this.recorder.event(
        pdb,
        'Warning',
        'CalculateExpectedPodCountFailed',
        'Sync',
        `Failed to calculate the number of expected pods: ${errMessage(err)}`,
      );
      await this.failSafe(cached, errMessage(err));
      if (err instanceof NoControllerError) return;
      throw err;
    }
    const now = this.ctx.now();
    const { disrupted, recheck } = this.disruptedPods(pdb, pods, now);
    let healthy = 0;
    for (const p of pods) {
      if (p.metadata.deletionTimestamp) continue;
      const t = disrupted[p.metadata.name!];
      if (t && (parseTime(t) ?? 0) + DELETION_TIMEOUT_MS > now) continue;
      if (isPodReady(p)) healthy++;
    }
    let allowed = healthy - desired;
    if (expected <= 0 || allowed <= 0) allowed = 0;
    const status: any = {
      ...(pdb.status ?? {}),
      currentHealthy: healthy,
      desiredHealthy: desired,
      expectedPods: expected,
      disruptionsAllowed: allowed,
      observedGeneration: pdb.metadata.generation,
    };
    if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
    else delete status.disruptedPods;
    this.setAllowedCondition(
      status,
      allowed > 0 ? 'True' : 'False',
      allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
      '',
      now,
    );
    await updateStatus(this.client, cached, status, { retryOnConflict: true });
    if (recheck !== undefined) this.enqueueAfter(key, Math.max(0, recheck - now) + 10);
  }

  private expectedPodCount(pdb: Obj, pods: Obj[]): { expected: number; desired: number } {
    const maxUnavailable = pdb.spec?.maxUnavailable;
    const minAvailable = pdb.spec?.minAvailable;
    let expected = 0;
    let desired = 0;
    let unmanaged: string[] = [];
    if (maxUnavailable !== undefined && maxUnavailable !== null) {
      ({ expected, unmanaged } = this.expectedScale(pods));
      desired = Math.max(0, expected - scaledValue(maxUnavailable, expected, true));
    } else if (minAvailable !== undefined && minAvailable !== null) {
      if (!isPercent(minAvailable) && typeof minAvailable === 'number') {
        desired = minAvailable;
        expected = pods.length;
      } else {
        ({ expected, unmanaged } = this.expectedScale(pods));
        desired = scaledValue(minAvailable, expected, true);
      }
    }
    if (unmanaged.length) {
      const sel = JSON.stringify(pdb.spec?.selector ?? {});
      this.recorder.event(
        pdb,
        'Normal',
        'UnmanagedPods',
        'Sync',
        `Pods selected by this PodDisruptionBudget (selector: ${sel}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
      );
    }
    return { expected, desired };
  }

  /** buildDisruptedPodMap: evicted pods still expected to go, and when to look again. */
  private disruptedPods(
    pdb: Obj,
    pods: Obj[],
    now: number,
  ): { disrupted: Record<string, string>; recheck?: number } {
    const known: Record<string, string> = pdb.status?.disruptedPods ?? {};
    const disrupted: Record<string, string> = {};
    let recheck: number | undefined;
    for (const p of pods) {
      if (p.metadata.deletionTimestamp) continue;
      const t = known[p.metadata.name!];
      if (!t) continue;
      const expectedDeletion = (parseTime(t) ?? 0) + DELETION_TIMEOUT_MS;
      if (expectedDeletion < now) {
        this.recorder.event(
          p,
          'Warning',
          'NotDeleted',
          'Sync',
          `Pod was expected by PDB ${pdb.metadata.namespace}/${pdb.metadata.name} to be deleted but it wasn't`,
        );
        continue;
      }
      if (recheck === undefined || expectedDeletion < recheck) recheck = expectedDeletion;
      disrupted[p.metadata.name!] = t;
    }
    return { disrupted, recheck };
  }

  /** meta.SetStatusCondition of DisruptionAllowed. */
  private setAllowedCondition(
    status: any,
    value: 'True' | 'False',
    reason: string,
    message: string,
    now: number,
  ): void {
    const conditions: any[] = status.conditions ?? [];
    const cur = conditions.find((c) => c.type === 'DisruptionAllowed');
    const cond = {
      type: 'DisruptionAllowed',
      status: value,
      observedGeneration: status.observedGeneration,
      lastTransitionTime: cur && cur.status === value ? cur.lastTransitionTime : rfc3339(now),
      reason,
      message,
    };
    status.conditions = [...conditions.filter((c) => c.type !== 'DisruptionAllowed'), cond];
  }

  /** failSafe: no disruptions while the status cannot be computed. */
  private async failSafe(pdb: Obj, message: string): Promise<void> {
    const status: any = { ...(jsonClone(pdb.status) ?? {}), disruptionsAllowed: 0 };
    this.setAllowedCondition(status, 'False', 'SyncFailed', message, this.ctx.now());
    await updateStatus(this.client, pdb, status);
  }
}

export const disruptionController: ControllerDescriptor = {
  name: 'disruption',
  start(ctx) {
    void new DisruptionController(ctx).run();
  },
};

// The StatefulSet controller (pkg/controller/statefulset): pods with stable
// identities <set>-<ordinal> (hostname, subdomain, pod-name and pod-index
// labels, one PersistentVolumeClaim per volumeClaimTemplate: claims.ts), created in
// ordinal order and each waited for when podManagementPolicy is OrderedReady
// (all at once with Parallel), removed from the highest ordinal down, and
// updated through ControllerRevisions: RollingUpdate replaces pods from the
// highest ordinal down to the partition, OnDelete only when pods are deleted.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isAlreadyExists, isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { QueueController, errMessage, getLatest, intOption, keyOf, unwrap, type Obj } from '../util/base';
import {
  claimObjects,
  controllerRef,
  getControllerOf,
  resolveControllerRef,
  selectingControllers,
  selectorOf,
} from '../util/controller-ref';
import { claimCandidates, informerWithOwnerIndex, podInformer } from '../util/informers';
import { isPodAvailable, isPodReady } from '../util/pod';
import { updateStatus } from '../util/status';
import { CONTROLLER_REVISION_HASH, applyRevision, ensureRevision, sortRevisions } from '../util/history';
import { jsonClone } from '../../../shared/api/json-value';
import { StatefulSetClaims, claimName } from './claims';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

const ORDINAL = /^(.*)-([0-9]+)$/;

/** getParentNameAndOrdinal. */
export function parentAndOrdinal(pod: Obj): { parent: string; ordinal: number } | undefined {
  const m = ORDINAL.exec(pod.metadata.name ?? '');
  if (!m) return undefined;
  return { parent: m[1], ordinal: Number(m[2]) };
}

const isMemberOf = (set: Obj, pod: Obj) => parentAndOrdinal(pod)?.parent === set.metadata.name;
const isTerminating = (p: Obj) => !!p.metadata.deletionTimestamp;
const isFailed = (p: Obj) => p.status?.phase === 'Failed';
const isSucceeded = (p: Obj) => p.status?.phase === 'Succeeded';
const isRunningAndReady = (p: Obj) => p.status?.phase === 'Running' && isPodReady(p);
const revisionOfPod = (p: Obj) => p.metadata.labels?.[CONTROLLER_REVISION_HASH] ?? '';

function startOrdinal(set: Obj): number {
  return set.spec?.ordinals?.start ?? 0;
}

export class StatefulSetController extends QueueController {
  private readonly setInformer: SharedIndexInformer<Obj>;
  private readonly podInformer: SharedIndexInformer<Obj>;
  private readonly revInformer: SharedIndexInformer<Obj>;
  private readonly pvcInformer: SharedIndexInformer<Obj>;
  private readonly setClient: ResourceClient<Obj>;
  private readonly podClient: ResourceClient<Obj>;
  private readonly revClient: ResourceClient<Obj>;
  private readonly claims: StatefulSetClaims;
  private readonly recorder: EventRecorderLike;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentStatefulsetSyncs', 5)) {
    super(ctx, { name: 'statefulset', workers });
    this.setInformer = ctx.informers.forResource<Obj>('statefulsets.apps');
    this.podInformer = podInformer(ctx);
    this.revInformer = informerWithOwnerIndex(ctx, 'controllerrevisions.apps');
    this.pvcInformer = ctx.informers.forResource<Obj>('persistentvolumeclaims');
    this.setClient = ctx.client.resource<Obj>('statefulsets.apps');
    this.podClient = ctx.client.resource<Obj>('pods');
    this.revClient = ctx.client.resource<Obj>('controllerrevisions.apps');
    this.recorder = ctx.recorder('statefulset-controller');
    this.claims = new StatefulSetClaims(
      this.pvcInformer,
      ctx.client.resource<Obj>('persistentvolumeclaims'),
      this.recorder,
    );
    this.waitFor(this.setInformer, this.podInformer, this.revInformer, this.pvcInformer);

    this.setInformer.addEventHandler({
      onAdd: (s) => this.enqueue(keyOf(s)),
      onUpdate: (_o, s) => this.enqueue(keyOf(s)),
      onDelete: (s) => this.enqueue(keyOf(unwrap(s))),
    });
    const podEvent = (pod: Obj) => {
      if (getControllerOf(pod)) {
        const set = resolveControllerRef(this.setInformer, 'StatefulSet', pod);
        if (set) this.enqueue(keyOf(set));
        return;
      }
      for (const set of selectingControllers(this.setInformer, pod)) this.enqueue(keyOf(set));
    };
    this.podInformer.addEventHandler({
      onAdd: podEvent,
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (getControllerOf(old)?.uid !== getControllerOf(cur)?.uid) podEvent(old);
        podEvent(cur);
        // Wake up after minReadySeconds when a pod became ready.
        const ref = getControllerOf(cur);
        if (ref?.kind === 'StatefulSet' && !isPodReady(old) && isPodReady(cur)) {
          const set = this.setInformer.indexer.getByKey(`${cur.metadata.namespace}/${ref.name}`);
          const min = set?.spec?.minReadySeconds ?? 0;
          if (set && min > 0) this.enqueueAfter(keyOf(set), min * 1000 + 100);
        }
      },
      onDelete: (obj) => podEvent(unwrap(obj)),
    });
  }

  protected async sync(key: string): Promise<void> {
    const cached = this.setInformer.indexer.getByKey(key);
    if (!cached) return;
    const set = jsonClone(cached);
    const sel = selectorOf(set);
    if (!sel || sel.empty) {
      this.recorder.event(set, 'Warning', 'SelectorParsingFailed', 'Sync', 'invalid or empty selector');
      return;
    }
    const fresh = () => getLatest(this.setClient, set);
    const revisions = await claimObjects(claimCandidates(this.revInformer, set), {
      owner: set,
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      matches: (r) => sel.matches(r.metadata.labels),
      client: this.revClient,
      fresh,
    });
    const pods = await claimObjects(claimCandidates(this.podInformer, set), {
      owner: set,
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      // Only pods named like the set's members are adopted (isMemberOf).
      matches: (p) => sel.matches(p.metadata.labels) && isMemberOf(set, p),
      client: this.podClient,
      fresh,
    });
    if (set.metadata.deletionTimestamp) return;
    await this.updateStatefulSet(set, pods, revisions);
  }

  private async updateStatefulSet(set: Obj, pods: Obj[], revisions: Obj[]): Promise<void> {
    const ns = set.metadata.namespace!;
    const ref = controllerRef(set, 'apps/v1', 'StatefulSet');
    const sorted = sortRevisions(revisions);
    const ensured = await ensureRevision(this.revClient, set, ref, sorted, set.status?.collisionCount ?? 0);
    const updateRevision = ensured.revision;
    const allRevisions = ensured.created
      ? [...sorted, updateRevision]
      : sorted.map((r) => (r.metadata.name === updateRevision.metadata.name ? updateRevision : r));
    let currentRevision =
      allRevisions.find((r) => r.metadata.name === set.status?.currentRevision) ?? updateRevision;
    const currentSet = applyRevision(set, currentRevision);
    const updateSet = applyRevision(set, updateRevision);

    const now = this.ctx.now();
    const minReady = set.spec?.minReadySeconds ?? 0;
    const status: any = {
      ...(set.status ?? {}),
      observedGeneration: set.metadata.generation,
      currentRevision: currentRevision.metadata.name,
      updateRevision: updateRevision.metadata.name,
      collisionCount: ensured.collisionCount,
      replicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      currentReplicas: 0,
      updatedReplicas: 0,
    };
    const count = (p: Obj) => {
      status.replicas++;
      if (isRunningAndReady(p)) {
        status.readyReplicas++;
        if (isPodAvailable(p, minReady, now)) status.availableReplicas++;
      }
      if (!isTerminating(p)) {
        if (revisionOfPod(p) === currentRevision.metadata.name) status.currentReplicas++;
        if (revisionOfPod(p) === updateRevision.metadata.name) status.updatedReplicas++;
      }
    };
    for (const p of pods) count(p);

    const replicaCount: number = set.spec?.replicas ?? 1;
    const start = startOrdinal(set);
    const end = start + replicaCount;
    const replicas: (Obj | undefined)[] = new Array(replicaCount).fill(undefined);
    const condemned: Obj[] = [];
    for (const p of pods) {
      const ord = parentAndOrdinal(p)!.ordinal;
      if (ord >= start && ord < end) replicas[ord - start] = p;
      else condemned.push(p);
    }
    condemned.sort((a, b) => parentAndOrdinal(b)!.ordinal - parentAndOrdinal(a)!.ordinal);
    const monotonic = (set.spec?.podManagementPolicy ?? 'OrderedReady') !== 'Parallel';
    const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
    const isRolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';

    /** newVersionedStatefulSetPod: ordinals below the partition keep the current revision. */
    const podFor = (ordinal: number): Obj => {
      const useCurrent =
        (isRolling &&
          !set.spec?.updateStrategy?.rollingUpdate &&
          ordinal - start < (set.status?.currentReplicas ?? 0)) ||
        (isRolling && !!set.spec?.updateStrategy?.rollingUpdate && ordinal < partition);
      const [src, rev] = useCurrent ? [currentSet, currentRevision] : [updateSet, updateRevision];
      return this.newPod(src, ordinal, rev.metadata.name!);
    };

    const done = async () => {
      // completeRollingUpdate
      if (
        isRolling &&
        status.updatedReplicas === status.replicas &&
        status.readyReplicas === status.replicas &&
        status.replicas === replicaCount
      ) {
        status.currentRevision = status.updateRevision;
        status.currentReplicas = status.updatedReplicas;
        currentRevision = updateRevision;
      }
      await updateStatus(this.setClient, set, status);
      await this.truncateHistory(set, pods, allRevisions, currentRevision, updateRevision);
    };

    // Replace failed pods and create missing ones, in ordinal order.
    let firstUnhealthy: Obj | undefined;
    for (let i = 0; i < replicaCount; i++) {
      let pod = replicas[i];
      const ordinal = start + i;
      if (pod && (isFailed(pod) || isSucceeded(pod)) && !isTerminating(pod)) {
        await this.deletePod(set, pod);
        if (monotonic) return done();
        pod = undefined;
      }
      if (!pod) {
        if (this.claims.isStale(set, ordinal)) {
          // Nothing else wakes the set when the old claim goes.
          this.enqueueAfter(keyOf(set), 1000);
          return done();
        }
        const fresh = podFor(ordinal);
        await this.claims.createMissing(set, ordinal);
        try {
          const created = await this.podClient.namespace(ns).create(fresh);
          this.recorder.event(
            set,
            'Normal',
            'SuccessfulCreate',
            'Create',
            `create Pod ${created.metadata.name} in StatefulSet ${set.metadata.name} successful`,
          );
          replicas[i] = created;
          count(created);
        } catch (err) {
          if (!isAlreadyExists(err)) {
            this.recorder.event(
              set,
              'Warning',
              'FailedCreate',
              'Create',
              `create Pod ${fresh.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
            );
            await done();
            throw err;
          }
        }
        if (monotonic) return done();
        continue;
      }
      if (isTerminating(pod)) {
        if (monotonic) return done();
        continue;
      }
      // A pending pod's claims are made again if they went (createMissingPersistentVolumeClaims).
      if (pod.status?.phase === 'Pending') await this.claims.createMissing(set, ordinal);
      await this.claims.updateOwners(set, pod, ordinal, false);
      const healthy = isRunningAndReady(pod) && isPodAvailable(pod, minReady, now);
      if (!healthy) {
        firstUnhealthy ??= pod;
        if (monotonic) return done();
      }
      // Keep the pod's identity (labels) right.
      const want = { [POD_NAME_LABEL]: pod.metadata.name!, [POD_INDEX_LABEL]: String(ordinal) };
      if (Object.entries(want).some(([k, v]) => pod!.metadata.labels?.[k] !== v)) {
        try {
          replicas[i] = await this.podClient
            .namespace(ns)
            .patch(pod.metadata.name!, { metadata: { labels: want } }, 'merge');
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }

    // Claims of condemned pods change owner first (whenScaled=Delete: the pod), so they go with it.
    for (const pod of condemned)
      if (!isTerminating(pod)) await this.claims.updateOwners(set, pod, parentAndOrdinal(pod)!.ordinal, true);
    // Scale down from the highest ordinal; in order, one at a time.
    for (const target of condemned) {
      if (isTerminating(target)) {
        if (monotonic) return done();
        continue;
      }
      // In order: an unhealthy pod other than the target blocks the scale down.
      const unhealthy = firstUnhealthy ?? condemned.find((p) => !isRunningAndReady(p));
      if (monotonic && unhealthy && unhealthy !== target) return done();
      await this.deletePod(set, target);
      if (monotonic) return done();
    }

    // RollingUpdate: replace pods of other revisions from the highest ordinal down to the partition.
    if (isRolling) {
      for (let i = replicaCount - 1; i >= Math.max(0, partition - start); i--) {
        const pod = replicas[i];
        if (!pod) continue;
        if (revisionOfPod(pod) !== updateRevision.metadata.name && !isTerminating(pod)) {
          await this.deletePod(set, pod);
          status.currentReplicas = Math.max(0, status.currentReplicas - 1);
          return done();
        }
        if (!isRunningAndReady(pod) || isTerminating(pod)) return done();
      }
    }
    return done();
  }

  private newPod(set: Obj, ordinal: number, revision: string): Obj {
    const name = `${set.metadata.name}-${ordinal}`;
    const template = jsonClone(set.spec?.template ?? {});
    const meta = template.metadata ?? {};
    const spec = template.spec ?? {};
    spec.hostname = name;
    if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
    const claims: Obj[] = set.spec?.volumeClaimTemplates ?? [];
    if (claims.length) {
      const volumes: any[] = (spec.volumes ?? []).filter(
        (v: any) => !claims.some((c) => c.metadata.name === v.name),
      );
      for (const c of claims)
        volumes.push({
          name: c.metadata.name,
          persistentVolumeClaim: { claimName: claimName(c, set, ordinal) },
        });
      spec.volumes = volumes;
    }
    const pod: Obj = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: set.metadata.namespace,
        labels: {
          ...(meta.labels ?? {}),
          [POD_NAME_LABEL]: name,
          [POD_INDEX_LABEL]: String(ordinal),
          [CONTROLLER_REVISION_HASH]: revision,
        },
        ownerReferences: [controllerRef(set, 'apps/v1', 'StatefulSet')],
      },
      spec,
    };
    if (meta.annotations && Object.keys(meta.annotations).length)
      pod.metadata.annotations = { ...meta.annotations };
    if (meta.finalizers?.length) pod.metadata.finalizers = [...meta.finalizers];
    return pod;
  }

  private async deletePod(set: Obj, pod: Obj): Promise<void> {
    try {
      await this.podClient.namespace(set.metadata.namespace!).delete(pod.metadata.name!);
    } catch (err) {
      if (isNotFound(err)) return;
      this.recorder.event(
        set,
        'Warning',
        'FailedDelete',
        'Delete',
        `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
      );
      throw err;
    }
    this.recorder.event(
      set,
      'Normal',
      'SuccessfulDelete',
      'Delete',
      `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
    );
  }

  /** truncateHistory: keeps live revisions and the newest revisionHistoryLimit others. */
  private async truncateHistory(
    set: Obj,
    pods: Obj[],
    revisions: Obj[],
    current: Obj,
    update: Obj,
  ): Promise<void> {
    const live = new Set<string>([current.metadata.name!, update.metadata.name!]);
    for (const p of pods) live.add(revisionOfPod(p));
    const history = sortRevisions(revisions).filter((r) => !live.has(r.metadata.name!));
    const limit = set.spec?.revisionHistoryLimit ?? 10;
    const excess = history.length - limit;
    for (let i = 0; i < excess; i++) {
      try {
        await this.revClient.namespace(set.metadata.namespace!).delete(history[i].metadata.name!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

export const statefulSetController: ControllerDescriptor = {
  name: 'statefulset',
  start(ctx) {
    void new StatefulSetController(ctx).run();
  },
};

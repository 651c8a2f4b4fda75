// The DaemonSet controller (pkg/controller/daemon): one pod per eligible node
// (template nodeName, nodeSelector, required node affinity, taints against the
// pod's tolerations plus the ones every daemon pod gets), each pinned to its
// node by a matchFields node affinity for the scheduler to bind; failed pods
// replaced; RollingUpdate by maxUnavailable or maxSurge over ControllerRevisions;
// status counts of scheduled, misscheduled, ready, updated and available pods.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { featureGates } from '../../../shared/options/feature-gates';
import {
  QueueController,
  clone,
  getLatest,
  intOption,
  keyOf,
  parseTime,
  slowStartBatch,
  splitKey,
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
import { informerWithOwnerIndex, podInformer } from '../util/informers';
import { PodControl, isPodAvailable, isPodReady } from '../util/pod';
import { updateStatus } from '../util/status';
import { scaledValue } from '../util/intstr';
import {
  CONTROLLER_REVISION_HASH,
  REVISION_HASH_LABEL,
  ensureRevision,
  sortRevisions,
} from '../util/history';
import { findUntoleratedTaint, podMatchesNodeSelectorAndAffinity } from '../util/scheduling';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  type Taint,
  type Toleration,
} from '../../../shared/api/taints';

export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';
const BURST_REPLICAS = 250;

/** The tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations). */
export function daemonPodTolerations(spec: any): Toleration[] {
  const out: Toleration[] = [
    { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_DISK_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_MEMORY_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_PID_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec?.hostNetwork)
    out.push({ key: TAINT_NETWORK_UNAVAILABLE, operator: 'Exists', effect: 'NoSchedule' });
  return out;
}

function withDaemonTolerations(spec: any): any {
  const tolerations: Toleration[] = [...(spec?.tolerations ?? [])];
  for (const t of daemonPodTolerations(spec)) {
    const i = tolerations.findIndex(
      (x) => x.key === t.key && x.effect === t.effect && (x.operator ?? 'Equal') === t.operator,
    );
    if (i >= 0) tolerations[i] = t;
    else tolerations.push(t);
  }
  return { ...spec, tolerations };
}

/** NodeShouldRunDaemonPod: should a daemon pod be started there, and may a running one stay. */
export function nodeShouldRunDaemonPod(
  node: Obj,
  ds: Obj,
): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = withDaemonTolerations(ds.spec?.template?.spec ?? {});
  if (spec.nodeName && spec.nodeName !== node.metadata.name)
    return { shouldRun: false, shouldContinueRunning: false };
  if (!podMatchesNodeSelectorAndAffinity(spec, node))
    return { shouldRun: false, shouldContinueRunning: false };
  const taints: Taint[] = node.spec?.taints ?? [];
  if (findUntoleratedTaint(taints, spec.tolerations, ['NoSchedule', 'NoExecute'])) {
    // Running daemon pods stay unless a NoExecute taint evicts them.
    return {
      shouldRun: false,
      shouldContinueRunning: !findUntoleratedTaint(taints, spec.tolerations, ['NoExecute']),
    };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/** ReplaceDaemonSetPodNodeNameNodeAffinity: require exactly this node. */
function pinToNode(affinity: any, nodeName: string): any {
  const selector = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
  };
  const a = clone(affinity ?? {});
  a.nodeAffinity = { ...(a.nodeAffinity ?? {}), requiredDuringSchedulingIgnoredDuringExecution: selector };
  return a;
}

/** GetTargetNodeName: spec.nodeName, or the node the affinity pins the pod to. */
export function targetNodeName(pod: Obj): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms)
    for (const f of t.matchFields ?? [])
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  return undefined;
}

function templateGeneration(ds: Obj): string | undefined {
  return ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
}

function isPodUpdated(pod: Obj, hash: string, generation: string | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  return (
    (!!hash && labels[CONTROLLER_REVISION_HASH] === hash) ||
    (!!generation && labels[TEMPLATE_GENERATION_LABEL] === generation)
  );
}

const byCreation = (a: Obj, b: Obj) =>
  (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0) ||
  ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1);

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
  private readonly podControl: PodControl;

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
    this.podControl = new PodControl(this.podClient, this.recorder);
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
          JSON.stringify(old.spec) !== JSON.stringify(cur.spec)
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
    const ds = clone(cached);
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
    const [ns] = splitKey(key);
    const fresh = () => getLatest(this.dsClient, ds);
    const nodes = this.nodeInformer.lister().list();
    const pods = await claimObjects(this.podInformer.lister().namespace(ns).list(), {
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
    const revisions = await claimObjects(this.revInformer.lister().namespace(ns).list(), {
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
    await this.manage(ds, nodes, byNode, hash);
    if (
      this.expectations.satisfied(key) &&
      (ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate'
    ) {
      await this.rollingUpdate(ds, nodes, byNode, hash);
    }
    await this.cleanupHistory(ds, pods, revisions, ensured.revision);
    await this.writeStatus(ds, nodes, byNode, hash);
  }

  private maxSurgeAndUnavailable(ds: Obj, nodes: Obj[]): { surge: number; unavailable: number } {
    let desired = 0;
    for (const n of nodes) if (nodeShouldRunDaemonPod(n, ds).shouldRun) desired++;
    const ru = ds.spec?.updateStrategy?.rollingUpdate ?? {};
    const unavailable0 = scaledValue(ru.maxUnavailable ?? 1, desired, true);
    const surge = featureGates.enabled('DaemonSetUpdateSurge')
      ? scaledValue(ru.maxSurge ?? 0, desired, true)
      : 0;
    const unavailable = surge === 0 && unavailable0 === 0 ? 1 : unavailable0;
    return { surge, unavailable };
  }

  private async manage(ds: Obj, nodes: Obj[], byNode: Map<string, Obj[]>, hash: string): Promise<void> {
    const { surge } = this.maxSurgeAndUnavailable(ds, nodes);
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
  private async syncNodes(ds: Obj, toDelete: Obj[], nodesNeeding: string[], hash: string): Promise<void> {
    const key = keyOf(ds);
    const create = nodesNeeding.slice(0, BURST_REPLICAS);
    const del = toDelete.slice(0, BURST_REPLICAS);
    if (!create.length && !del.length) return;
    this.expectations.expectDeletionsOf(key, del.map(keyOf), create.length);
    const errors: unknown[] = [];
    const template = clone(ds.spec.template);
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
        spec: { ...clone(template.spec), affinity: pinToNode(template.spec.affinity, nodeName) },
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

  /** findUpdatedPodsOnNode: at most one updated and one old pod (ok=false otherwise). */
  private podsOnNode(
    pods: Obj[],
    hash: string,
    gen: string | undefined,
  ): { newPod?: Obj; oldPod?: Obj; ok: boolean } {
    let newPod: Obj | undefined;
    let oldPod: Obj | undefined;
    for (const p of pods) {
      if (p.metadata.deletionTimestamp) continue;
      if (isPodUpdated(p, hash, gen)) {
        if (newPod) return { ok: false };
        newPod = p;
      } else {
        if (oldPod) return { ok: false };
        oldPod = p;
      }
    }
    return { newPod, oldPod, ok: true };
  }

  private async rollingUpdate(
    ds: Obj,
    nodes: Obj[],
    byNode: Map<string, Obj[]>,
    hash: string,
  ): Promise<void> {
    const { surge, unavailable } = this.maxSurgeAndUnavailable(ds, nodes);
    const now = this.ctx.now();
    const min = ds.spec?.minReadySeconds ?? 0;
    const gen = templateGeneration(ds);
    const available = (p: Obj) => isPodAvailable(p, min, now);
    if (surge === 0) {
      let numUnavailable = 0;
      const allowed: Obj[] = [];
      const candidates: Obj[] = [];
      for (const node of nodes) {
        const name = node.metadata.name!;
        if (!nodeShouldRunDaemonPod(node, ds).shouldRun && !byNode.has(name)) continue;
        const { newPod, oldPod, ok } = this.podsOnNode(byNode.get(name) ?? [], hash, gen);
        if (!ok) {
          numUnavailable++;
          continue;
        }
        if (!oldPod) {
          if (!newPod || !available(newPod)) numUnavailable++;
        } else if (newPod) {
          if (!available(newPod)) numUnavailable++;
        } else if (!available(oldPod)) allowed.push(oldPod);
        else if (numUnavailable >= unavailable) continue;
        else candidates.push(oldPod);
      }
      let remaining = Math.max(0, unavailable - numUnavailable);
      remaining = Math.min(remaining, candidates.length);
      await this.syncNodes(ds, [...allowed, ...candidates.slice(0, remaining)], [], hash);
      return;
    }
    let numSurge = 0;
    const allowedNew: string[] = [];
    const candidateNew: string[] = [];
    const oldToDelete: Obj[] = [];
    for (const node of nodes) {
      const name = node.metadata.name!;
      const { newPod, oldPod, ok } = this.podsOnNode(byNode.get(name) ?? [], hash, gen);
      if (!ok || !oldPod) continue;
      if (!newPod) {
        if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
        if (!available(oldPod)) allowedNew.push(name);
        else if (numSurge >= surge) continue;
        else candidateNew.push(name);
      } else {
        if (!available(newPod)) {
          numSurge++;
          continue;
        }
        oldToDelete.push(oldPod);
      }
    }
    const remaining = Math.min(Math.max(0, surge - numSurge), candidateNew.length);
    await this.syncNodes(ds, oldToDelete, [...allowedNew, ...candidateNew.slice(0, remaining)], hash);
  }

  private async cleanupHistory(ds: Obj, pods: Obj[], revisions: Obj[], current: Obj): Promise<void> {
    const live = new Set<string>([current.metadata.labels?.[REVISION_HASH_LABEL] ?? '']);
    for (const p of pods) live.add(p.metadata.labels?.[CONTROLLER_REVISION_HASH] ?? '');
    const history = sortRevisions(revisions).filter(
      (r) =>
        r.metadata.name !== current.metadata.name &&
        !live.has(r.metadata.labels?.[REVISION_HASH_LABEL] ?? ''),
    );
    const excess = history.length - (ds.spec?.revisionHistoryLimit ?? 10);
    for (let i = 0; i < excess; i++) {
      try {
        await this.revClient.namespace(ds.metadata.namespace!).delete(history[i].metadata.name!);
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  private async writeStatus(ds: Obj, nodes: Obj[], byNode: Map<string, Obj[]>, hash: string): Promise<void> {
    const now = this.ctx.now();
    const min = ds.spec?.minReadySeconds ?? 0;
    const gen = templateGeneration(ds);
    let desired = 0;
    let current = 0;
    let misscheduled = 0;
    let ready = 0;
    let available = 0;
    let updated = 0;
    for (const node of nodes) {
      const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
      const pods = byNode.get(node.metadata.name!) ?? [];
      const scheduled = pods.length > 0;
      if (shouldRun) {
        desired++;
        if (!scheduled) continue;
        current++;
        const pod = [...pods].sort(byCreation)[0];
        if (isPodReady(pod)) {
          ready++;
          if (isPodAvailable(pod, min, now)) available++;
        }
        if (isPodUpdated(pod, hash, gen)) updated++;
      } else if (scheduled) misscheduled++;
    }
    const status: any = {
      ...(ds.status ?? {}),
      desiredNumberScheduled: desired,
      currentNumberScheduled: current,
      numberMisscheduled: misscheduled,
      numberReady: ready,
      updatedNumberScheduled: updated,
      numberAvailable: available,
      numberUnavailable: desired - available,
      observedGeneration: ds.metadata.generation,
    };
    if (!status.numberAvailable) delete status.numberAvailable;
    if (!status.numberUnavailable) delete status.numberUnavailable;
    if (!status.updatedNumberScheduled) delete status.updatedNumberScheduled;
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

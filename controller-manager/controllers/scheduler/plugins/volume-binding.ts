// VolumeBinding: a pod's PersistentVolumeClaims decide where it may go.
// A bound claim's PV must admit the node (its nodeAffinity); an unbound
// WaitForFirstConsumer claim needs, on that node, an Available PV that fits
// (the PV binder's own matching) or a class whose provisioner can provision
// there (allowedTopologies); an unbound Immediate claim makes the pod
// unschedulable until the binder binds it. PreBind writes the chosen node as
// volume.kubernetes.io/selected-node on each WaitForFirstConsumer claim —
// the binder then binds a matching PV or has one provisioned — and waits until
// every claim is bound, as kube-scheduler does before it binds the pod.
import type { ResourceClient } from '../../../../shared/client';
import type { SharedIndexInformer } from '../../../../shared/informers';
import type { Obj } from '../../util/base';
import { isControlledBy } from '../../util/controller-ref';
import {
  ANN_BIND_COMPLETED,
  ANN_SELECTED_NODE,
  claimClass,
  hasAnnotation,
  podVolumeClaimName,
} from '../../util/volumes';
import { findBestMatchForClaim, nodeAffinityAdmits } from '../../persistentvolume/matching';
import type { NodeInfo } from '../cache';
import type { CycleState, Failure, Plugin } from '../framework';

const NAME = 'VolumeBinding';
/** bindTimeoutSeconds: how long PreBind waits for the claims to be bound. */
const BIND_TIMEOUT_MS = 600_000;
const POLL_MS = 100;
const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

export const UNBOUND_IMMEDIATE = 'pod has unbound immediate PersistentVolumeClaims';
const NODE_CONFLICT = 'node(s) had volume node affinity conflict';
const BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind";
const PV_NOT_EXIST = 'node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)';

export interface VolumeInformers {
  claims: SharedIndexInformer<Obj>;
  volumes: SharedIndexInformer<Obj>;
  classes: SharedIndexInformer<Obj>;
  claimClient: ResourceClient<Obj>;
}

interface PodVolumes {
  /** Bound claims' PVs (undefined: the PV does not exist). */
  bound: (Obj | undefined)[];
  /** Unbound WaitForFirstConsumer claims and their class. */
  delayed: { pvc: Obj; cls: Obj }[];
}

/** allowedTopologies: empty allows every node, else one term's every expression must hold. */
function topologyAllows(cls: Obj, node: Obj): boolean {
  const terms: any[] = cls.allowedTopologies ?? [];
  if (!terms.length) return true;
  const labels = node.metadata.labels ?? {};
  return terms.some((t) =>
    (t.matchLabelExpressions ?? []).every((e: any) => (e.values ?? []).includes(labels[e.key])),
  );
}

export function volumeBinding(v: VolumeInformers): Plugin {
  const sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });

  /** The binder bound the claim (volumeName and its bind-completed annotation). */
  const isBound = (pvc: Obj) => !!pvc.spec?.volumeName && hasAnnotation(pvc, ANN_BIND_COMPLETED);

  return {
    name: NAME,
    preFilter(s: CycleState) {
      const ns = s.pod.metadata.namespace!;
      const state: PodVolumes = { bound: [], delayed: [] };
      for (const vol of s.pod.spec?.volumes ?? []) {
        const name = podVolumeClaimName(s.pod, vol);
        if (!name) continue;
        const ephemeral = !!vol.ephemeral;
        const pvc = v.claims.indexer.getByKey(`${ns}/${name}`);
        if (!pvc)
          return ephemeral
            ? `waiting for ephemeral volume controller to create the persistentvolumeclaim "${name}"`
            : `persistentvolumeclaim "${name}" not found`;
        if (pvc.status?.phase === 'Lost')
          return `persistentvolumeclaim "${name}" bound to non-existent persistentvolume "${pvc.spec?.volumeName}"`;
        if (pvc.metadata.deletionTimestamp) return `persistentvolumeclaim "${name}" is being deleted`;
        if (ephemeral && !isControlledBy(pvc, s.pod))
          return `PVC ${ns}/${name} was not created for pod ${ns}/${s.pod.metadata.name} (pod is not owner)`;
        if (pvc.spec?.volumeName) {
          state.bound.push(v.volumes.indexer.getByKey(pvc.spec.volumeName));
          continue;
        }
        const clsName = claimClass(pvc);
        const cls = clsName ? v.classes.indexer.getByKey(clsName) : undefined;
        if (clsName && !cls) return `storageclass.storage.k8s.io "${clsName}" not found`;
        if (cls?.volumeBindingMode !== 'WaitForFirstConsumer') return UNBOUND_IMMEDIATE;
        state.delayed.push({ pvc, cls });
      }
      s.write(NAME, state.bound.length || state.delayed.length ? state : undefined);
      return undefined;
    },
    filter(s: CycleState, n: NodeInfo): Failure | undefined {
      const st = s.read<PodVolumes>(NAME);
      if (!st) return undefined;
      const reasons = new Set<string>();
      for (const pv of st.bound) {
        if (!pv) reasons.add(PV_NOT_EXIST);
        else if (!nodeAffinityAdmits(pv, n.node)) reasons.add(NODE_CONFLICT);
      }
      if (st.delayed.length) {
        // One PV serves one claim: those taken by this pod's earlier claims are out.
        let volumes = v.volumes.indexer.list();
        for (const { pvc, cls } of st.delayed) {
          const pv = findBestMatchForClaim(volumes, pvc, true, n.node);
          if (pv) volumes = volumes.filter((x) => x !== pv);
          else if (cls.provisioner === NO_PROVISIONER || !topologyAllows(cls, n.node))
            reasons.add(BIND_CONFLICT);
        }
      }
      return reasons.size ? { reasons: [...reasons], resolvable: false } : undefined;
    },
    async preBind(s: CycleState, node: string, signal: AbortSignal) {
      const st = s.read<PodVolumes>(NAME);
      if (!st?.delayed.length) return;
      const ns = s.pod.metadata.namespace!;
      for (const { pvc } of st.delayed)
        await v.claimClient
          .namespace(ns)
          .patch(pvc.metadata.name!, { metadata: { annotations: { [ANN_SELECTED_NODE]: node } } }, 'merge');
      const deadline = Date.now() + BIND_TIMEOUT_MS;
      for (const { pvc } of st.delayed) {
        let seen = false;
        for (;;) {
          signal.throwIfAborted();
          const cur = v.claims.indexer.getByKey(`${ns}/${pvc.metadata.name}`);
          if (!cur)
            throw Object.assign(new Error(`persistentvolumeclaim "${pvc.metadata.name}" not found`), {
              code: 404,
            });
          if (isBound(cur)) break;
          // The provisioner gave the node up (it could not provision there): schedule again.
          // (once the informer has shown the annotation this pod's cycle wrote).
          const selected = cur.metadata.annotations?.[ANN_SELECTED_NODE];
          if (selected === node) seen = true;
          else if (seen) throw new Error(`claim ${ns}/${pvc.metadata.name} was rescheduled`);
          if (Date.now() > deadline)
            throw new Error(`binding volumes: timed out waiting for claim ${ns}/${pvc.metadata.name}`);
          await sleep(POLL_MS, signal);
        }
      }
    },
  };
}

// A StatefulSet's PersistentVolumeClaims (stateful_set_utils.go): one per
// volumeClaimTemplate and ordinal, `<template>-<set>-<ordinal>`, created
// before the pod and never updated from the template, kept across scale down
// and up. persistentVolumeClaimRetentionPolicy works through controller owner
// references the garbage collector follows: whenDeleted=Delete makes the set
// the owner, whenScaled=Delete makes the pod of a condemned ordinal the owner
// (and only it, when both are Delete). A claim another controller controls
// loses our references and gets none.
import { isAlreadyExists, isNotFound, type ResourceClient } from '../../../shared/client';
import type { OwnerReference } from '../../../shared/client/types';
import type { SharedIndexInformer } from '../../../shared/informers';
import type { EventRecorderLike } from '../../controller';
import { errMessage, type Obj } from '../util/base';
import { controllerRef } from '../util/controller-ref';
import { jsonClone } from '../../../shared/api/json-value';

export const claimName = (t: Obj, set: Obj, ordinal: number) =>
  `${t.metadata.name}-${set.metadata.name}-${ordinal}`;

const SET_KIND = { group: 'apps', kind: 'StatefulSet' };
const POD_KIND = { group: '', kind: 'Pod' };

/** matchesRef: same name, group and kind (any version, any uid). */
function matchesRef(ref: OwnerReference, owner: Obj, gk: { group: string; kind: string }): boolean {
  const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
  return ref.name === owner.metadata.name && ref.kind === gk.kind && group === gk.group;
}

/**
 * The owner references the claim should have (updateClaimOwnerRefForSetAndPod), or undefined when
 * its current ones are to be left alone: a reference to an earlier set or pod of the same name
 * (hasStaleOwnerRef) belongs to the one that made it.
 */
export function desiredClaimOwners(
  claim: Obj,
  set: Obj,
  pod: Obj | undefined,
  scaledDown: boolean,
): OwnerReference[] | undefined {
  const refs = claim.metadata.ownerReferences ?? [];
  const stale = (owner: Obj, gk: typeof SET_KIND) =>
    refs.some((r) => matchesRef(r, owner, gk) && r.uid !== owner.metadata.uid);
  if (stale(set, SET_KIND) || (pod && stale(pod, POD_KIND))) return undefined;
  const ours = (r: OwnerReference) =>
    matchesRef(r, set, SET_KIND) || (pod !== undefined && matchesRef(r, pod, POD_KIND));
  const unexpectedController = refs.some((r) => r.controller && !ours(r));
  const out = refs.filter((r) => !ours(r));
  if (unexpectedController) return out;
  const policy = set.spec?.persistentVolumeClaimRetentionPolicy ?? {};
  const deleteWithSet = policy.whenDeleted === 'Delete';
  const deleteWhenScaled = policy.whenScaled === 'Delete';
  if (deleteWhenScaled && scaledDown) {
    // Without the pod (not made yet) there is nothing to own the claim.
    if (pod) out.push(controllerRef(pod, 'v1', 'Pod'));
  } else if (deleteWithSet) out.push(controllerRef(set, 'apps/v1', 'StatefulSet'));
  return out;
}

const sameRefs = (a: OwnerReference[] = [], b: OwnerReference[] = []) =>
  JSON.stringify(a) === JSON.stringify(b);

export class StatefulSetClaims {
  constructor(
    private readonly claims: SharedIndexInformer<Obj>,
    private readonly client: ResourceClient<Obj>,
    private readonly recorder: EventRecorderLike,
  ) {}

  /** createPersistentVolumeClaims: the ordinal's missing claims, with the set's labels and owners. */
  async createMissing(set: Obj, ordinal: number): Promise<void> {
    const ns = set.metadata.namespace!;
    for (const t of (set.spec?.volumeClaimTemplates ?? []) as Obj[]) {
      const name = claimName(t, set, ordinal);
      if (this.claims.indexer.getByKey(`${ns}/${name}`)) continue;
      const claim: Obj = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name,
          namespace: ns,
          labels: { ...(t.metadata.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
          ...(t.metadata.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
        },
        spec: jsonClone(t.spec ?? {}),
      };
      const owners = desiredClaimOwners(claim, set, undefined, false);
      if (owners?.length) claim.metadata.ownerReferences = owners;
      try {
        await this.client.namespace(ns).create(claim);
        this.recorder.event(
          set,
          'Normal',
          'SuccessfulCreate',
          'Create',
          `create Claim ${name} Pod ${set.metadata.name}-${ordinal} in StatefulSet ${set.metadata.name} success`,
        );
      } catch (err) {
        if (isAlreadyExists(err)) continue;
        this.recorder.event(
          set,
          'Warning',
          'FailedCreate',
          'Create',
          `create Claim ${name} for Pod ${set.metadata.name}-${ordinal} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
        );
        throw err;
      }
    }
  }

  /**
   * PodClaimIsStale: with whenScaled=Delete, a claim of the ordinal still owned by an earlier pod
   * of that name is on its way out (the garbage collector deletes it); the new pod must not take it.
   */
  isStale(set: Obj, ordinal: number): boolean {
    if (set.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled !== 'Delete') return false;
    const podName = `${set.metadata.name}-${ordinal}`;
    return ((set.spec?.volumeClaimTemplates ?? []) as Obj[]).some((t) => {
      const claim = this.claims.indexer.getByKey(`${set.metadata.namespace}/${claimName(t, set, ordinal)}`);
      return (claim?.metadata.ownerReferences ?? []).some((r) => r.kind === 'Pod' && r.name === podName);
    });
  }

  /** UpdatePodClaimForRetentionPolicy: the pod's claims get the owners the policy asks for. */
  async updateOwners(set: Obj, pod: Obj, ordinal: number, scaledDown: boolean): Promise<void> {
    const ns = set.metadata.namespace!;
    for (const t of (set.spec?.volumeClaimTemplates ?? []) as Obj[]) {
      const cached = this.claims.indexer.getByKey(`${ns}/${claimName(t, set, ordinal)}`);
      if (!cached) continue;
      const owners = desiredClaimOwners(cached, set, pod, scaledDown);
      if (!owners || sameRefs(owners, cached.metadata.ownerReferences)) continue;
      const claim = jsonClone(cached);
      claim.metadata.ownerReferences = owners;
      try {
        await this.client.namespace(ns).update(claim);
      } catch (err) {
        if (isNotFound(err)) continue;
        throw err;
      }
    }
  }
}

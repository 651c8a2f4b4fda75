// Owner references and client-go's ControllerRefManager: a controller claims
// the objects its selector matches — adopting orphans (after re-reading itself
// from the apiserver, so a controller being deleted adopts nothing) and
// releasing owned objects its selector no longer matches.
import type { OwnerReference, ResourceClient } from '../../../shared/client';
import { isInvalid, isNotFound } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { selectorFromObject, type LabelSelector } from '../../../shared/api/labels';
import type { Obj } from './base';

export function controllerRef(owner: Obj, apiVersion: string, kind: string): OwnerReference {
  return {
    apiVersion,
    kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The owner reference with controller=true, if any. */
export function getControllerOf(obj: Obj | undefined): OwnerReference | undefined {
  return obj?.metadata?.ownerReferences?.find((r) => r.controller === true);
}

export function isControlledBy(obj: Obj, owner: Obj): boolean {
  return getControllerOf(obj)?.uid === owner.metadata.uid;
}

/** resolveControllerRef: obj's controller of this kind in the owners' cache (the same uid), if any. */
export function resolveControllerRef(
  owners: SharedIndexInformer<Obj>,
  kind: string,
  obj: Obj,
): Obj | undefined {
  const ref = getControllerOf(obj);
  if (!ref || ref.kind !== kind) return undefined;
  const owner = owners.indexer.getByKey(`${obj.metadata.namespace}/${ref.name}`);
  return owner && owner.metadata.uid === ref.uid ? owner : undefined;
}

/** The controller's spec.selector, or null when it does not parse. */
export function selectorOf(owner: Obj): LabelSelector | null {
  try {
    return selectorFromObject(owner.spec?.selector);
  } catch {
    return null;
  }
}

/** The controllers of obj's namespace whose (non-empty) selector selects it: who may adopt an orphan. */
export function selectingControllers(
  owners: SharedIndexInformer<Obj>,
  obj: Obj,
  selector: (owner: Obj) => LabelSelector | null = selectorOf,
): Obj[] {
  return owners
    .lister()
    .namespace(obj.metadata.namespace!)
    .list()
    .filter((owner) => {
      const sel = selector(owner);
      return !!sel && !sel.empty && sel.matches(obj.metadata.labels);
    });
}

export interface ClaimContext<T extends Obj> {
  /** The controller (from the cache). */
  owner: Obj;
  apiVersion: string;
  kind: string;
  /** Does the controller's selector select obj? */
  matches(obj: T): boolean;
  /** The client of the claimed objects (pods, replicasets, controllerrevisions). */
  client: ResourceClient<T>;
  /** Re-reads the controller from the apiserver (RecheckDeletionTimestamp). */
  fresh(): Promise<Obj | undefined>;
}

/**
 * ClaimObjects: the objects this controller owns after adopting matching
 * orphans and releasing owned objects that no longer match. Objects another
 * controller owns are left alone.
 */
export async function claimObjects<T extends Obj>(objs: T[], c: ClaimContext<T>): Promise<T[]> {
  const claimed: T[] = [];
  const errors: unknown[] = [];
  let adoptCheck: Promise<void> | undefined;
  const canAdopt = () =>
    (adoptCheck ??= (async () => {
      const fresh = await c.fresh();
      if (!fresh) throw new Error(`${c.kind} ${c.owner.metadata.namespace}/${c.owner.metadata.name} is gone`);
      if (fresh.metadata.uid !== c.owner.metadata.uid)
        throw new Error(
          `original ${c.owner.metadata.namespace}/${c.owner.metadata.name} is gone: got uid ${fresh.metadata.uid}, wanted ${c.owner.metadata.uid}`,
        );
      if (fresh.metadata.deletionTimestamp)
        throw new Error(
          `${c.owner.metadata.namespace}/${c.owner.metadata.name} has just been deleted at ${fresh.metadata.deletionTimestamp}`,
        );
    })());
  const ownerDeleting = !!c.owner.metadata.deletionTimestamp;
  // One pass without promises: most objects are owned and selected, and a promise each for
  // tens of thousands of them was most of the claim's cost. Only adoptions and releases wait.
  const pending: Promise<void>[] = [];
  for (const obj of objs) {
    const ref = getControllerOf(obj);
    if (ref) {
      if (ref.uid !== c.owner.metadata.uid) continue;
      if (c.matches(obj)) {
        claimed.push(obj);
        continue;
      }
      // Owned but no longer selected: release, unless we are going away anyway.
      if (ownerDeleting) continue;
      pending.push(
        release(obj, c).catch((err) => {
          if (!isNotFound(err) && !isInvalid(err)) errors.push(err);
        }),
      );
      continue;
    }
    // An orphan: adopt it when selected.
    if (ownerDeleting || !c.matches(obj) || obj.metadata.deletionTimestamp) continue;
    pending.push(
      (async () => {
        try {
          await canAdopt();
          claimed.push(await adopt(obj, c));
        } catch (err) {
          if (!isNotFound(err)) errors.push(err);
        }
      })(),
    );
  }
  if (pending.length) await Promise.all(pending);
  if (errors.length) throw errors[0];
  return claimed;
}

async function adopt<T extends Obj>(obj: T, c: ClaimContext<T>): Promise<T> {
  const ref = controllerRef(c.owner, c.apiVersion, c.kind);
  const patch = { metadata: { ownerReferences: [ref], uid: obj.metadata.uid } };
  return c.client.namespace(obj.metadata.namespace!).patch(obj.metadata.name!, patch, 'strategic');
}

async function release<T extends Obj>(obj: T, c: ClaimContext<T>): Promise<void> {
  const patch = {
    metadata: { ownerReferences: [{ $patch: 'delete', uid: c.owner.metadata.uid }], uid: obj.metadata.uid },
  };
  await c.client.namespace(obj.metadata.namespace!).patch(obj.metadata.name!, patch, 'strategic');
}

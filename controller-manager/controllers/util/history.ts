// ControllerRevisions of StatefulSets and DaemonSets (pkg/controller/history):
// each revision stores the pod template as a patch, is named
// <owner>-<hash of the patch and collision count>, labelled with that hash, and
// numbered; an equal template reuses its revision (moved to the newest number).
import { isAlreadyExists, type OwnerReference, type ResourceClient } from '../../../shared/client';
import { type Obj } from './base';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';
import { canonicalJSON, Fnv32a, safeEncodeString } from './hash';
import { int64Of, int64Value } from '../../../shared/codec/json-int64';

export const REVISION_HASH_LABEL = 'controller.kubernetes.io/hash';
/** The pod label naming the revision (StatefulSet: the revision's name; DaemonSet: its hash). */
export const CONTROLLER_REVISION_HASH = 'controller-revision-hash';

/** The patch a revision stores: the whole template, replaced. */
export function templatePatch(template: any): any {
  return { spec: { template: { ...jsonClone(template ?? {}), $patch: 'replace' } } };
}

/** The template stored in a revision. */
export function templateOf(revision: Obj): any {
  const t = jsonClone(revision.data?.spec?.template ?? {});
  delete t.$patch;
  return t;
}

/** ControllerRevisionHash. */
export function revisionHash(data: unknown, collisionCount?: number | null): string {
  const h = new Fnv32a().write(Buffer.from(canonicalJSON(data)));
  if (collisionCount !== undefined && collisionCount !== null) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(collisionCount >>> 0);
    h.write(b);
  }
  return safeEncodeString(String(h.sum32()));
}

export function revisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}

/** NextRevision: past the highest (revisions are int64: bigints beyond 2^53). */
export function nextRevision(revisions: Obj[]): number | bigint {
  let max = 0n;
  for (const r of revisions) {
    const v = int64Of(r.revision);
    if (v > max) max = v;
  }
  return int64Value(max + 1n);
}

const compareInt64 = (a: unknown, b: unknown): number => {
  const x = int64Of(a);
  const y = int64Of(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

export function sortRevisions(revisions: Obj[]): Obj[] {
  return [...revisions].sort(
    (a, b) =>
      compareInt64(a.revision, b.revision) ||
      (Date.parse(a.metadata.creationTimestamp ?? '') || 0) -
        (Date.parse(b.metadata.creationTimestamp ?? '') || 0) ||
      ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1),
  );
}

export function newRevisionObject(
  owner: Obj,
  ref: OwnerReference,
  templateLabels: Record<string, string> | undefined,
  data: any,
  revision: number | bigint,
  collisionCount?: number | null,
): Obj {
  const hash = revisionHash(data, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(owner.metadata.name!, hash),
      namespace: owner.metadata.namespace,
      labels: { ...(templateLabels ?? {}), [REVISION_HASH_LABEL]: hash },
      ownerReferences: [ref],
    },
    data,
    revision,
  };
}

/**
 * The revision for the owner's current template: an equal existing one (moved
 * to the newest number when it is not the latest), or a new one. A name taken
 * by a different revision is a hash collision: collisionCount is raised and the
 * caller tries again.
 */
export async function ensureRevision(
  client: ResourceClient<Obj>,
  owner: Obj,
  ref: OwnerReference,
  revisions: Obj[],
  collisionCount: number,
): Promise<{ revision: Obj; collisionCount: number; created: boolean }> {
  const template = owner.spec?.template;
  const data = templatePatch(template);
  const sorted = sortRevisions(revisions);
  const next = nextRevision(sorted);
  const ns = owner.metadata.namespace!;
  const equal = sorted.filter((r) => jsonEqual(r.data, data));
  if (equal.length) {
    const latest = equal[equal.length - 1];
    if (latest === sorted[sorted.length - 1]) return { revision: latest, collisionCount, created: false };
    const moved = await client.namespace(ns).patch(latest.metadata.name!, { revision: next }, 'merge');
    return { revision: moved, collisionCount, created: false };
  }
  let count = collisionCount;
  for (let attempt = 0; attempt < 10; attempt++) {
    const obj = newRevisionObject(owner, ref, template?.metadata?.labels, data, next, count);
    try {
      const created = await client.namespace(ns).create(obj);
      return { revision: created, collisionCount: count, created: true };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await client.namespace(ns).get(obj.metadata.name!);
      if (jsonEqual(existing.data, data) && existing.metadata.ownerReferences?.some((r) => r.uid === ref.uid))
        return { revision: existing, collisionCount: count, created: false };
      count++;
    }
  }
  throw new Error(`could not create a revision of ${ns}/${owner.metadata.name}: too many hash collisions`);
}

/** Applies a revision's template to a copy of the owner (ApplyRevision). */
export function applyRevision(owner: Obj, revision: Obj): Obj {
  const copy = jsonClone(owner);
  copy.spec = { ...copy.spec, template: templateOf(revision) };
  return copy;
}

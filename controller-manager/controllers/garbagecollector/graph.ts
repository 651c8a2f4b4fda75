// The garbage collector's dependency graph (kube's GraphBuilder): a node per
// object uid seen by the metadata informers (or referenced as an owner before
// it was seen: a "virtual" node), edges from owners to dependents from
// metadata.ownerReferences. Informer events update the graph at once (one JS
// turn each, so no lock is needed) and put the nodes that need a decision
// into the attemptToDelete / attemptToOrphan queues.
import type { KubeObject, OwnerReference } from '../../../shared/client';
import type { RateLimitingQueue } from '../../../shared/informers';

export const FINALIZER_ORPHAN = 'orphan';
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** An object's coordinates as owner references name it (kube's objectReference). */
export interface Identity {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** "" for cluster-scoped objects (and for virtual owners until their scope is known). */
  namespace: string;
}

export function identityOf(obj: KubeObject): Identity {
  return {
    apiVersion: obj.apiVersion ?? '',
    kind: obj.kind ?? '',
    name: obj.metadata.name ?? '',
    uid: obj.metadata.uid ?? '',
    namespace: obj.metadata.namespace ?? '',
  };
}

/** "[apps/v1/ReplicaSet, namespace: ns, name: x, uid: y]", as kube prints an objectReference. */
export function identityString(i: Identity): string {
  return `[${i.apiVersion}/${i.kind}, namespace: ${i.namespace}, name: ${i.name}, uid: ${i.uid}]`;
}

const groupOf = (apiVersion: string) =>
  apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';

/** Same object coordinates (the version of the group is not significant). */
export function sameIdentity(a: Identity, b: Identity): boolean {
  return (
    a.uid === b.uid &&
    a.name === b.name &&
    a.kind === b.kind &&
    a.namespace === b.namespace &&
    groupOf(a.apiVersion) === groupOf(b.apiVersion)
  );
}

function refMatches(ref: OwnerReference, id: Identity): boolean {
  return (
    ref.uid === id.uid &&
    ref.name === id.name &&
    ref.kind === id.kind &&
    groupOf(ref.apiVersion) === groupOf(id.apiVersion)
  );
}

export function identityKey(i: Identity): string {
  return `${groupOf(i.apiVersion)}|${i.kind}|${i.namespace}|${i.name}|${i.uid}`;
}

export const beingDeleted = (o: KubeObject | undefined) => !!o?.metadata?.deletionTimestamp;
export const hasFinalizer = (o: KubeObject | undefined, f: string) => !!o?.metadata?.finalizers?.includes(f);

export class GCNode {
  readonly dependents = new Set<GCNode>();
  owners: OwnerReference[] = [];
  beingDeleted = false;
  deletingDependents = false;
  /** Seen through an informer (false for virtual nodes until then). */
  observed: boolean;

  constructor(
    public identity: Identity,
    readonly virtual: boolean,
  ) {
    this.observed = !virtual;
  }

  /** Dependents whose reference to this node has blockOwnerDeletion=true. */
  blockingDependents(): GCNode[] {
    const out: GCNode[] = [];
    for (const dep of this.dependents) {
      if (dep.owners.some((o) => o.uid === this.identity.uid && o.blockOwnerDeletion)) out.push(dep);
    }
    return out;
  }

  toString(): string {
    return identityString(this.identity);
  }
}

/** Owners that are verified absent (kube's ReferenceCache, LRU of 500). */
export class AbsentOwnerCache {
  private readonly keys = new Map<string, true>();
  constructor(private readonly max = 500) {}
  add(i: Identity): void {
    const k = identityKey(i);
    this.keys.delete(k);
    this.keys.set(k, true);
    if (this.keys.size > this.max) this.keys.delete(this.keys.keys().next().value!);
  }
  has(i: Identity): boolean {
    const k = identityKey(i);
    if (!this.keys.has(k)) return false;
    this.keys.delete(k);
    this.keys.set(k, true);
    return true;
  }
}

export interface GraphEvent {
  type: 'add' | 'update' | 'delete';
  identity: Identity;
  obj?: KubeObject;
  old?: KubeObject;
  /** A delete the collector concluded from a lookup, not one an informer saw. */
  virtual?: boolean;
}

function startsWaiting(old: KubeObject | undefined, obj: KubeObject | undefined, finalizer: string): boolean {
  if (!beingDeleted(obj) || !hasFinalizer(obj, finalizer)) return false;
  if (!old) return true;
  return !(beingDeleted(old) && hasFinalizer(old, finalizer));
}

/** Dependents whose reference to the owner matches the identity's coordinates, and those whose does not. */
export function partitionDependents(deps: Iterable<GCNode>, owner: Identity): [GCNode[], GCNode[]] {
  const matching: GCNode[] = [];
  const nonmatching: GCNode[] = [];
  const ownerNamespaced = owner.namespace !== '';
  for (const dep of deps) {
    let match = false;
    let mismatch = false;
    if (ownerNamespaced && owner.namespace !== dep.identity.namespace) mismatch = true;
    else {
      for (const ref of dep.owners) {
        if (ref.uid !== owner.uid) continue;
        if (refMatches(ref, owner)) match = true;
        else mismatch = true;
      }
    }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return [matching, nonmatching];
}

function compareIdentity(a: Identity, b: Identity): number {
  for (const k of ['namespace', 'name', 'apiVersion', 'kind', 'uid'] as const) {
    if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  }
  return 0;
}

/** Another identity the dependents use for an owner verified absent under `absent` (kube's getAlternateOwnerIdentity). */
export function alternateOwnerIdentity(deps: GCNode[], absent: Identity): Identity | undefined {
  const clusterScoped = absent.namespace === '';
  const seen = new Set<string>([identityKey(absent)]);
  let first: Identity | undefined;
  let firstFollowing: Identity | undefined;
  for (const dep of deps) {
    for (const ref of dep.owners) {
      if (ref.uid !== absent.uid) continue;
      const cand: Identity = {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
        uid: ref.uid,
        namespace: dep.identity.namespace,
      };
      if (
        clusterScoped &&
        groupOf(cand.apiVersion) === groupOf(absent.apiVersion) &&
        cand.kind === absent.kind
      )
        cand.namespace = '';
      const k = identityKey(cand);
      if (seen.has(k)) continue;
      seen.add(k);
      if (!first || compareIdentity(cand, first) < 0) first = cand;
      if (compareIdentity(absent, cand) < 0 && (!firstFollowing || compareIdentity(cand, firstFollowing) < 0))
        firstFollowing = cand;
    }
  }
  return firstFollowing ?? first;
}

interface RefDiff {
  added: OwnerReference[];
  removed: OwnerReference[];
  changed: { old: OwnerReference; new: OwnerReference }[];
}

function referencesDiffs(old: OwnerReference[], next: OwnerReference[]): RefDiff {
  const oldByUID = new Map(old.map((r) => [r.uid, r]));
  const out: RefDiff = { added: [], removed: [], changed: [] };
  for (const r of next) {
    const o = oldByUID.get(r.uid);
    if (!o) out.added.push(r);
    else {
      if (JSON.stringify(o) !== JSON.stringify(r)) out.changed.push({ old: o, new: r });
      oldByUID.delete(r.uid);
    }
  }
  out.removed.push(...oldByUID.values());
  return out;
}

export interface GraphHooks {
  /** Warning OwnerRefInvalidNamespace on a dependent. */
  invalidNamespaceOwnerRef(dep: GCNode, ownerUID: string): void;
}

export class DependencyGraph {
  readonly uidToNode = new Map<string, GCNode>();
  readonly absentOwnerCache = new AbsentOwnerCache();

  constructor(
    readonly attemptToDelete: RateLimitingQueue<GCNode>,
    readonly attemptToOrphan: RateLimitingQueue<GCNode>,
    private readonly hooks: GraphHooks,
  ) {}

  /** Applies one change (processGraphChanges). */
  process(ev: GraphEvent): void {
    const uid = ev.identity.uid;
    if (!uid) return;
    const existing = this.uidToNode.get(uid);
    if (existing && !ev.virtual && !existing.observed) {
      // First informer sighting of a node known so far only from references.
      const observed = ev.identity;
      if (!sameIdentity(observed, existing.identity)) {
        const [, invalid] = partitionDependents(existing.dependents, observed);
        for (const dep of invalid) {
          if (observed.namespace && dep.identity.namespace !== observed.namespace)
            this.hooks.invalidNamespaceOwnerRef(dep, uid);
          this.attemptToDelete.add(dep);
        }
        existing.identity = observed;
      }
      existing.observed = true;
    }

    if (ev.type !== 'delete') {
      const obj = ev.obj!;
      if (!existing) {
        const node = new GCNode(ev.identity, false);
        node.owners = obj.metadata.ownerReferences ?? [];
        node.beingDeleted = beingDeleted(obj);
        node.deletingDependents = node.beingDeleted && hasFinalizer(obj, FINALIZER_FOREGROUND);
        this.insertNode(node);
        this.processTransitions(ev.old, obj, node);
        return;
      }
      const next = obj.metadata.ownerReferences ?? [];
      const diff = referencesDiffs(existing.owners, next);
      if (diff.added.length || diff.removed.length || diff.changed.length) {
        this.addUnblockedOwnersToDeleteQueue(diff);
        existing.owners = next;
        this.addDependentToOwners(existing, diff.added);
        this.removeDependentFromOwners(existing, diff.removed);
      }
      if (beingDeleted(obj)) existing.beingDeleted = true;
      this.processTransitions(ev.old, obj, existing);
      return;
    }

    if (!existing) return;
    let remove = true;
    if (ev.virtual) {
      const deleted = ev.identity;
      if (existing.virtual && !existing.observed) {
        const [matching, nonmatching] = partitionDependents(existing.dependents, deleted);
        if (nonmatching.length) {
          // Some dependents name this uid with other coordinates: keep the node under one of those.
          remove = false;
          if (matching.length) {
            this.absentOwnerCache.add(deleted);
            for (const dep of matching) this.attemptToDelete.add(dep);
          }
          if (sameIdentity(existing.identity, deleted)) {
            const replacement = alternateOwnerIdentity(nonmatching, deleted);
            if (replacement) {
              existing.identity = replacement;
              this.attemptToDelete.addRateLimited(existing);
            }
          }
        }
      } else if (!sameIdentity(existing.identity, deleted)) {
        // A real node is not removed by a lookup under other coordinates.
        remove = false;
        const [matching] = partitionDependents(existing.dependents, deleted);
        if (matching.length) {
          this.absentOwnerCache.add(deleted);
          for (const dep of matching) this.attemptToDelete.add(dep);
        }
      }
    }
    if (!remove) return;
    this.removeNode(existing);
    if (existing.dependents.size) this.absentOwnerCache.add(ev.identity);
    for (const dep of existing.dependents) this.attemptToDelete.add(dep);
    for (const owner of existing.owners) {
      const ownerNode = this.uidToNode.get(owner.uid);
      // The owner may be waiting for this dependent to go.
      if (ownerNode?.deletingDependents) this.attemptToDelete.add(ownerNode);
    }
  }

  private insertNode(n: GCNode): void {
    this.uidToNode.set(n.identity.uid, n);
    this.addDependentToOwners(n, n.owners);
  }

  private removeNode(n: GCNode): void {
    this.uidToNode.delete(n.identity.uid);
    this.removeDependentFromOwners(n, n.owners);
  }

  private addDependentToOwners(n: GCNode, owners: OwnerReference[]): void {
    for (const owner of owners) {
      let ownerNode = this.uidToNode.get(owner.uid);
      if (!ownerNode) {
        // Not seen yet (or gone): a virtual node the workers verify with a lookup.
        ownerNode = new GCNode(
          {
            apiVersion: owner.apiVersion,
            kind: owner.kind,
            name: owner.name,
            uid: owner.uid,
            namespace: n.identity.namespace,
          },
          true,
        );
        this.uidToNode.set(owner.uid, ownerNode);
        ownerNode.dependents.add(n);
        this.attemptToDelete.add(ownerNode);
        continue;
      }
      ownerNode.dependents.add(n);
      if (!ownerNode.observed) continue;
      const ownerNamespaced = ownerNode.identity.namespace !== '';
      if (ownerNamespaced && ownerNode.identity.namespace !== n.identity.namespace) {
        // A namespaced owner in another namespace cannot own n.
        this.hooks.invalidNamespaceOwnerRef(n, owner.uid);
        this.attemptToDelete.add(n);
        continue;
      }
      const asReferenced: Identity = {
        apiVersion: owner.apiVersion,
        kind: owner.kind,
        name: owner.name,
        uid: owner.uid,
        namespace: ownerNamespaced ? n.identity.namespace : '',
      };
      if (!sameIdentity(asReferenced, ownerNode.identity)) this.attemptToDelete.add(n);
    }
  }

  private removeDependentFromOwners(n: GCNode, owners: OwnerReference[]): void {
    for (const owner of owners) this.uidToNode.get(owner.uid)?.dependents.delete(n);
  }

  private addUnblockedOwnersToDeleteQueue(diff: RefDiff): void {
    const poke = (uid: string) => {
      const node = this.uidToNode.get(uid);
      if (node?.deletingDependents) this.attemptToDelete.add(node);
    };
    for (const r of diff.removed) if (r.blockOwnerDeletion) poke(r.uid);
    for (const c of diff.changed) if (c.old.blockOwnerDeletion && !c.new.blockOwnerDeletion) poke(c.new.uid);
  }

  private processTransitions(old: KubeObject | undefined, obj: KubeObject, n: GCNode): void {
    if (startsWaiting(old, obj, FINALIZER_ORPHAN)) {
      this.attemptToOrphan.add(n);
      return;
    }
    if (startsWaiting(old, obj, FINALIZER_FOREGROUND)) {
      n.deletingDependents = true;
      for (const dep of n.dependents) this.attemptToDelete.add(dep);
      this.attemptToDelete.add(n);
    }
  }
}

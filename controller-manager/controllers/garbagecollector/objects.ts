// How the garbage collector reads and changes objects of any resource: the
// resource an owner reference's apiVersion/kind names (discovery refreshed,
// at most every 5 s, on a miss), metadata reads, deletes with the uid (and
// resourceVersion) as precondition, and metadata patches — finalizers, owner
// references — under optimistic concurrency.
import type { ControllerContext } from '../../controller';
import {
  isConflict,
  isNotFound,
  type Client,
  type DiscoveredResource,
  type KubeObject,
  type OwnerReference,
} from '../../../shared/client';
import { MetadataClient } from '../../app/controller-util';
import type { GCNode, Identity } from './graph';

/** A namespaced owner named by a cluster-scoped dependent: never resolvable, the item is dropped. */
export const NAMESPACED_OWNER_OF_CLUSTER_SCOPED = new Error(
  'cluster-scoped objects cannot refer to namespaced owners',
);

/** No resource serves the apiVersion/kind (yet): logged quietly and retried. */
export class RestMappingError extends Error {}

export class GCObjects {
  private lastInvalidate = 0;

  constructor(private readonly ctx: ControllerContext) {}

  private get client(): Client {
    return this.ctx.client;
  }

  /** Forgets what discovery knew (before monitors are resynced). */
  invalidateDiscovery(): void {
    this.ctx.client.discovery().invalidate();
    this.lastInvalidate = Date.now();
  }

  /** The resource serving apiVersion/kind; discovery is refreshed (at most every 5 s) on a miss. */
  async resourceFor(apiVersion: string, kind: string): Promise<DiscoveredResource> {
    let r = await this.client.discovery().resourceForKind(apiVersion, kind);
    if (!r && Date.now() - this.lastInvalidate > 5000) {
      this.lastInvalidate = Date.now();
      this.client.discovery().invalidate();
      r = await this.client.discovery().resourceForKind(apiVersion, kind);
    }
    if (!r) throw new RestMappingError(`unable to get REST mapping for ${apiVersion}/${kind}`);
    return r;
  }

  private async metadataFor(
    id: Identity,
  ): Promise<{ mc: MetadataClient; ns: string; r: DiscoveredResource }> {
    const r = await this.resourceFor(id.apiVersion, id.kind);
    if (r.namespaced && !id.namespace) throw NAMESPACED_OWNER_OF_CLUSTER_SCOPED;
    return { mc: new MetadataClient(this.client, r), ns: r.namespaced ? id.namespace : '', r };
  }

  /** The object's current metadata (throws NotFound). */
  async getObject(id: Identity): Promise<KubeObject> {
    const { mc, ns } = await this.metadataFor(id);
    return mc.get(ns, id.name, this.ctx.signal);
  }

  async deleteObject(
    id: Identity,
    resourceVersion: string | undefined,
    ownerRefs: OwnerReference[],
    policy: 'Orphan' | 'Foreground' | 'Background',
  ): Promise<void> {
    const { r, ns } = await this.metadataFor(id);
    const rc = r.namespaced ? this.client.resource(r).namespace(ns) : this.client.resource(r);
    const del = (rv?: string) =>
      rc.delete(id.name, {
        propagationPolicy: policy,
        preconditions: { uid: id.uid, ...(rv ? { resourceVersion: rv } : {}) },
        signal: this.ctx.signal,
      });
    try {
      await del(resourceVersion);
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isConflict(err) || !resourceVersion) throw err;
      // Something else changed: retry without the resourceVersion if the references did not.
      let live: KubeObject;
      try {
        live = await this.getObject(id);
      } catch (e) {
        if (isNotFound(e)) return;
        throw err;
      }
      if (live.metadata.uid !== id.uid) return;
      if (JSON.stringify(live.metadata.ownerReferences ?? []) !== JSON.stringify(ownerRefs)) throw err;
      try {
        await del();
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  /** Rewrites metadata of the object under optimistic concurrency (merge patch with resourceVersion). */
  private async patchMetadata(
    id: Identity,
    change: (meta: KubeObject['metadata']) => Record<string, unknown> | undefined,
  ): Promise<void> {
    const { r, ns } = await this.metadataFor(id);
    const rc = r.namespaced ? this.client.resource(r).namespace(ns) : this.client.resource(r);
    for (let attempt = 1; ; attempt++) {
      let latest: KubeObject;
      try {
        latest = await this.getObject(id);
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      if (latest.metadata.uid !== id.uid) return;
      const patch = change(latest.metadata);
      if (!patch) return;
      try {
        await rc.patch(
          id.name,
          { metadata: { ...patch, uid: id.uid, resourceVersion: latest.metadata.resourceVersion } },
          'merge',
          { signal: this.ctx.signal },
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  removeFinalizer(n: GCNode, finalizer: string): Promise<void> {
    return this.patchMetadata(n.identity, (meta) => {
      const fs = meta.finalizers ?? [];
      if (!fs.includes(finalizer)) return undefined;
      return { finalizers: fs.filter((f) => f !== finalizer) };
    });
  }

  removeOwnerReferences(id: Identity, uids: Set<string>): Promise<void> {
    return this.patchMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      const kept = refs.filter((r) => !uids.has(r.uid));
      if (kept.length === refs.length) return undefined;
      return { ownerReferences: kept };
    });
  }

  unblockOwnerReferences(id: Identity): Promise<void> {
    return this.patchMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      if (!refs.some((r) => r.blockOwnerDeletion)) return undefined;
      return {
        ownerReferences: refs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)),
      };
    });
  }
}

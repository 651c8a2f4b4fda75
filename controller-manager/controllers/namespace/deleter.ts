// Empties a terminating namespace (kube's NamespacedResourcesDeleter): every
// namespaced resource type found by discovery (built-ins and custom
// resources) is deleted by collection, or object by object where
// deletecollection is not served; what remains (finalizers, graceful pods) is
// counted into the namespace's status conditions; once nothing remains the
// "kubernetes" finalizer is removed through /finalize and the apiserver
// removes the namespace.
import {
  Discovery,
  isConflict,
  isMethodNotSupported,
  isNotFound,
  type Client,
  type DiscoveredResource,
  type KubeObject,
} from '../../../shared/client';
import type { Logger } from '../../../shared/log';
import { MetadataClient, errText, type Condition } from '../../app/controller-util';
import { parseTime, rfc3339 } from '../util/base';

export const FINALIZER_KUBERNETES = 'kubernetes';
/** An estimate used for objects held by finalizers (kube: finalizerEstimateSeconds). */
const FINALIZER_ESTIMATE_SECONDS = 15;

/** Returned when content remains: the namespace is looked at again after about half the estimate. */
export class ResourcesRemainingError extends Error {
  constructor(readonly estimate: number) {
    super(`some content remains in the namespace, estimate ${estimate} seconds before it is removed`);
  }
}

/** utilerrors.NewAggregate's message. */
class AggregateError2 extends Error {
  constructor(readonly errors: Error[]) {
    super(errors.length === 1 ? errors[0].message : `[${errors.map((e) => e.message).join(', ')}]`);
  }
}

const gvrString = (r: { group: string; version: string; resource: string }) =>
  `${r.group}/${r.version}, Resource=${r.resource}`;

// The condition types the namespace controller maintains, with their "all is well" forms.
const CONDITION_TYPES = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
] as const;
const OK_MESSAGES: Record<string, string> = {
  NamespaceDeletionDiscoveryFailure: 'All resources successfully discovered',
  NamespaceDeletionGroupVersionParsingFailure: 'All legacy kube types successfully parsed',
  NamespaceDeletionContentFailure: 'All content successfully deleted, may be waiting on finalization',
  NamespaceContentRemaining: 'All content successfully removed',
  NamespaceFinalizersRemaining: 'All content successfully removed',
};
const OK_REASONS: Record<string, string> = {
  NamespaceDeletionDiscoveryFailure: 'ResourcesDiscovered',
  NamespaceDeletionGroupVersionParsingFailure: 'ParsedGroupVersions',
  NamespaceDeletionContentFailure: 'ContentDeleted',
  NamespaceContentRemaining: 'ContentRemoved',
  NamespaceFinalizersRemaining: 'ContentRemoved',
};

interface GVRDeletion {
  estimate: number;
  remaining: number;
  finalizers: Map<string, number>;
}

/** Collects the conditions of one pass (kube's namespaceConditionUpdater). */
class ConditionUpdater {
  private readonly conds: Condition[] = [];
  private readonly contentErrors: Error[] = [];

  constructor(private readonly now: string) {}

  private add(type: string, reason: string, message: string): void {
    this.conds.push({ type, status: 'True', lastTransitionTime: this.now, reason, message });
  }

  discoveryFailed(err: Error): void {
    this.add('NamespaceDeletionDiscoveryFailure', 'DiscoveryFailed', err.message);
  }

  groupVersionFailed(err: Error): void {
    this.add('NamespaceDeletionGroupVersionParsingFailure', 'GroupVersionParsingFailed', err.message);
  }

  contentFailed(err: Error): void {
    this.contentErrors.push(err);
  }

  contentTotals(byGVR: Map<string, number>, byFinalizer: Map<string, number>): void {
    if (byGVR.size) {
      const parts = [...byGVR].filter(([, n]) => n > 0).map(([k, n]) => `${k} has ${n} resource instances`);
      parts.sort();
      this.add(
        'NamespaceContentRemaining',
        'SomeResourcesRemain',
        `Some resources are remaining: ${parts.join(', ')}`,
      );
    }
    if (byFinalizer.size) {
      const parts = [...byFinalizer]
        .filter(([, n]) => n > 0)
        .map(([f, n]) => `${f} in ${n} resource instances`);
      parts.sort();
      this.add(
        'NamespaceFinalizersRemaining',
        'SomeFinalizerRemain',
        `Some finalizers are remaining: ${parts.join(', ')}`,
      );
    }
  }

  /** Applies the pass's conditions to status; true when anything changed. */
  update(status: { conditions?: Condition[] }): boolean {
    if (!this.conds.some((c) => c.type === 'NamespaceDeletionContentFailure') && this.contentErrors.length) {
      const msgs = this.contentErrors.map((e) => e.message).sort();
      this.add(
        'NamespaceDeletionContentFailure',
        'ContentDeletionFailed',
        `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(', ')}`,
      );
    }
    let changed = false;
    const out = [...(status.conditions ?? [])];
    for (const type of CONDITION_TYPES) {
      const next = this.conds.find((c) => c.type === type) ?? {
        type,
        status: 'False',
        lastTransitionTime: this.now,
        reason: OK_REASONS[type],
        message: OK_MESSAGES[type],
      };
      const i = out.findIndex((c) => c.type === type);
      if (i < 0) {
        out.push(next);
        changed = true;
        continue;
      }
      const old = out[i];
      if (old.status !== next.status || old.message !== next.message || old.reason !== next.reason) {
        out[i] = {
          ...old,
          status: next.status,
          reason: next.reason,
          message: next.message,
          lastTransitionTime: old.status !== next.status ? this.now : old.lastTransitionTime,
        };
        changed = true;
      }
    }
    status.conditions = out;
    return changed;
  }
}

/** Preferred namespaced resources (discovery.ServerPreferredNamespacedResources). */
export async function preferredNamespacedResources(disco: Discovery): Promise<DiscoveredResource[]> {
  return (await disco.serverPreferredResources()).filter((r) => r.namespaced);
}

export class NamespacedResourcesDeleter {
  /** "<op> <group>/<version>/<resource>" the server does not support. */
  private readonly notSupported = new Set<string>();

  constructor(
    private readonly client: Client,
    private readonly log: Logger,
    private readonly now: () => number,
    private readonly signal?: AbortSignal,
  ) {}

  private namespaces() {
    return this.client.resource('namespaces');
  }

  /** Deletes the namespace's content; throws ResourcesRemainingError while some remains. */
  async delete(nsName: string): Promise<void> {
    let ns: KubeObject;
    try {
      ns = await this.namespaces().get(nsName, { signal: this.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!ns.metadata.deletionTimestamp) return;
    this.log.v(5)?.info('namespace controller - syncNamespace', {
      namespace: nsName,
      finalizerToken: FINALIZER_KUBERNETES,
    });
    try {
      ns = await this.retryOnConflict(ns, (n) => this.ensureTerminating(n));
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (!ns.metadata.deletionTimestamp) return;
    if (!(ns.spec?.finalizers?.length > 0)) return;

    const estimate = await this.deleteAllContent(ns);
    if (estimate > 0) throw new ResourcesRemainingError(estimate);

    try {
      await this.retryOnConflict(ns, (n) => this.finalize(n));
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }

  /** Retries fn on conflicts with a fresh copy of the namespace, as long as it is the same namespace. */
  private async retryOnConflict(
    ns: KubeObject,
    fn: (ns: KubeObject) => Promise<KubeObject>,
  ): Promise<KubeObject> {
    let latest = ns;
    for (;;) {
      try {
        return await fn(latest);
      } catch (err) {
        if (!isConflict(err)) throw err;
        const prev = latest;
        latest = await this.namespaces().get(prev.metadata.name!, { signal: this.signal });
        if (latest.metadata.uid !== prev.metadata.uid)
          throw new Error('namespace uid has changed across retries', { cause: err });
      }
    }
  }

  private async ensureTerminating(ns: KubeObject): Promise<KubeObject> {
    if (!ns.metadata.deletionTimestamp || ns.status?.phase === 'Terminating') return ns;
    return this.namespaces().updateStatus(
      { ...ns, status: { ...ns.status, phase: 'Terminating' } },
      { signal: this.signal },
    );
  }

  private async finalize(ns: KubeObject): Promise<KubeObject> {
    const finalizers = [
      ...new Set<string>((ns.spec?.finalizers ?? []).filter((f: string) => f !== FINALIZER_KUBERNETES)),
    ].sort();
    try {
      return await this.namespaces().finalize(
        { ...ns, spec: { ...ns.spec, finalizers } },
        { signal: this.signal },
      );
    } catch (err) {
      if (isNotFound(err)) return ns;
      throw err;
    }
  }

  private supported(op: string, r: DiscoveredResource): boolean {
    return !this.notSupported.has(`${op} ${r.group}/${r.version}/${r.resource}`);
  }

  private markNotSupported(op: string, r: DiscoveredResource): void {
    this.notSupported.add(`${op} ${r.group}/${r.version}/${r.resource}`);
  }

  /** Deletes everything; returns the estimate in seconds (0 when nothing remains). */
  private async deleteAllContent(ns: KubeObject): Promise<number> {
    const name = ns.metadata.name!;
    const deletedAt = parseTime(ns.metadata.deletionTimestamp) ?? this.now();
    const errs: Error[] = [];
    const conditions = new ConditionUpdater(rfc3339(this.now()));
    let resources: DiscoveredResource[] = [];
    try {
      const disco = new Discovery(this.client.rest);
      resources = await preferredNamespacedResources(disco);
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err));
      errs.push(e);
      conditions.discoveryFailed(e);
    }
    const deletable = resources.filter((r) => r.verbs.includes('delete'));
    for (const r of deletable) {
      if (!r.verbs.includes('list')) this.markNotSupported('list', r);
      if (!r.verbs.includes('deletecollection')) this.markNotSupported('deletecollection', r);
    }

    let estimate = 0;
    const byGVR = new Map<string, number>();
    const byFinalizer = new Map<string, number>();
    const results = await Promise.all(
      deletable.map(async (r) => {
        try {
          return { r, d: await this.deleteAllContentFor(r, name, deletedAt) };
        } catch (err) {
          const e = err instanceof Error ? err : new Error(String(err));
          return { r, d: (e as { partial?: GVRDeletion }).partial, err: e };
        }
      }),
    );
    for (const { r, d, err } of results) {
      if (err) {
        errs.push(err);
        conditions.contentFailed(err);
      }
      if (!d) continue;
      if (d.estimate > estimate) estimate = d.estimate;
      if (d.remaining > 0) {
        byGVR.set(`${r.resource}.${r.group}`, d.remaining);
        for (const [f, n] of d.finalizers) if (n > 0) byFinalizer.set(f, (byFinalizer.get(f) ?? 0) + n);
      }
    }
    conditions.contentTotals(byGVR, byFinalizer);
    const status = { ...(ns.status ?? {}), conditions: [...(ns.status?.conditions ?? [])] };
    if (conditions.update(status)) {
      try {
        await this.namespaces().updateStatus({ ...ns, status }, { signal: this.signal });
      } catch (err) {
        this.log.warn("couldn't update status condition for namespace", {
          namespace: name,
          err: errText(err),
        });
      }
    }
    this.log.v(4)?.info('namespace controller - deleteAllContent', {
      namespace: name,
      estimate,
      err: errs.map((e) => e.message),
    });
    if (errs.length) throw new AggregateError2(errs);
    return estimate;
  }

  private async deleteAllContentFor(
    r: DiscoveredResource,
    ns: string,
    deletedAt: number,
  ): Promise<GVRDeletion> {
    const estimate = await this.estimateGracefulTermination(r, ns, deletedAt);
    const fail = (err: unknown, partial: GVRDeletion) =>
      Object.assign(err instanceof Error ? err : new Error(String(err)), { partial });
    const none: GVRDeletion = { estimate, remaining: 0, finalizers: new Map() };
    let collectionDeleted: boolean;
    try {
      collectionDeleted = await this.deleteCollection(r, ns);
    } catch (err) {
      throw fail(err, none);
    }
    if (!collectionDeleted) {
      try {
        await this.deleteEachItem(r, ns);
      } catch (err) {
        throw fail(err, none);
      }
    }
    let items: KubeObject[] | undefined;
    try {
      items = await this.listCollection(r, ns);
    } catch (err) {
      throw fail(err, none);
    }
    if (!items) return none;
    if (!items.length) return { estimate: 0, remaining: 0, finalizers: new Map() };
    const finalizers = new Map<string, number>();
    for (const it of items)
      for (const f of it.metadata.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    if (estimate !== 0) return { estimate, remaining: items.length, finalizers };
    if (finalizers.size) return { estimate: FINALIZER_ESTIMATE_SECONDS, remaining: items.length, finalizers };
    throw fail(new Error(`unexpected items still remain in namespace: ${ns} for gvr: ${gvrString(r)}`), {
      estimate,
      remaining: items.length,
      finalizers,
    });
  }

  /** True when the server supports deletecollection (then it was done). */
  private async deleteCollection(r: DiscoveredResource, ns: string): Promise<boolean> {
    if (!this.supported('deletecollection', r)) return false;
    try {
      await this.client
        .resource(r)
        .namespace(ns)
        .deleteCollection({ propagationPolicy: 'Background', signal: this.signal });
      return true;
    } catch (err) {
      if (isMethodNotSupported(err) || isNotFound(err)) {
        this.markNotSupported('deletecollection', r);
        return false;
      }
      throw err;
    }
  }

  /** The objects left (metadata only); undefined when list is not supported. */
  private async listCollection(r: DiscoveredResource, ns: string): Promise<KubeObject[] | undefined> {
    if (!this.supported('list', r)) return undefined;
    try {
      return (await new MetadataClient(this.client, r).list(ns, { signal: this.signal })).items;
    } catch (err) {
      if (isMethodNotSupported(err) || isNotFound(err)) {
        this.markNotSupported('list', r);
        return undefined;
      }
      throw err;
    }
  }

  private async deleteEachItem(r: DiscoveredResource, ns: string): Promise<void> {
    const items = await this.listCollection(r, ns);
    if (!items) return;
    const rc = this.client.resource(r).namespace(ns);
    for (const it of items) {
      try {
        await rc.delete(it.metadata.name!, { propagationPolicy: 'Background', signal: this.signal });
      } catch (err) {
        if (!isNotFound(err) && !isMethodNotSupported(err)) throw err;
      }
    }
  }

  /** Pods get their longest termination grace period, counted from the namespace's deletion. */
  private async estimateGracefulTermination(
    r: DiscoveredResource,
    ns: string,
    deletedAt: number,
  ): Promise<number> {
    if (r.group !== '' || r.resource !== 'pods') return 0;
    let estimate = 0;
    const pods = await this.client.resource('pods').namespace(ns).list({ signal: this.signal });
    for (const pod of pods.items) {
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      const grace = pod.spec?.terminationGracePeriodSeconds;
      if (typeof grace === 'number' && grace > estimate) estimate = grace;
    }
    if (this.now() - deletedAt >= estimate * 1000) estimate = 0;
    return estimate;
  }
}

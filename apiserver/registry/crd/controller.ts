// The CRD controller of an apiserver: list+watch of the CRD store (so CRDs
// written through another apiserver on the same storage, or before this one
// started, are seen too) driving, like apiextensions-apiserver's controllers:
//   naming       spec.names → status.acceptedNames, NamesAccepted (conflicts within the group)
//   establishing Established once the names are accepted
//   serving      custom resource endpoints, discovery (registry change listeners) and OpenAPI
//   finalizer    on deletion: Terminating, delete every custom resource, drop the finalizer
// Status writes are conditional on the resourceVersion read; a conflict just
// waits for the newer object from the watch, so several apiservers can run it.
import { logger } from '../../../shared/log';
import { StatusError } from '../../../shared/api/status';
import type { OpenAPIService, Schema as OpenAPISchema } from '../../../shared/api/openapi';
import type { ResourceFacts } from '../../../shared/api/schema-types';
import { systemContext } from '../context';
import { jsonEqual, rfc3339 } from '../meta';
import type { Registry } from '../registry';
import type { GenericStore } from '../store';
import type { SubresourceStrategy } from '../strategy';
import type { WatchStream } from '../reads';
import { buildServing, servingFingerprint, type CRDServing } from './served';
import {
  CLEANUP_FINALIZER,
  CRD_GROUP,
  CRD_RESOURCE,
  conditionEquivalent,
  findCondition,
  hasFinalizer,
  isConditionTrue,
  setCondition,
  type CRD,
  type CRDCondition,
  type CRDNames,
} from './types';

const log = logger('apiextensions');

export interface CRDControllerOptions {
  registry: Registry;
  /** Receives the published schemas of established CRDs. */
  openapi?: OpenAPIService;
  now?: () => Date;
  /** How often cleanup checks whether the custom resources are gone (default 250ms). */
  cleanupPollMs?: number;
  /** How long cleanup waits for them before reporting InstanceDeletionCheck and retrying (default 60s). */
  cleanupTimeoutMs?: number;
  /** Delay before a failed sync or cleanup is retried (default 1s). */
  retryMs?: number;
}

/** Internal status writes: status (and for the finalizer, metadata.finalizers) of the stored object. */
function internalWrite(withFinalizers: boolean): SubresourceStrategy {
  return {
    trusted: true,
    merge(incoming, old) {
      const out = { ...old, status: incoming.status };
      out.metadata = { ...old.metadata, resourceVersion: incoming.metadata?.resourceVersion };
      if (withFinalizers) {
        if (incoming.metadata?.finalizers?.length) out.metadata.finalizers = incoming.metadata.finalizers;
        else delete out.metadata.finalizers;
      }
      return out;
    },
  };
}
const STATUS_WRITE = internalWrite(false);
const FINALIZE_WRITE = internalWrite(true);

class CleanupFailure extends Error {
  constructor(readonly condition: CRDCondition) {
    super(condition.message);
  }
}

const rvOf = (crd: CRD) => Number(crd.metadata.resourceVersion ?? 0);
const groupOfName = (name: string) => name.slice(name.indexOf('.') + 1);
const sameNames = (a: CRDNames | undefined, b: CRDNames | undefined) =>
  jsonEqual(normalizeNames(a), normalizeNames(b));

function normalizeNames(n: CRDNames | undefined): Record<string, unknown> {
  return {
    plural: n?.plural ?? '',
    singular: n?.singular ?? '',
    kind: n?.kind ?? '',
    listKind: n?.listKind ?? '',
    shortNames: n?.shortNames ?? [],
    categories: n?.categories ?? [],
  };
}

export class CRDController {
  private readonly crds = new Map<string, CRD>();
  /** Revision at which a CRD was deleted: older events of it are stale. */
  private readonly tombstones = new Map<string, number>();
  private readonly serving = new Map<string, CRDServing>();
  private readonly queue = new Set<string>();
  private readonly cleanups = new Map<string, Promise<void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Watch caches of replaced or removed builds, stopped a little later (requests in flight finish). */
  private readonly retired = new Set<CRDServing>();
  /** CRDs whose group and plural are a built-in resource's (never served). */
  private readonly overlapping = new Set<string>();
  private readonly builtinFacts: ResourceFacts[];
  private processing: Promise<void> | null = null;
  private watcher: WatchStream | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private syncedResolve: (() => void) | null = null;
  private readonly syncedPromise: Promise<void>;

  constructor(private readonly o: CRDControllerOptions) {
    this.builtinFacts = o.registry
      .all()
      .filter((s) => !o.registry.isDynamic(s.info.group, s.info.version, s.info.resource))
      .map((s) => s.info);
    this.syncedPromise = new Promise((r) => (this.syncedResolve = r));
  }

  private now(): string {
    return rfc3339(this.o.now?.() ?? new Date());
  }

  private crdStore(): GenericStore | undefined {
    return this.o.registry.preferred(CRD_GROUP, CRD_RESOURCE)?.store;
  }

  /** Starts list+watch; resolves once the CRDs that exist are served (or when there is no CRD API). */
  start(): Promise<void> {
    if (!this.crdStore()) {
      this.syncedResolve?.();
      return this.syncedPromise;
    }
    this.running ??= this.run();
    return this.syncedPromise;
  }

  /** Resolves once the initial list has been processed. */
  synced(): Promise<void> {
    return this.syncedPromise;
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const s of [...this.serving.values(), ...this.retired]) {
      this.o.registry.removeServed(s.served);
      const i = this.o.registry.stores.indexOf(s.primary);
      if (i >= 0) this.o.registry.stores.splice(i, 1);
      s.primary.cacher?.stop();
    }
    this.serving.clear();
    this.retired.clear();
  }

  /** The CRDs this controller serves right now (names). */
  servedNames(): string[] {
    return [...this.serving.keys()];
  }

  // ---- list + watch -------------------------------------------------------------

  private async run(): Promise<void> {
    let backoff = 200;
    while (!this.stopped) {
      try {
        const store = this.crdStore()!;
        const ctx = systemContext();
        const list = await store.reader.list(ctx, {});
        const seen = new Set<string>();
        for (const item of list.items) {
          seen.add(item.obj.metadata.name);
          this.observe(item.obj);
        }
        for (const name of [...this.crds.keys()]) {
          if (!seen.has(name)) {
            this.crds.delete(name);
            this.tombstones.set(name, list.rv);
            this.enqueue(name);
          }
        }
        await this.drain();
        this.syncedResolve?.();
        this.syncedResolve = null;
        if (this.stopped) return;
        const w = await store.reader.watch(ctx, { resourceVersion: String(list.rv) });
        this.watcher = w;
        backoff = 200;
        for await (const batch of w) {
          for (const item of batch) {
            if (item.type === 'ADDED' || item.type === 'MODIFIED') this.observe(item.object!.obj);
            else if (item.type === 'DELETED') this.forget(item.object!.obj);
          }
        }
        this.watcher = null;
      } catch (err) {
        if (this.stopped) return;
        log.warn('CRD list/watch failed, retrying', { err: String(err) });
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  /**
   * Takes an object from the store unless a newer state is known: our own
   * writes (and deletions) are known before the watch reports them.
   */
  private observe(obj: CRD): void {
    const name = obj.metadata.name;
    const known = this.crds.get(name);
    if (known && rvOf(known) > rvOf(obj)) return;
    const deletedAt = this.tombstones.get(name);
    if (deletedAt !== undefined) {
      if (rvOf(obj) <= deletedAt) return;
      this.tombstones.delete(name);
    }
    this.crds.set(name, structuredClone(obj));
    this.enqueue(name);
  }

  private forget(obj: CRD): void {
    const name = obj.metadata.name;
    const known = this.crds.get(name);
    if (known && rvOf(known) > rvOf(obj)) return;
    this.crds.delete(name);
    this.tombstones.set(name, Math.max(rvOf(obj), this.tombstones.get(name) ?? 0));
    this.enqueue(name);
  }

  // ---- work queue -------------------------------------------------------------------

  private enqueue(name: string): void {
    if (this.stopped) return;
    this.queue.add(name);
    this.kick();
  }

  /** One worker at a time (names are reserved in order, like the naming controller's single worker). */
  private kick(): void {
    if (this.processing || !this.queue.size || this.stopped) return;
    this.processing = this.work().finally(() => {
      this.processing = null;
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.processing) await this.processing;
  }

  private async work(): Promise<void> {
    while (this.queue.size && !this.stopped) {
      const name = this.queue.values().next().value as string;
      this.queue.delete(name);
      try {
        await this.sync(name);
      } catch (err) {
        log.warn('CRD sync failed, retrying', { crd: name, err: String(err) });
        this.later(() => this.enqueue(name));
      }
    }
  }

  private later(fn: () => void, ms = this.o.retryMs ?? 1000): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    t.unref?.();
    this.timers.add(t);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => this.later(r, ms));
  }

  private requeueGroup(group: string, except: string): void {
    for (const [name, crd] of this.crds) if (crd.spec.group === group && name !== except) this.enqueue(name);
  }

  // ---- one CRD --------------------------------------------------------------------

  private async sync(name: string): Promise<void> {
    const crd = this.crds.get(name);
    if (!crd) {
      this.unserve(name);
      this.requeueGroup(groupOfName(name), name);
      return;
    }
    if (!sameNames(crd.spec.names, crd.status?.acceptedNames)) {
      const { names, namesAccepted, established } = this.calculateNames(crd);
      if (
        !jsonEqual(names, crd.status?.acceptedNames) ||
        !conditionEquivalent(namesAccepted, findCondition(crd, 'NamesAccepted'))
      ) {
        const next = structuredClone(crd);
        (next.status ??= {}).acceptedNames = names;
        setCondition(next, namesAccepted, this.now());
        setCondition(next, established, this.now());
        if (await this.write(crd, next, STATUS_WRITE)) this.requeueGroup(crd.spec.group, name);
        return;
      }
    }
    if (isConditionTrue(crd, 'NamesAccepted') && !isConditionTrue(crd, 'Established')) {
      const next = structuredClone(crd);
      setCondition(
        next,
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
        this.now(),
      );
      await this.write(crd, next, STATUS_WRITE);
      return;
    }
    if (isConditionTrue(crd, 'Established')) this.serve(crd);
    else this.unserve(name);
    if (crd.metadata.deletionTimestamp && hasFinalizer(crd, CLEANUP_FINALIZER)) this.startCleanup(name);
  }

  /** Writes next (status, and finalizers with FINALIZE_WRITE) if the CRD is still at current's version. */
  private async write(current: CRD, next: CRD, sub: SubresourceStrategy): Promise<CRD | null> {
    const store = this.crdStore();
    if (!store || this.stopped) return null;
    next.metadata.resourceVersion = current.metadata.resourceVersion;
    try {
      const out = await store.update(
        systemContext(),
        current.metadata.name,
        () => structuredClone(next),
        {},
        { sub },
      );
      const written = out.obj as CRD;
      if (written.metadata.deletionTimestamp && !written.metadata.finalizers?.length) {
        // Gone from the store: stop serving now rather than when the watch reports it.
        this.forget(written);
        this.unserve(written.metadata.name);
      } else this.observe(written);
      return written;
    } catch (err) {
      // Changed or deleted meanwhile: the watch brings the newer object and another sync.
      if (err instanceof StatusError && (err.code === 409 || err.code === 404)) return null;
      throw err;
    }
  }

  /** The naming controller's calculation (NamesAccepted, acceptedNames, the initial Established). */
  private calculateNames(crd: CRD): {
    names: CRDNames;
    namesAccepted: CRDCondition;
    established: CRDCondition;
  } {
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const other of this.crds.values()) {
      if (other.spec.group !== crd.spec.group) continue;
      const a = other.status?.acceptedNames;
      if (!a) continue;
      for (const n of [a.plural, a.singular ?? '', ...(a.shortNames ?? [])]) resources.add(n);
      kinds.add(a.kind);
      kinds.add(a.listKind ?? '');
    }
    const requested = crd.spec.names;
    const accepted: CRDNames = crd.status?.acceptedNames ?? { plural: '', kind: '' };
    const names: CRDNames = structuredClone(accepted);
    const cond: CRDCondition = { type: 'NamesAccepted', status: 'Unknown' };
    const fail = (reason: string, message: string) => {
      cond.status = 'False';
      cond.reason = reason;
      cond.message = message;
    };
    const check = (want: string | undefined, have: string | undefined, used: Set<string>) =>
      (want ?? '') === (have ?? '') || !used.has(want ?? '')
        ? undefined
        : `"${want ?? ''}" is already in use`;

    let e = check(requested.plural, accepted.plural, resources);
    if (e) fail('PluralConflict', e);
    else names.plural = requested.plural;
    e = check(requested.singular, accepted.singular, resources);
    if (e) fail('SingularConflict', e);
    else names.singular = requested.singular;
    const want = requested.shortNames ?? [];
    if (!jsonEqual(want, accepted.shortNames ?? [])) {
      const mine = new Set(accepted.shortNames ?? []);
      const errs: string[] = [];
      for (const s of want) {
        if (mine.has(s) || s === accepted.plural || s === accepted.singular) continue;
        const se = check(s, '', resources);
        if (se) errs.push(se);
      }
      if (errs.length) fail('ShortNamesConflict', errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
      else if (want.length) names.shortNames = [...want];
      else delete names.shortNames;
    }
    e = check(requested.kind, accepted.kind, kinds);
    if (e) fail('KindConflict', e);
    else names.kind = requested.kind;
    e = check(requested.listKind, accepted.listKind, kinds);
    if (e) fail('ListKindConflict', e);
    else names.listKind = requested.listKind;
    if (requested.categories?.length) names.categories = [...requested.categories];
    else delete names.categories;
    if (cond.status === 'Unknown') {
      cond.status = 'True';
      cond.reason = 'NoConflicts';
      cond.message = 'no conflicts found';
    }
    let established: CRDCondition = findCondition(crd, 'Established') ?? {
      type: 'Established',
      status: 'False',
      reason: 'NotAccepted',
      message: 'not all names are accepted',
    };
    if (established.status !== 'True' && cond.status === 'True')
      established = {
        type: 'Established',
        status: 'False',
        reason: 'Installing',
        message: 'the initial names have been accepted',
      };
    return { names, namesAccepted: cond, established: { ...established } };
  }

  // ---- serving --------------------------------------------------------------------

  private terminating(name: string): boolean {
    const crd = this.crds.get(name);
    return !crd || !!crd.metadata.deletionTimestamp || isConditionTrue(crd, 'Terminating');
  }

  private serve(crd: CRD): void {
    const name = crd.metadata.name;
    const current = this.serving.get(name);
    if (current && current.fingerprint === servingFingerprint(crd)) return;
    if (this.overlapsBuiltin(crd)) {
      // The built-in resource keeps its endpoints (and its keys in storage).
      if (!this.overlapping.has(name))
        log.warn('CRD names a resource the server already serves; the built-in one is kept', { crd: name });
      this.overlapping.add(name);
      this.unserve(name);
      return;
    }
    this.overlapping.delete(name);
    let next: CRDServing;
    try {
      next = buildServing(crd, { registry: this.o.registry, terminating: () => this.terminating(name) });
    } catch (err) {
      log.error('cannot serve CRD', { crd: name, err: String(err) });
      return;
    }
    if (current) this.retire(current);
    this.o.registry.addServed(next.served);
    // Counted with the built-in stores (apiserver_storage_objects) and stopped with them.
    this.o.registry.stores.push(next.primary);
    this.serving.set(name, next);
    this.publish();
    log.v(2)?.info('serving CRD', { crd: name, versions: next.served.map((s) => s.info.version) });
  }

  private unserve(name: string): void {
    const current = this.serving.get(name);
    if (!current) return;
    this.serving.delete(name);
    this.retire(current);
    this.publish();
    log.v(2)?.info('stopped serving CRD', { crd: name });
  }

  /** Stops serving a replaced or removed build; its watch cache stops once requests in flight are done. */
  private retire(s: CRDServing): void {
    this.o.registry.removeServed(s.served);
    const i = this.o.registry.stores.indexOf(s.primary);
    if (i >= 0) this.o.registry.stores.splice(i, 1);
    this.retired.add(s);
    this.later(() => {
      this.retired.delete(s);
      s.primary.cacher?.stop();
    }, 5000);
  }

  /** A built-in resource with the CRD's group and plural: its keys are the built-in's. */
  private overlapsBuiltin(crd: CRD): boolean {
    const { group, names } = crd.spec;
    return this.o.registry
      .all()
      .some(
        (s) =>
          s.info.group === group &&
          s.info.resource === names.plural &&
          !this.o.registry.isDynamic(s.info.group, s.info.version, s.info.resource),
      );
  }

  private publish(): void {
    const openapi = this.o.openapi;
    if (!openapi) return;
    const facts: ResourceFacts[] = [...this.builtinFacts];
    const v2: Record<string, OpenAPISchema> = {};
    const v3: Record<string, OpenAPISchema> = {};
    for (const s of this.serving.values())
      for (const p of s.published) {
        facts.push(p.facts);
        Object.assign(v2, p.v2);
        Object.assign(v3, p.v3);
      }
    openapi.setResources(facts, { v2, v3 });
  }

  // ---- finalizer ------------------------------------------------------------------

  private startCleanup(name: string): void {
    if (this.cleanups.has(name)) return;
    const p = this.cleanup(name)
      .catch((err) => {
        log.warn('CRD cleanup failed, retrying', { crd: name, err: String(err) });
        this.later(() => this.enqueue(name));
      })
      .finally(() => this.cleanups.delete(name));
    this.cleanups.set(name, p);
  }

  private async cleanup(name: string): Promise<void> {
    let crd = this.crds.get(name);
    if (!crd || !crd.metadata.deletionTimestamp || !hasFinalizer(crd, CLEANUP_FINALIZER)) return;
    let next = structuredClone(crd);
    setCondition(
      next,
      {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionInProgress',
        message: 'CustomResource deletion is in progress',
      },
      this.now(),
    );
    const marked = await this.write(crd, next, STATUS_WRITE);
    if (!marked) return;
    crd = marked;
    let cond: CRDCondition;
    const serving = this.serving.get(name);
    if (this.overlapsBuiltin(crd)) {
      cond = {
        type: 'Terminating',
        status: 'False',
        reason: 'OverlappingBuiltInResource',
        message: 'instances overlap with built-in resources in storage',
      };
    } else if (isConditionTrue(crd, 'Established') && serving) {
      try {
        cond = await this.deleteInstances(serving.primary);
      } catch (err) {
        if (!(err instanceof CleanupFailure)) throw err;
        const failed = structuredClone(crd);
        setCondition(failed, err.condition, this.now());
        await this.write(crd, failed, STATUS_WRITE);
        throw err;
      }
    } else {
      cond = {
        type: 'Terminating',
        status: 'False',
        reason: 'NeverEstablished',
        message: 'resource was never established',
      };
    }
    crd = this.crds.get(name) ?? crd;
    next = structuredClone(crd);
    setCondition(next, cond, this.now());
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
    await this.write(crd, next, FINALIZE_WRITE);
  }

  /** Deletes every custom resource (their own finalizers respected) and waits until none is left. */
  private async deleteInstances(store: GenericStore): Promise<CRDCondition> {
    const failed = (reason: string, message: string) =>
      new CleanupFailure({ type: 'Terminating', status: 'True', reason, message });
    const all = async () => (await store.reader.list(systemContext(), {})).items;
    let items;
    try {
      items = await all();
    } catch (err) {
      throw failed('InstanceDeletionFailed', `could not list instances: ${String(err)}`);
    }
    const namespaces = new Set(items.map((i) => (i.obj.metadata?.namespace as string | undefined) ?? ''));
    const errors: string[] = [];
    for (const ns of namespaces) {
      try {
        await store.deleteCollection(systemContext(ns), {}, {});
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
      }
    }
    if (errors.length)
      throw failed(
        'InstanceDeletionFailed',
        `could not issue all deletes: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`,
      );
    const deadline = Date.now() + (this.o.cleanupTimeoutMs ?? 60_000);
    for (;;) {
      if (this.stopped) throw new Error('stopped');
      const left = await all();
      if (!left.length) break;
      if (Date.now() >= deadline)
        throw failed(
          'InstanceDeletionCheck',
          'could not confirm zero CustomResources remaining: timed out waiting for the condition',
        );
      await this.sleep(this.o.cleanupPollMs ?? 250);
    }
    return {
      type: 'Terminating',
      status: 'False',
      reason: 'InstanceDeletionCompleted',
      message: 'removed all instances',
    };
  }
}

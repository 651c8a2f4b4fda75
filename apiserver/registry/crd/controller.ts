// The CRD controller of an apiserver: list+watch of the CRD store (so CRDs
// written through another apiserver on the same storage, or before this one
// started, are seen too) feeding one work queue, whose sync of a CRD does
// what apiextensions-apiserver's controllers do:
//   naming       spec.names → status.acceptedNames, NamesAccepted (conditions.ts)
//   establishing Established once the names are accepted (conditions.ts)
//   serving      custom resource endpoints, discovery and OpenAPI (serving.ts)
//   finalizer    on deletion: Terminating, delete every custom resource, drop the finalizer (cleanup.ts)
// Status writes are conditional on the resourceVersion read; a conflict just
// waits for the newer object from the watch, so several apiservers can run it.
import { logger } from '../../../shared/log';
import { StatusError } from '../../../shared/api/status';
import type { OpenAPIService } from '../../../shared/api/openapi';
import { systemContext } from '../context';
import { rfc3339 } from '../../../shared/api/validation/gotime';
import { jsonEqual } from '../../../shared/api/json-value';
import type { Registry } from '../registry';
import type { GenericStore } from '../store';
import type { SubresourceStrategy } from '../strategy';
import type { WatchStream } from '../reads';
import { CRDCleanup } from './cleanup';
import { calculateNames, ESTABLISHED, sameNames } from './conditions';
import { ServedCRDs } from './serving';
import type { WebhookServiceResolver } from '../../aggregator/service-resolver';
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
} from './types';

const log = logger('apiextensions');

export interface CRDControllerOptions {
  registry: Registry;
  /** Where conversion webhooks given as a Service are reached. */
  services: WebhookServiceResolver;
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

const rvOf = (crd: CRD) => Number(crd.metadata.resourceVersion ?? 0);
const groupOfName = (name: string) => name.slice(name.indexOf('.') + 1);

export class CRDController {
  private readonly crds = new Map<string, CRD>();
  /** Revision at which a CRD was deleted: older events of it are stale. */
  private readonly tombstones = new Map<string, number>();
  private readonly queue = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly served: ServedCRDs;
  private readonly cleanup: CRDCleanup;
  private processing: Promise<void> | null = null;
  private watcher: WatchStream | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private syncedResolve: (() => void) | null = null;
  private readonly syncedPromise: Promise<void>;

  constructor(private readonly o: CRDControllerOptions) {
    this.served = new ServedCRDs({
      registry: o.registry,
      services: o.services,
      openapi: o.openapi,
      terminating: (name) => this.terminating(name),
      later: (fn, ms) => this.later(fn, ms),
    });
    this.cleanup = new CRDCleanup({
      served: this.served,
      crd: (name) => this.crds.get(name),
      writeStatus: (current, next) => this.write(current, next, STATUS_WRITE),
      writeStatusAndFinalizers: (current, next) => this.write(current, next, FINALIZE_WRITE),
      now: () => this.now(),
      stopped: () => this.stopped,
      retry: (name) => this.later(() => this.enqueue(name)),
      sleep: (ms) => this.sleep(ms),
      pollMs: o.cleanupPollMs ?? 250,
      timeoutMs: o.cleanupTimeoutMs ?? 60_000,
    });
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
    this.served.stop();
  }

  /** The CRDs this controller serves right now (names). */
  servedNames(): string[] {
    return this.served.names();
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
      this.served.unserve(name);
      this.requeueGroup(groupOfName(name), name);
      return;
    }
    if (!sameNames(crd.spec.names, crd.status?.acceptedNames)) {
      const { names, namesAccepted, established } = calculateNames(crd, this.crds.values());
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
      setCondition(next, ESTABLISHED, this.now());
      await this.write(crd, next, STATUS_WRITE);
      return;
    }
    if (isConditionTrue(crd, 'Established')) this.served.serve(crd);
    else this.served.unserve(name);
    if (crd.metadata.deletionTimestamp && hasFinalizer(crd, CLEANUP_FINALIZER)) this.cleanup.start(name);
  }

  /** Whether the CRD is being deleted (or gone): its endpoints refuse creates. */
  private terminating(name: string): boolean {
    const crd = this.crds.get(name);
    return !crd || !!crd.metadata.deletionTimestamp || isConditionTrue(crd, 'Terminating');
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
        this.served.unserve(written.metadata.name);
      } else this.observe(written);
      return written;
    } catch (err) {
      // Changed or deleted meanwhile: the watch brings the newer object and another sync.
      if (err instanceof StatusError && (err.code === 409 || err.code === 404)) return null;
      throw err;
    }
  }
}

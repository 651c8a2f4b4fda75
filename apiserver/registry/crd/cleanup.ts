// The finalizer of a deleted CRD (apiextensions-apiserver's
// finalizing controller): mark it Terminating, delete every custom resource
// (their own finalizers respected) and wait until none is left, then record
// how that ended and drop the finalizer so the CRD goes.
import { logger } from '../../../shared/log';
import { systemContext } from '../context';
import type { GenericStore } from '../store';
import { TERMINATING, terminationFailed } from './conditions';
import type { ServedCRDs } from './serving';
import {
  CLEANUP_FINALIZER,
  hasFinalizer,
  isConditionTrue,
  setCondition,
  type CRD,
  type CRDCondition,
} from './types';

const log = logger('apiextensions');

/** A failed deletion, with the Terminating condition that says why. */
class CleanupFailure extends Error {
  constructor(readonly condition: CRDCondition) {
    super(condition.message);
  }
}

export class CRDCleanup {
  /** Cleanups running, by CRD name (one at a time per CRD). */
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly d: {
      served: ServedCRDs;
      /** The CRD as last seen. */
      crd(name: string): CRD | undefined;
      /** Writes next's status if the CRD is still at current's version (null when it was not). */
      writeStatus(current: CRD, next: CRD): Promise<CRD | null>;
      /** Same, with next's finalizers too. */
      writeStatusAndFinalizers(current: CRD, next: CRD): Promise<CRD | null>;
      now(): string;
      stopped(): boolean;
      /** Another sync of the CRD later (after a failure). */
      retry(name: string): void;
      sleep(ms: number): Promise<void>;
      /** How often to check whether the custom resources are gone. */
      pollMs: number;
      /** How long to wait for them before reporting InstanceDeletionCheck and retrying. */
      timeoutMs: number;
    },
  ) {}

  /** Starts the cleanup of a deleted CRD unless one is running. */
  start(name: string): void {
    if (this.running.has(name)) return;
    const p = this.cleanup(name)
      .catch((err) => {
        log.warn('CRD cleanup failed, retrying', { crd: name, err: String(err) });
        this.d.retry(name);
      })
      .finally(() => this.running.delete(name));
    this.running.set(name, p);
  }

  private async cleanup(name: string): Promise<void> {
    let crd = this.d.crd(name);
    if (!crd || !crd.metadata.deletionTimestamp || !hasFinalizer(crd, CLEANUP_FINALIZER)) return;
    let next = structuredClone(crd);
    setCondition(next, TERMINATING.inProgress, this.d.now());
    const marked = await this.d.writeStatus(crd, next);
    if (!marked) return;
    crd = marked;
    let cond: CRDCondition;
    const serving = this.d.served.get(name);
    if (this.d.served.overlapsBuiltin(crd)) {
      cond = TERMINATING.overlapping;
    } else if (isConditionTrue(crd, 'Established') && serving) {
      try {
        cond = await this.deleteInstances(serving.primary);
      } catch (err) {
        if (!(err instanceof CleanupFailure)) throw err;
        const failed = structuredClone(crd);
        setCondition(failed, err.condition, this.d.now());
        await this.d.writeStatus(crd, failed);
        throw err;
      }
    } else {
      cond = TERMINATING.neverEstablished;
    }
    crd = this.d.crd(name) ?? crd;
    next = structuredClone(crd);
    setCondition(next, cond, this.d.now());
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f) => f !== CLEANUP_FINALIZER);
    await this.d.writeStatusAndFinalizers(crd, next);
  }

  /** Deletes every custom resource (their own finalizers respected) and waits until none is left. */
  private async deleteInstances(store: GenericStore): Promise<CRDCondition> {
    const failed = (reason: string, message: string) =>
      new CleanupFailure(terminationFailed(reason, message));
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
    const deadline = Date.now() + this.d.timeoutMs;
    for (;;) {
      if (this.d.stopped()) throw new Error('stopped');
      const left = await all();
      if (!left.length) break;
      if (Date.now() >= deadline)
        throw failed(
          'InstanceDeletionCheck',
          'could not confirm zero CustomResources remaining: timed out waiting for the condition',
        );
      await this.d.sleep(this.d.pollMs);
    }
    return TERMINATING.completed;
  }
}

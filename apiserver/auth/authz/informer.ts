// An in-process informer over one resource of the registry: lists at
// resourceVersion 0 (the watch cache), then watches from the list's revision,
// and lists again whenever the watch ends. Authorizers keep their indexes
// current from its change notifications instead of reading per request.
import { logger } from '../../../shared/log';
import { systemContext } from '../../registry/context';
import type { Registry, ServedResource } from '../../registry/registry';

const log = logger('auth/informer');

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';
export type ChangeHandler = (type: ChangeType, obj: any, old: any | undefined) => void;

export const objectKey = (obj: any) =>
  obj?.metadata?.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : `${obj?.metadata?.name}`;

export class StoreInformer {
  readonly items = new Map<string, any>();
  private readonly handlers: ChangeHandler[] = [];
  private stopped = false;
  private started = false;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private current: { close(): void } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly registry: () => Registry,
    readonly group: string,
    readonly resource: string,
  ) {}

  onChange(h: ChangeHandler): void {
    this.handlers.push(h);
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Starts once; resolves when the first list is in. Never rejects (a missing resource counts as empty). */
  start(): Promise<void> {
    if (!this.started) {
      this.started = true;
      void this.run();
    }
    return this.synced ? Promise.resolve() : new Promise((r) => this.syncWaiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.current?.close();
    this.markSynced();
  }

  private markSynced(): void {
    this.synced = true;
    const w = this.syncWaiters;
    this.syncWaiters = [];
    for (const f of w) f();
  }

  private served(): ServedResource | undefined {
    try {
      return this.registry().preferred(this.group, this.resource);
    } catch {
      return undefined;
    }
  }

  private emit(type: ChangeType, obj: any, old: any | undefined): void {
    for (const h of this.handlers) {
      try {
        h(type, obj, old);
      } catch (err) {
        log.error('informer handler failed', { resource: this.resource, err: String(err) });
      }
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const s = this.served();
      if (!s) {
        // Not served (disabled by --runtime-config): nothing to index.
        this.markSynced();
        return;
      }
      try {
        const ctx = systemContext();
        const listed = await s.store.reader.list(ctx, { resourceVersion: '0' });
        if (this.stopped) return;
        const seen = new Set<string>();
        for (const o of listed.items) {
          const obj = s.fromStorage(o.obj);
          const k = objectKey(obj);
          seen.add(k);
          const old = this.items.get(k);
          this.items.set(k, obj);
          if (!old) this.emit('ADDED', obj, undefined);
          else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
            this.emit('MODIFIED', obj, old);
        }
        for (const [k, old] of [...this.items]) {
          if (seen.has(k)) continue;
          this.items.delete(k);
          this.emit('DELETED', old, old);
        }
        this.markSynced();
        const w = await s.store.reader.watch(ctx, { resourceVersion: String(listed.rv) });
        this.current = w;
        if (this.stopped) {
          w.close();
          return;
        }
        for await (const batch of w) {
          let failed = false;
          for (const item of batch) {
            if (item.type === 'ERROR') {
              failed = true;
              break;
            }
            if (item.type === 'BOOKMARK' || !item.object) continue;
            const obj = s.fromStorage(item.object.obj);
            const k = objectKey(obj);
            const old = this.items.get(k);
            if (item.type === 'DELETED') {
              this.items.delete(k);
              this.emit('DELETED', obj, old);
            } else {
              this.items.set(k, obj);
              this.emit(old ? 'MODIFIED' : 'ADDED', obj, old);
            }
          }
          if (failed) break;
        }
        this.current = null;
      } catch (err) {
        if (this.stopped) return;
        // Readers must not wait forever on a store that fails: they see what is indexed so far.
        this.markSynced();
        log.v(2)?.info('informer relisting', { resource: this.resource, err: String(err) });
      }
      if (this.stopped) return;
      await new Promise<void>((r) => {
        this.retryTimer = setTimeout(r, 200);
        this.retryTimer.unref?.();
      });
    }
  }
}

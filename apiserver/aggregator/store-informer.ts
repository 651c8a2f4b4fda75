// A list+watch of one store inside the apiserver (the aggregator's informers):
// current objects by "namespace/name", and a callback per change. Restarts the
// watch after a failure with a fresh list, reporting what vanished meanwhile.
import { logger } from '../../shared/log';
import { systemContext } from '../registry/context';
import type { GenericStore } from '../registry/store';
import type { WatchStream } from '../registry/reads';

const log = logger('aggregator');

export type InformerEvent = 'ADDED' | 'MODIFIED' | 'DELETED';

const keyOf = (obj: any) => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name}`;

export class StoreInformer {
  readonly items = new Map<string, any>();
  private watcher: WatchStream | null = null;
  private stopped = false;
  private syncedResolve!: () => void;
  readonly synced = new Promise<void>((r) => (this.syncedResolve = r));

  constructor(
    private readonly what: string,
    private readonly store: () => GenericStore | undefined,
    private readonly onEvent: (type: InformerEvent, obj: any) => void,
  ) {}

  get(namespace: string, name: string): any | undefined {
    return this.items.get(`${namespace}/${name}`);
  }

  start(): Promise<void> {
    void this.run();
    return this.synced;
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
  }

  private async run(): Promise<void> {
    let backoff = 200;
    while (!this.stopped) {
      const store = this.store();
      if (!store) {
        // Not served (disabled by --runtime-config): nothing to watch.
        this.syncedResolve();
        return;
      }
      try {
        const list = await store.reader.list(systemContext(), {});
        const seen = new Set<string>();
        for (const item of list.items) {
          const k = keyOf(item.obj);
          seen.add(k);
          const known = this.items.get(k);
          if (known?.metadata?.resourceVersion === item.obj.metadata.resourceVersion) continue;
          this.items.set(k, item.obj);
          this.onEvent(known ? 'MODIFIED' : 'ADDED', item.obj);
        }
        for (const [k, obj] of [...this.items]) {
          if (seen.has(k)) continue;
          this.items.delete(k);
          this.onEvent('DELETED', obj);
        }
        this.syncedResolve();
        if (this.stopped) return;
        const w = await store.reader.watch(systemContext(), { resourceVersion: String(list.rv) });
        this.watcher = w;
        backoff = 200;
        for await (const batch of w) {
          for (const item of batch) {
            const obj = item.object?.obj;
            if (!obj || (item.type !== 'ADDED' && item.type !== 'MODIFIED' && item.type !== 'DELETED'))
              continue;
            if (item.type === 'DELETED') this.items.delete(keyOf(obj));
            else this.items.set(keyOf(obj), obj);
            this.onEvent(item.type, obj);
          }
        }
        this.watcher = null;
      } catch (err) {
        if (this.stopped) return;
        log.warn('list/watch failed, retrying', { what: this.what, err: String(err) });
        await new Promise((r) => setTimeout(r, backoff).unref());
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }
}

// SharedInformerFactory: one informer (one reflector, one cache) per resource,
// namespace and selector, however many controllers ask for it.
import { setMaxListeners } from 'node:events';
import type { Client } from '../client/client';
import type { ResourceClient } from '../client/resource';
import type { ResourceSpec } from '../client/gvr';
import { realClock, type Clock } from '../client/clock';
import {
  selectorString,
  type KubeObject,
  type ListOptions,
  type SelectorInput,
  type WatchOptions,
} from '../client/types';
import type { ListerWatcher, WatchInterface } from './reflector';
import { SharedIndexInformer, type SharedInformerOptions } from './shared-informer';
import type { Indexers } from './store';

export interface ListWatchFilter {
  /** Watch only this namespace ("" / unset: all). */
  namespace?: string;
  labelSelector?: SelectorInput;
  fieldSelector?: SelectorInput;
}

/** A ListerWatcher over one resource client, with fixed selectors (cache.NewFilteredListWatchFromClient). */
export function listWatchFor<T extends KubeObject>(
  rc: ResourceClient<T>,
  filter: ListWatchFilter = {},
): ListerWatcher<T> {
  const client = filter.namespace ? rc.namespace(filter.namespace) : rc;
  const labelSelector = selectorString(filter.labelSelector);
  const fieldSelector = selectorString(filter.fieldSelector);
  return {
    list: (o: ListOptions) => client.list({ ...o, labelSelector, fieldSelector }),
    watch: (o: WatchOptions): Promise<WatchInterface<T>> =>
      client.watch({ ...o, labelSelector, fieldSelector }),
  };
}

export interface FactoryOptions {
  /** Default resync of informers (ms, 0: none). */
  resyncPeriodMs?: number;
  /** Default namespace of every informer ("" = all). */
  namespace?: string;
  labelSelector?: SelectorInput;
  fieldSelector?: SelectorInput;
  /** Applied to every cached object of every informer (e.g. drop managedFields). */
  transform?: (obj: KubeObject) => KubeObject;
  clock?: Clock;
  reflector?: SharedInformerOptions<KubeObject>['reflector'];
}

export interface InformerRequest<T> extends ListWatchFilter {
  resyncPeriodMs?: number;
  indexers?: Indexers<T>;
}

export class SharedInformerFactory {
  private readonly informers = new Map<string, SharedIndexInformer<any>>();
  private readonly started = new Set<string>();
  private readonly running: Promise<void>[] = [];
  private readonly ac = new AbortController();
  private shuttingDown = false;
  private readonly clock: Clock;

  constructor(
    private readonly client: Client,
    private readonly opts: FactoryOptions = {},
  ) {
    this.clock = opts.clock ?? realClock;
    // Every informer of the factory listens to this one signal: a manager runs dozens.
    setMaxListeners(0, this.ac.signal);
  }

  /**
   * The shared informer of a resource ({group, version, resource} or a built-in
   * name like "pods"), created on first request. Indexers given later are added.
   */
  forResource<T extends KubeObject = KubeObject>(
    spec: ResourceSpec | string,
    req: InformerRequest<T> = {},
  ): SharedIndexInformer<T> {
    const rc = this.client.resource<T>(spec);
    const filter: ListWatchFilter = {
      namespace: req.namespace ?? this.opts.namespace ?? '',
      labelSelector: selectorString(req.labelSelector ?? this.opts.labelSelector),
      fieldSelector: selectorString(req.fieldSelector ?? this.opts.fieldSelector),
    };
    if (!rc.info.namespaced) filter.namespace = '';
    const { group, version, resource } = rc.info;
    const key = `${group}/${version}/${resource}|${filter.namespace}|${filter.labelSelector ?? ''}|${filter.fieldSelector ?? ''}`;
    let inf = this.informers.get(key) as SharedIndexInformer<T> | undefined;
    if (!inf) {
      inf = new SharedIndexInformer<T>(listWatchFor(rc, filter), {
        name: `${group ? `${resource}.${group}` : resource}${filter.namespace ? ` in ${filter.namespace}` : ''}`,
        resyncPeriodMs: req.resyncPeriodMs ?? this.opts.resyncPeriodMs ?? 0,
        indexers: req.indexers ? { namespace: nsIndex, ...req.indexers } : undefined,
        clock: this.clock,
        transform: this.opts.transform as ((o: T) => T) | undefined,
        reflector: this.opts.reflector,
      });
      this.informers.set(key, inf);
      if (this.ac.signal.aborted) void inf.stop();
    } else if (req.indexers) {
      const fresh: Indexers<T> = {};
      for (const [n, f] of Object.entries(req.indexers)) if (!inf.indexer.hasIndexer(n)) fresh[n] = f;
      if (Object.keys(fresh).length) inf.addIndexers(fresh);
    }
    return inf;
  }

  /** Starts every informer created so far and not yet started (call again after adding more). */
  start(signal?: AbortSignal): void {
    if (this.shuttingDown) return;
    if (signal && !signal.aborted) signal.addEventListener('abort', () => this.ac.abort(), { once: true });
    else if (signal?.aborted) this.ac.abort();
    for (const [key, inf] of this.informers) {
      if (this.started.has(key)) continue;
      this.started.add(key);
      this.running.push(inf.run(this.ac.signal));
    }
  }

  /** Waits until every started informer has synced; the map tells which did (false on abort). */
  async waitForCacheSync(signal?: AbortSignal): Promise<Map<string, boolean>> {
    const out = new Map<string, boolean>();
    await Promise.all(
      [...this.informers].map(async ([key, inf]) => {
        if (!this.started.has(key)) return;
        out.set(key, await inf.whenSynced(signal ?? this.ac.signal));
      }),
    );
    return out;
  }

  /** Stops all informers and waits for them to end. */
  async shutdown(): Promise<void> {
    this.shuttingDown = true;
    this.ac.abort();
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
    await Promise.all(this.running);
  }
}

function nsIndex(obj: KubeObject): string[] {
  return [obj.metadata?.namespace ?? ''];
}

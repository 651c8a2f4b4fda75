// Listers: reads from an informer's cache by name, namespace and label
// selector (client-go's generated listers, generically). What they return is
// shared with the cache: copy before changing it.
import { parseLabelSelector, type LabelSelector } from '../api/labels';
import type { KubeObject } from '../client/types';
import { NAMESPACE_INDEX, type Indexer } from './store';

export type SelectorArg = LabelSelector | string | Record<string, string> | undefined;

function toSelector(s: SelectorArg): LabelSelector | undefined {
  if (s === undefined) return undefined;
  if (typeof s === 'string') return s ? parseLabelSelector(s) : undefined;
  if (typeof (s as LabelSelector).matches === 'function')
    return (s as LabelSelector).empty ? undefined : (s as LabelSelector);
  const entries = Object.entries(s as Record<string, string>);
  return entries.length ? parseLabelSelector(entries.map(([k, v]) => `${k}=${v}`).join(',')) : undefined;
}

function filter<T extends KubeObject>(objs: Iterable<T>, sel: LabelSelector | undefined): T[] {
  const out: T[] = [];
  for (const o of objs) if (!sel || sel.matches(o.metadata?.labels)) out.push(o);
  return out;
}

export class NamespaceLister<T extends KubeObject = KubeObject> {
  constructor(
    private readonly indexer: Indexer<T>,
    readonly namespace: string,
  ) {}

  list(selector?: SelectorArg): T[] {
    return filter(this.indexer.byIndex(NAMESPACE_INDEX, this.namespace), toSelector(selector));
  }

  get(name: string): T | undefined {
    return this.indexer.getByKey(`${this.namespace}/${name}`);
  }
}

export class Lister<T extends KubeObject = KubeObject> {
  constructor(readonly indexer: Indexer<T>) {}

  /** Everything (in all namespaces) matching the selector. */
  list(selector?: SelectorArg): T[] {
    return filter(this.indexer.values(), toSelector(selector));
  }

  /** A cluster-scoped object by name, or a namespaced one by "namespace/name". */
  get(key: string): T | undefined {
    return this.indexer.getByKey(key);
  }

  namespace(ns: string): NamespaceLister<T> {
    return new NamespaceLister<T>(this.indexer, ns);
  }

  /** Objects by a custom index value. */
  byIndex(indexName: string, value: string): T[] {
    return this.indexer.byIndex(indexName, value);
  }
}

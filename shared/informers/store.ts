// The informer cache (client-go's cache.Indexer / threadSafeStore): objects by
// namespace/name key, with named indexes (the namespace index always) kept up
// to date on every write. Objects are stored as received: callers must not
// mutate what the cache hands out.
import type { KubeObject } from '../client/types';

/** A delete the informer did not see: the object was gone at a relist. Its state is the last one known. */
export class DeletedFinalStateUnknown<T = KubeObject> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

export type KeyFunc<T> = (obj: T) => string;
export type IndexFunc<T> = (obj: T) => string[];
export type Indexers<T> = Record<string, IndexFunc<T>>;

export const NAMESPACE_INDEX = 'namespace';

/** "namespace/name", or "name" for cluster-scoped objects (cache.MetaNamespaceKeyFunc). */
export function metaNamespaceKey(obj: unknown): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  const m = (obj as KubeObject)?.metadata;
  if (!m) throw new Error('object has no metadata');
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

export function metaNamespaceIndex(obj: KubeObject): string[] {
  return [obj.metadata?.namespace ?? ''];
}

/** The object under a possible tombstone (for delete handlers). */
export function unwrapTombstone<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

export class Indexer<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name → indexed value → keys */
  private readonly indices = new Map<string, Index>();

  constructor(
    readonly keyFunc: KeyFunc<T> = metaNamespaceKey,
    indexers: Indexers<T> = { [NAMESPACE_INDEX]: metaNamespaceIndex },
  ) {
    this.addIndexers(indexers);
  }

  /** Adds indexes; existing items are indexed at once (allowed any time, as in client-go ≥1.29). */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexers.has(name)) throw new Error(`indexer conflict: ${name}`);
      this.indexers.set(name, fn);
      const index: Index = new Map();
      this.indices.set(name, index);
      for (const [key, obj] of this.items) addTo(index, fn(obj), key);
    }
  }

  hasIndexer(name: string): boolean {
    return this.indexers.has(name);
  }

  get size(): number {
    return this.items.size;
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  get(obj: T): T | undefined {
    return this.items.get(this.keyFunc(obj));
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  /** Iterates without copying. */
  values(): IterableIterator<T> {
    return this.items.values();
  }

  /** Adds or replaces; returns the previous object. */
  set(key: string, obj: T): T | undefined {
    const old = this.items.get(key);
    this.items.set(key, obj);
    this.reindex(key, old, obj);
    return old;
  }

  add(obj: T): void {
    this.set(this.keyFunc(obj), obj);
  }

  update(obj: T): void {
    this.set(this.keyFunc(obj), obj);
  }

  deleteKey(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.items.delete(key);
    this.reindex(key, old, undefined);
    return old;
  }

  delete(obj: T | DeletedFinalStateUnknown<T>): T | undefined {
    return this.deleteKey(obj instanceof DeletedFinalStateUnknown ? obj.key : this.keyFunc(obj));
  }

  /** Replaces the whole content. */
  replace(objs: T[]): void {
    this.items.clear();
    for (const index of this.indices.values()) index.clear();
    for (const o of objs) this.add(o);
  }

  /** Objects sharing an indexed value with obj. */
  index(indexName: string, obj: T): T[] {
    const fn = this.indexer(indexName);
    const index = this.indices.get(indexName)!;
    const keys = new Set<string>();
    for (const v of fn(obj)) for (const k of keysOf(index.get(v))) keys.add(k);
    return [...keys].map((k) => this.items.get(k)!);
  }

  /** Objects whose index function gives value. */
  byIndex(indexName: string, value: string): T[] {
    this.indexer(indexName);
    const keys = this.indices.get(indexName)!.get(value);
    if (keys === undefined) return [];
    if (typeof keys === 'string') return [this.items.get(keys)!];
    const out: T[] = [];
    for (const k of keys) out.push(this.items.get(k)!);
    return out;
  }

  indexKeys(indexName: string, value: string): string[] {
    this.indexer(indexName);
    return [...keysOf(this.indices.get(indexName)!.get(value))];
  }

  /** The values an index currently holds. */
  listIndexValues(indexName: string): string[] {
    this.indexer(indexName);
    return [...this.indices.get(indexName)!.keys()];
  }

  private indexer(name: string): IndexFunc<T> {
    const fn = this.indexers.get(name);
    if (!fn) throw new Error(`index with name ${name} does not exist`);
    return fn;
  }

  private reindex(key: string, old: T | undefined, obj: T | undefined): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      const before = old === undefined ? [] : fn(old);
      const after = obj === undefined ? [] : fn(obj);
      // The usual case: one unchanged value (namespace).
      if (before.length === 1 && after.length === 1 && before[0] === after[0]) continue;
      for (const v of before) {
        if (after.includes(v)) continue;
        const keys = index.get(v);
        if (keys === key) index.delete(v);
        else if (typeof keys === 'object') {
          keys.delete(key);
          if (keys.size === 1) index.set(v, keys.values().next().value!);
        }
      }
      addTo(
        index,
        after.filter((v) => !before.includes(v)),
        key,
      );
    }
  }
}

/**
 * Indexed value → the key of the one object with it, or the keys of several: most values of
 * many indexes (a uid, a node's name among a few pods) belong to one object, and a Set of one
 * costs ~200 bytes.
 */
type Index = Map<string, string | Set<string>>;

function keysOf(keys: string | Set<string> | undefined): Iterable<string> {
  return keys === undefined ? [] : typeof keys === 'string' ? [keys] : keys;
}

function addTo(index: Index, values: string[], key: string): void {
  for (const v of values) {
    const keys = index.get(v);
    if (keys === undefined) index.set(v, key);
    else if (typeof keys === 'string') {
      if (keys !== key) index.set(v, new Set([keys, key]));
    } else keys.add(key);
  }
}

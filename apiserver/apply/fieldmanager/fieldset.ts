// Sets of field paths (a trie keyed by serialised path elements) and their
// FieldsV1 encoding, as structured-merge-diff's fieldpath.Set: a node is a
// member (the path itself is in the set) and/or has children. FieldsV1 writes
// each node as an object keyed by its elements in sorted order, leaves as {},
// and "." first when a node with children is also a member.
//
// Sets are immutable once built: operations return new sets and may share
// subtrees with their inputs.
import { isObject } from '../json-util';
import { comparePE, parsePathElement, type Path, type PathElement } from './path';
import { boundedMemo } from '../../../shared/heap/bounded-memo';

/** One element of a level: whether its path is a member, and the paths below it. */
export interface Entry {
  readonly pe: PathElement;
  readonly member: boolean;
  readonly children: FieldSet | undefined;
}

export class FieldSetDecodeError extends Error {
  override name = 'FieldSetDecodeError';
}

export class FieldSet {
  private readonly m = new Map<string, Entry>();
  private sorted: Entry[] | undefined;

  static readonly EMPTY = new FieldSet();

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (builder use only: sets must not change once shared). */
  insert(path: Path): void {
    if (path.length === 0) return;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let node: FieldSet = this;
    for (let i = 0; i < path.length; i++) {
      const pe = path[i];
      const last = i === path.length - 1;
      const e = node.m.get(pe.key);
      node.sorted = undefined;
      if (last) {
        if (!e) node.m.set(pe.key, { pe, member: true, children: undefined });
        else if (!e.member) node.m.set(pe.key, { pe, member: true, children: e.children });
        return;
      }
      let c = e?.children;
      if (!c) {
        c = new FieldSet();
        node.m.set(pe.key, { pe, member: e?.member ?? false, children: c });
      }
      node = c;
    }
  }

  /** Removes empty child nodes left behind by a builder. */
  private prune(): FieldSet {
    for (const e of this.m.values()) {
      if (e.children && e.children.isEmpty()) {
        if (e.member) this.m.set(e.pe.key, { pe: e.pe, member: true, children: undefined });
        else this.m.delete(e.pe.key);
      }
    }
    return this;
  }

  isEmpty(): boolean {
    return this.m.size === 0;
  }

  /** Number of paths in the set. */
  get size(): number {
    let n = 0;
    for (const e of this.m.values()) n += (e.member ? 1 : 0) + (e.children?.size ?? 0);
    return n;
  }

  has(path: Path): boolean {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    let node: FieldSet | undefined = this;
    for (let i = 0; i < path.length && node; i++) {
      const e: Entry | undefined = node.m.get(path[i].key);
      if (!e) return false;
      if (i === path.length - 1) return e.member;
      node = e.children;
    }
    return false;
  }

  /** Whether the element is a member at this level. */
  hasMember(pe: PathElement): boolean {
    return this.m.get(pe.key)?.member ?? false;
  }

  /** The set of paths below `pe` (fieldpath.Set.WithPrefix). */
  child(pe: PathElement): FieldSet | undefined {
    return this.m.get(pe.key)?.children;
  }

  /** This level's entries in structured-merge-diff order. */
  entries(): readonly Entry[] {
    if (this.sorted) return this.sorted;
    const out: Entry[] = [];
    for (const e of this.m.values()) out.push(e);
    return (this.sorted = sortEntries(out));
  }

  union(o: FieldSet): FieldSet {
    if (o.isEmpty() || o === this) return this;
    if (this.isEmpty()) return o;
    const out = new FieldSet();
    let changed = false;
    for (const [k, e] of this.m) out.m.set(k, e);
    for (const [k, e] of o.m) {
      const a = out.m.get(k);
      if (!a) {
        out.m.set(k, e);
        changed = true;
        continue;
      }
      const children = a.children && e.children ? a.children.union(e.children) : (a.children ?? e.children);
      const member = a.member || e.member;
      if (member !== a.member || children !== a.children) {
        out.m.set(k, { pe: a.pe, member, children });
        changed = true;
      }
    }
    return changed ? out : this;
  }

  /** Members of this set that are not members of `o` (child nodes are compared member by member). */
  difference(o: FieldSet): FieldSet {
    if (o.isEmpty() || this.isEmpty()) return this;
    const out = new FieldSet();
    let changed = false;
    for (const [k, e] of this.m) {
      const b = o.m.get(k);
      if (!b) {
        out.m.set(k, e);
        continue;
      }
      const member = e.member && !b.member;
      const children = e.children && b.children ? e.children.difference(b.children) : e.children;
      if (member === e.member && children === e.children) {
        out.m.set(k, e);
        continue;
      }
      changed = true;
      if (member || (children && !children.isEmpty())) out.m.set(k, { pe: e.pe, member, children });
    }
    return changed ? out : this;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    if (o.isEmpty() || this.isEmpty()) return out;
    for (const [k, e] of this.m) {
      const b = o.m.get(k);
      if (!b) continue;
      const member = e.member && b.member;
      const children = e.children && b.children ? e.children.intersection(b.children) : undefined;
      if (member || (children && !children.isEmpty())) out.m.set(k, { pe: e.pe, member, children });
    }
    return out;
  }

  /** Removes every member of `o` together with everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    if (o.isEmpty() || this.isEmpty()) return this;
    const out = new FieldSet();
    let changed = false;
    for (const [k, e] of this.m) {
      const b = o.m.get(k);
      if (!b) {
        out.m.set(k, e);
        continue;
      }
      if (b.member) {
        changed = true;
        continue;
      }
      const children = e.children && b.children ? e.children.recursiveDifference(b.children) : e.children;
      if (children === e.children) {
        out.m.set(k, e);
        continue;
      }
      changed = true;
      if (e.member || (children && !children.isEmpty()))
        out.m.set(k, { pe: e.pe, member: e.member, children });
    }
    return changed ? out : this;
  }

  equals(o: FieldSet): boolean {
    if (this.m.size !== o.m.size) return false;
    for (const [k, e] of this.m) {
      const b = o.m.get(k);
      if (!b || b.member !== e.member) return false;
      const ce = e.children && !e.children.isEmpty() ? e.children : undefined;
      const cb = b.children && !b.children.isEmpty() ? b.children : undefined;
      if (!ce !== !cb) return false;
      if (ce && cb && !ce.equals(cb)) return false;
    }
    return true;
  }

  /** Calls fn for every path: at each level members first, then children, both in order. */
  forEachPath(fn: (p: Path) => void, prefix: PathElement[] = []): void {
    const entries = this.entries();
    for (const e of entries) if (e.member) fn([...prefix, e.pe]);
    for (const e of entries) {
      if (e.children) {
        prefix.push(e.pe);
        e.children.forEachPath(fn, prefix);
        prefix.pop();
      }
    }
  }

  paths(): Path[] {
    const out: Path[] = [];
    this.forEachPath((p) => out.push(p));
    return out;
  }

  /** Builds a set from the given node map (internal: used by walkers that build sets bottom-up). */
  static fromEntries(entries: Iterable<Entry>): FieldSet {
    const s = new FieldSet();
    for (const e of entries) s.m.set(e.pe.key, e);
    return s.prune();
  }

  /**
   * A set of one level's entries with distinct elements, none with empty children (internal:
   * walkers that build sets bottom-up). Takes the array and sorts it in place as the level's order.
   */
  static fromDistinctEntries(entries: Entry[]): FieldSet {
    const s = new FieldSet();
    for (let i = 0; i < entries.length; i++) s.m.set(entries[i].pe.key, entries[i]);
    s.sorted = sortEntries(entries);
    return s;
  }

  /** Entries of this level, unsorted (internal). */
  rawEntries(): IterableIterator<Entry> {
    return this.m.values();
  }

  toFieldsV1(): Record<string, unknown> {
    return emit(this, false);
  }

  /** JSON.stringify(this.toFieldsV1()), written from the entries. */
  jsonText(): string {
    return emitText(this, false);
  }

  toString(): string {
    return this.paths()
      .map((p) => p.map((pe) => pe.key).join('/'))
      .join('\n');
  }
}

const byPE = (a: Entry, b: Entry) => comparePE(a.pe, b.pe);

/**
 * Sorts a level's entries in place. Most levels are short, and Array.prototype.sort copies
 * every array into a work array first (a ninth of what a pod's create allocated): short
 * ones are sorted by insertion, long ones (a big map's keys, a long list) by the builtin.
 */
function sortEntries(a: Entry[]): Entry[] {
  if (a.length > 24) return a.sort(byPE);
  for (let i = 1; i < a.length; i++) {
    const e = a[i];
    let j = i - 1;
    while (j >= 0 && comparePE(a[j].pe, e.pe) > 0) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = e;
  }
  return a;
}

function emit(s: FieldSet, self: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const entries = s.entries();
  if (self && entries.length > 0) out['.'] = {};
  for (const e of entries) {
    out[e.pe.key] = e.children && !e.children.isEmpty() ? emit(e.children, e.member) : {};
  }
  return out;
}

/** emit() as JSON text: the same keys in the same order. */
function emitText(s: FieldSet, self: boolean): string {
  const entries = s.entries();
  let out = self && entries.length > 0 ? '{".":{}' : '{';
  for (const e of entries) {
    if (out.length > 1) out += ',';
    out += quoted(e.pe.key);
    out += e.children && !e.children.isEmpty() ? `:${emitText(e.children, e.member)}` : ':{}';
  }
  return `${out}}`;
}

/** Path element keys repeat across objects ("f:metadata", a container's k:{"name":...}). */
const quoted = boundedMemo(4096, (key) => JSON.stringify(key));

const decoded = new WeakMap<object, FieldSet>();

/** Parses a FieldsV1 object (cached per object: callers must not modify it afterwards). */
export function fromFieldsV1(v: unknown): FieldSet {
  if (v === null || v === undefined) return FieldSet.EMPTY;
  if (!isObject(v)) throw new FieldSetDecodeError('FieldsV1 must be a JSON object');
  const hit = decoded.get(v);
  if (hit) return hit;
  const s = read(v).children ?? FieldSet.EMPTY;
  decoded.set(v, s);
  return s;
}

function read(o: Record<string, unknown>): { children: FieldSet | undefined; member: boolean } {
  let member = false;
  const entries: Entry[] = [];
  for (const key of Object.keys(o)) {
    const v = o[key];
    if (key === '.') {
      member = true;
      continue;
    }
    let pe: PathElement | undefined;
    try {
      pe = parsePathElement(key);
    } catch (e) {
      throw new FieldSetDecodeError(`parsing key as path element: ${(e as Error).message}`);
    }
    if (!pe) continue; // unknown element types are dropped, as structured-merge-diff does
    if (v !== null && !isObject(v)) throw new FieldSetDecodeError(`expected an object for ${key}`);
    const sub = v ? read(v) : { children: undefined, member: true };
    entries.push({ pe, member: sub.member, children: sub.children });
  }
  if (entries.length === 0) return { children: undefined, member: true };
  return { children: FieldSet.fromEntries(entries), member };
}

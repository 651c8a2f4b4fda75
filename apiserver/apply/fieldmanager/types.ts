// The type model server-side apply merges and tracks ownership with: the
// shape structured-merge-diff's schema gives (scalar, list, map), with the
// merge markers of each node. Built-in kinds get it from shared/api's schema
// (schema-model.ts); custom resources plug in their structural schema through
// the same interface, or use the unstructured model.

export type TypeNode = ScalarNode | ListNode | MapNode | DeducedNode;

export interface ScalarNode {
  readonly kind: 'scalar';
}

export interface ListNode {
  readonly kind: 'list';
  /** atomic: replaced as a whole; set: items by value; map: items by key fields. */
  readonly listType: 'atomic' | 'set' | 'map';
  /** Key field names of a map list, in declaration order. */
  readonly keys: readonly string[];
  element(): TypeNode;
  /** A key field's default, used when an item omits it (e.g. ports' protocol TCP). */
  keyDefault?(field: string): unknown;
}

export interface MapNode {
  readonly kind: 'map';
  /** An atomic map/struct is owned and replaced as a whole. */
  readonly atomic: boolean;
  /** The type of a declared (struct) field, or undefined. */
  field(name: string): TypeNode | undefined;
  /** The type of keys that are not declared fields (map values, preserved unknown fields); undefined: none allowed. */
  readonly elements: TypeNode | undefined;
  /**
   * Declared fields a Go object always carries (value structs, fields without
   * omitempty), so a JSON object lacking them compares as Kubernetes would.
   * 'struct' compares as {}, 'null' as null.
   */
  zeroValue?(name: string): 'struct' | 'null' | undefined;
  /** The fields zeroValue answers for. */
  zeroFields?(): readonly string[];
}

/** No schema: objects are granular maps of deduced values, lists atomic (structured-merge-diff's deduced type). */
export interface DeducedNode {
  readonly kind: 'deduced';
}

export const SCALAR: ScalarNode = { kind: 'scalar' };
export const DEDUCED: DeducedNode = { kind: 'deduced' };

/** What a type model provides: the root type of an object of one kind and version. */
export interface TypeModel {
  root(): TypeNode;
}

/** The model of objects without a schema: everything deduced. */
export const UNSTRUCTURED: TypeModel = { root: () => DEDUCED };

/** Resolves a deduced node against a value: objects are granular maps, the rest leaves. */
export function isDeducedMap(t: TypeNode, v: unknown): boolean {
  return t.kind === 'deduced' && typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a node, given its value, is owned as a whole. */
export function isAtomic(t: TypeNode, v: unknown): boolean {
  switch (t.kind) {
    case 'scalar':
      return true;
    case 'list':
      return t.listType === 'atomic';
    case 'map':
      return t.atomic;
    case 'deduced':
      return !isDeducedMap(t, v);
  }
}

/** A map node's type for key `name`: the declared field, else the element type. */
export function fieldType(t: MapNode, name: string): TypeNode | undefined {
  return t.field(name) ?? t.elements;
}

// Per-kind semantic validation rules, registered by group and kind.
import type { FieldError } from '../field-errors';
import type { Obj } from './path';

export interface KindContext {
  group: string;
  version: string;
  kind: string;
}

export interface KindRules {
  /** Spec rules on create (ObjectMeta is checked by the caller). Also run on update unless updateOnly. */
  validate?(obj: Obj, ctx: KindContext): FieldError[];
  /** Extra rules on update: immutable fields and allowed transitions. */
  validateUpdate?(obj: Obj, old: Obj, ctx: KindContext): FieldError[];
  /** Rules of the status strategy on a /status write (besides metadata and the schema). */
  validateStatusUpdate?(obj: Obj, old: Obj, ctx: KindContext): FieldError[];
  /** Kubernetes runs different rules on update: validate() is not rerun. */
  updateOnly?: boolean;
  /** The kind validates its own metadata (core/v1 Event). */
  ownMetadata?: boolean;
}

const rules = new Map<string, KindRules>();

export function registerKindRules(group: string, kind: string, r: KindRules): void {
  rules.set(`${group}/${kind}`, r);
}

export const kindRules = (group: string, kind: string): KindRules | undefined =>
  rules.get(`${group}/${kind}`);

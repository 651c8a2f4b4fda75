// Per-type rules on top of the generic store, as Kubernetes' registry
// strategies: what create/update/delete do beyond the generic behaviour.
import type { FieldError } from '../../shared/api/field-errors';
import type { RequestContext } from './context';
import type { FieldLabels } from './field-labels';

export interface Strategy {
  /** PUT of a missing object creates it. */
  allowCreateOnUpdate?: boolean;
  /** PUT without metadata.resourceVersion is accepted (last write wins). Default true. */
  allowUnconditionalUpdate?: boolean;
  /** The status written on create is kept (nodes); by default a status subresource means create clears it. */
  keepStatusOnCreate?: boolean;
  /** Set on create, compared on update: `spec` changes bump metadata.generation. */
  tracksGeneration?: boolean;

  /** Clears/sets server-owned fields before defaults and validation (status on create...). */
  prepareForCreate?(obj: any, ctx: RequestContext): void;
  prepareForUpdate?(obj: any, old: any, ctx: RequestContext): void;
  /**
   * Authorization that depends on the object (RBAC escalation prevention): throws a
   * 403 StatusError. Runs after defaulting, before admission, on dry-run too.
   */
  authorizeWrite?(obj: any, old: any | null, ctx: RequestContext): Promise<void>;
  validate?(obj: any, ctx: RequestContext): FieldError[];
  validateUpdate?(obj: any, old: any, ctx: RequestContext): FieldError[];
  /** The field labels each served version accepts and the values they select (field-labels.ts). */
  fieldLabels?: FieldLabels;
  /** Keys written with a TTL (Events: --event-ttl). */
  ttlSeconds?(obj: any): number | undefined;

  /**
   * Graceful deletion: the grace period to use, or undefined when the type is
   * deleted at once. Called with the requested period (DeleteOptions).
   */
  gracePeriod?(obj: any, requested: number | undefined): number | undefined;
  /** DELETE answers with the object instead of a Success Status. */
  returnDeletedObject?: boolean;
  /** The default propagationPolicy (Background for most types). */
  defaultPropagation?: 'Orphan' | 'Background' | 'Foreground';

  /** Side effects (allocations) before a create is written; undone by afterCreateFailed. */
  beforeCreate?(obj: any, ctx: RequestContext): Promise<void> | void;
  afterCreateFailed?(obj: any): Promise<void> | void;
  beforeUpdate?(obj: any, old: any, ctx: RequestContext): Promise<void> | void;
  afterDelete?(obj: any): Promise<void> | void;
  /**
   * Custom delete (namespaces): returns the object to write instead of
   * deleting, or null to delete it now.
   */
  onDelete?(obj: any, ctx: RequestContext): any | null;
  /** May an object with deletionTimestamp and no finalizers be removed by an update? */
  deleteOnUpdateWhenFinalized?(obj: any): boolean;
}

/** Statuses and scale are served by subresource strategies. */
export interface SubresourceStrategy {
  /** A status write: validated with the status rules only. */
  statusOnly?: boolean;
  /** The server's own write (pods/binding): skips the update rules users are held to. */
  trusted?: boolean;
  /** Copies what this subresource may change from `incoming` onto a copy of `old`. */
  merge(incoming: any, old: any, ctx: RequestContext): any;
  validate?(obj: any, old: any, ctx: RequestContext): FieldError[];
}

/** Writes of the whole object (spec and status at once), for server-side subresources like pods/binding. */
export const wholeObject: SubresourceStrategy = { trusted: true, merge: (incoming) => incoming };

// The object model the client hands out: plain JSON-shaped objects, as the
// JSON codec and the Protobuf codec both produce them.
import type { LabelSelector } from '../api/labels';
import type { FieldSelector } from '../api/fields';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: any[];
  [k: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [k: string]: any;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface KubeList<T = KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

/** A selector as a string ("a=b,c!=d"), a parsed selector, or a map of equalities. */
export type SelectorInput = string | Record<string, string> | { toString(): string };

export function selectorString(
  s: SelectorInput | LabelSelector | FieldSelector | undefined,
): string | undefined {
  if (s === undefined || s === null) return undefined;
  if (typeof s === 'string') return s || undefined;
  if (Object.getPrototypeOf(s) === Object.prototype) {
    const parts = Object.entries(s as Record<string, string>).map(([k, v]) => `${k}=${v}`);
    return parts.length ? parts.join(',') : undefined;
  }
  const text = String(s);
  return text || undefined;
}

export interface GetOptions {
  resourceVersion?: string;
  signal?: AbortSignal;
}

export interface ListOptions {
  labelSelector?: SelectorInput;
  fieldSelector?: SelectorInput;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface WatchOptions {
  labelSelector?: SelectorInput;
  fieldSelector?: SelectorInput;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  signal?: AbortSignal;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  signal?: AbortSignal;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface PatchOptions extends WriteOptions {
  /** Apply only: take over conflicting fields. */
  force?: boolean;
  subresource?: string;
}

export interface ApplyOptions extends WriteOptions {
  fieldManager: string;
  force?: boolean;
  subresource?: string;
}

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  preconditions?: Preconditions;
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** The Status a delete answers with when the object is gone at once. */
export interface StatusObject {
  kind: 'Status';
  apiVersion: string;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  code?: number;
  details?: { name?: string; group?: string; kind?: string; uid?: string };
  metadata?: Record<string, unknown>;
}

/** The namespace/name key of an object, as informers and work queues use it. */
export function objectKey(obj: { metadata?: { name?: string; namespace?: string } }): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

/** Splits a namespace/name key. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

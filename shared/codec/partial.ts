// PartialObjectMetadata and PartialObjectMetadataList (meta.k8s.io v1 and
// v1beta1): the metadata-only views clients ask for with
// `Accept: ...;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` (the
// garbage collector, metadata informers, kubectl's table rows).
import { StatusError } from '../api/status';

export type MetaVersion = 'v1' | 'v1beta1';

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface PartialObjectMetadata {
  kind: 'PartialObjectMetadata';
  apiVersion: string;
  metadata: Record<string, unknown>;
}

export interface PartialObjectMetadataList {
  kind: 'PartialObjectMetadataList';
  apiVersion: string;
  metadata: ListMeta;
  items: PartialObjectMetadata[];
}

export const metaAPIVersion = (version: MetaVersion): string => `meta.k8s.io/${version}`;

/** A list object: it carries an items array (PodList, UnstructuredList...). */
export const isList = (obj: unknown): obj is { items: unknown[]; metadata?: ListMeta } =>
  typeof obj === 'object' && obj !== null && Array.isArray((obj as { items?: unknown }).items);

/** The list metadata Kubernetes carries over into Tables and partial lists (empty values are omitted). */
export function listMetaOf(list: { metadata?: ListMeta } | undefined): ListMeta {
  const m = list?.metadata;
  const out: ListMeta = {};
  if (!m) return out;
  if (m.resourceVersion) out.resourceVersion = m.resourceVersion;
  if (m.continue) out.continue = m.continue;
  if (typeof m.remainingItemCount === 'number') out.remainingItemCount = m.remainingItemCount;
  return out;
}

/**
 * The metadata-only view of one object. The metadata object is shared with the
 * source, not copied (this runs per row of large lists): encode, don't mutate.
 */
export function partialOf(obj: unknown, version: MetaVersion = 'v1'): PartialObjectMetadata {
  const metadata = ((obj as { metadata?: Record<string, unknown> } | null)?.metadata ?? {}) as Record<
    string,
    unknown
  >;
  return { kind: 'PartialObjectMetadata', apiVersion: metaAPIVersion(version), metadata };
}

export interface PartialOptions {
  /** The object is a custom resource (only changes the Go type name in error messages). */
  custom?: boolean;
}

/** `as=PartialObjectMetadata`: 406 for a list, as Kubernetes answers. */
export function asPartialObjectMetadata(
  obj: unknown,
  version: MetaVersion = 'v1',
  opts?: PartialOptions,
): PartialObjectMetadata {
  if (isList(obj)) {
    throw notAcceptable(
      `you requested PartialObjectMetadata, but the requested object is a list (${goTypeName(obj, opts)})`,
    );
  }
  return partialOf(obj, version);
}

/** `as=PartialObjectMetadataList`: 406 for a single object, as Kubernetes answers. */
export function asPartialObjectMetadataList(
  list: unknown,
  version: MetaVersion = 'v1',
  opts?: PartialOptions,
): PartialObjectMetadataList {
  if (!isList(list)) {
    throw notAcceptable(
      `you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeName(list, opts)})`,
    );
  }
  const items = new Array<PartialObjectMetadata>(list.items.length);
  for (let i = 0; i < items.length; i++) items[i] = partialOf(list.items[i], version);
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: metaAPIVersion(version),
    metadata: listMetaOf(list),
    items,
  };
}

// 406 from the transformation itself, without a list of media types
// (Kubernetes' errNotAcceptable carries just the message).
const notAcceptable = (message: string) => new StatusError(406, 'NotAcceptable', message);

/** Go package names of the internal types of groups whose first label differs. */
const internalPackages: Record<string, string> = {
  '': 'core',
  'events.k8s.io': 'core',
  'internal.apiserver.k8s.io': 'apiserverinternal',
};

/** The Go type Kubernetes names in these errors: *core.Pod, *apps.DeploymentList, *unstructured.Unstructured. */
function goTypeName(obj: unknown, opts?: PartialOptions): string {
  const o = obj as { apiVersion?: string; kind?: string } | null;
  const list = isList(obj);
  if (opts?.custom) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const apiVersion = o?.apiVersion ?? '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const pkg = internalPackages[group] ?? group.split('.')[0];
  return `*${pkg}.${o?.kind ?? ''}`;
}

/**
 * The per-event transformation of a PartialObjectMetadata watch. Each event
 * carries one object, so as=PartialObjectMetadataList cannot apply; like
 * Kubernetes (which logs the failed transformation), such events and Status
 * objects go out as they are.
 */
export function partialWatchEncoder(
  kind: 'PartialObjectMetadata' | 'PartialObjectMetadataList',
  version: MetaVersion = 'v1',
): (obj: unknown) => unknown {
  return (obj) => {
    const o = obj as { kind?: string; apiVersion?: string } | null;
    if (kind !== 'PartialObjectMetadata' || isList(obj) || (o?.kind === 'Status' && o.apiVersion === 'v1')) {
      return obj;
    }
    return partialOf(obj, version);
  };
}

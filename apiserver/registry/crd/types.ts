// The shape of apiextensions.k8s.io/v1 CustomResourceDefinition objects as the
// CRD machinery reads them, with the helpers Kubernetes' apihelpers package
// has: conditions, the storage version, served versions, the finalizer.
import { compareVersions } from '../../../shared/api/catalog';
import type { PrinterColumn } from '../../../shared/codec/table-crd';
import type { ConversionWebhook } from './conversion';

export type Schema = Record<string, any>;

export const CRD_GROUP = 'apiextensions.k8s.io';
export const CRD_RESOURCE = 'customresourcedefinitions';
/** Finalizer that keeps a deleted CRD until its custom resources are gone. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export interface CRDNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface ScaleSpec {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CRDVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: Schema };
  subresources?: { status?: Record<string, never>; scale?: ScaleSpec };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface CRDCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CRD {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  spec: {
    group: string;
    names: CRDNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CRDVersion[];
    conversion?: { strategy?: string; webhook?: ConversionWebhook };
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: CRDCondition[];
    acceptedNames?: CRDNames;
    storedVersions?: string[];
  };
}

export function findCondition(crd: CRD, type: string): CRDCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export const isConditionTrue = (crd: CRD, type: string) => findCondition(crd, type)?.status === 'True';

/**
 * Sets a condition like apihelpers.SetCRDCondition: lastTransitionTime moves
 * only when the status changes; reason and message are always replaced.
 */
export function setCondition(crd: CRD, cond: CRDCondition, now: string): void {
  const status = (crd.status ??= {});
  const list = (status.conditions ??= []);
  const existing = list.find((c) => c.type === cond.type);
  if (!existing) {
    list.push({
      type: cond.type,
      status: cond.status,
      lastTransitionTime: now,
      reason: cond.reason,
      message: cond.message,
    });
    return;
  }
  if (existing.status !== cond.status || !existing.lastTransitionTime) {
    existing.status = cond.status;
    existing.lastTransitionTime = now;
  }
  existing.reason = cond.reason;
  existing.message = cond.message;
}

/** Same type, status, reason and message (IsCRDConditionEquivalent). */
export function conditionEquivalent(a: CRDCondition | undefined, b: CRDCondition | undefined): boolean {
  if (!a || !b) return a === b;
  return a.type === b.type && a.status === b.status && a.reason === b.reason && a.message === b.message;
}

export const hasFinalizer = (crd: CRD, f: string) => (crd.metadata.finalizers ?? []).includes(f);

export function storageVersion(crd: CRD): CRDVersion | undefined {
  return crd.spec.versions?.find((v) => v.storage);
}

export const servedVersions = (crd: CRD): CRDVersion[] => (crd.spec.versions ?? []).filter((v) => v.served);

/** Kubernetes' default text of the Warning for a deprecated version. */
export function defaultDeprecationWarning(crd: CRD, deprecated: string): string {
  const { group, names } = crd.spec;
  const msg = `${group}/${deprecated} ${names.kind} is deprecated`;
  const newer = servedVersions(crd)
    .filter((v) => !v.deprecated && compareVersions(v.name, deprecated) < 0)
    .map((v) => v.name)
    .sort(compareVersions);
  return newer.length ? `${msg}; use ${group}/${newer[0]} ${names.kind}` : msg;
}

/** The Warning text of a deprecated served version, or undefined. */
export function deprecationWarning(crd: CRD, v: CRDVersion): string | undefined {
  if (!v.deprecated) return undefined;
  return v.deprecationWarning ?? defaultDeprecationWarning(crd, v.name);
}

/** "stable.example.com" → "com.example.stable" (OpenAPI definition names of custom resources). */
export const reverseDomain = (group: string) => group.split('.').reverse().join('.');

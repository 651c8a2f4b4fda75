// The admission chain from the flags (Kubernetes' default plugins, plus
// --enable-admission-plugins, minus --disable-admission-plugins), always in
// Kubernetes' recommended order whatever the order of the flag values.
import type { SecurityDeps } from '../types';
import type { Registry } from '../../registry/registry';
import { AdmissionChain, type AdmissionPlugin } from './types';
import { NamespaceLifecycle } from './namespace-lifecycle';
import { ServiceAccount } from './service-account';
import { AlwaysPullImages, DefaultTolerationSeconds, Priority, RuntimeClass } from './pod-defaults';
import { LimitRanger } from './limit-ranger';
import { ResourceQuota } from './resource-quota';
import { NodeRestriction } from './node-restriction';
import { PodSecurity } from './pod-security';
import { AdmissionWebhook } from './webhook';
import { ValidatingAdmissionPolicy } from './validating-policy';
import { MutatingAdmissionPolicy } from './mutating-policy';
import { PersistentVolumeClaimResize } from './pvc-resize';
import {
  AlwaysAdmit,
  AlwaysDeny,
  DefaultIngressClass,
  DefaultStorageClass,
  DenyServiceExternalIPs,
  NamespaceAutoProvision,
  NamespaceExists,
  StorageObjectInUseProtection,
  TaintNodesByCondition,
} from './misc';
import type { AuthzCheck } from '../../../shared/cel/library/authz';

export { AdmissionChain } from './types';
export type { AdmissionAttributes, AdmissionPlugin } from './types';

interface PluginContext {
  registry: () => Registry;
  values: SecurityDeps['values'];
  /** The authorizer chain as admission policies' CEL asks it (authorizer.group(...).check(...)). */
  authz: AuthzCheck;
  services: SecurityDeps['services'];
}

type Factory = ((c: PluginContext) => AdmissionPlugin) | null;

/** Kubernetes' AllOrderedPlugins; null: a known name tkube accepts but that has nothing to do here. */
const ORDERED: [string, Factory][] = [
  ['AlwaysAdmit', () => new AlwaysAdmit()],
  ['NamespaceAutoProvision', (c) => new NamespaceAutoProvision(c.registry)],
  ['NamespaceLifecycle', (c) => new NamespaceLifecycle(c.registry)],
  ['NamespaceExists', (c) => new NamespaceExists(c.registry)],
  ['LimitPodHardAntiAffinityTopology', null],
  ['LimitRanger', (c) => new LimitRanger(c.registry)],
  ['ServiceAccount', (c) => new ServiceAccount(c.registry)],
  ['NodeRestriction', (c) => new NodeRestriction(c.registry)],
  ['TaintNodesByCondition', () => new TaintNodesByCondition()],
  ['AlwaysPullImages', () => new AlwaysPullImages()],
  ['ImagePolicyWebhook', null],
  ['PodSecurity', (c) => new PodSecurity(c.registry)],
  ['PodNodeSelector', null],
  ['Priority', (c) => new Priority(c.registry)],
  [
    'DefaultTolerationSeconds',
    (c) =>
      new DefaultTolerationSeconds(
        Number(c.values.defaultNotReadyTolerationSeconds ?? 300),
        Number(c.values.defaultUnreachableTolerationSeconds ?? 300),
      ),
  ],
  ['PodTolerationRestriction', null],
  ['EventRateLimit', null],
  ['ExtendedResourceToleration', null],
  ['DefaultStorageClass', (c) => new DefaultStorageClass(c.registry)],
  ['StorageObjectInUseProtection', () => new StorageObjectInUseProtection()],
  ['OwnerReferencesPermissionEnforcement', null],
  ['PersistentVolumeClaimResize', (c) => new PersistentVolumeClaimResize(c.registry)],
  ['RuntimeClass', (c) => new RuntimeClass(c.registry)],
  ['CertificateApproval', null],
  ['CertificateSigning', null],
  ['ClusterTrustBundleAttest', null],
  ['CertificateSubjectRestriction', null],
  ['DefaultIngressClass', (c) => new DefaultIngressClass(c.registry)],
  ['DenyServiceExternalIPs', () => new DenyServiceExternalIPs()],
  ['PodTopologyLabels', null],
  ['MutatingAdmissionPolicy', (c) => new MutatingAdmissionPolicy(c.registry, c.authz)],
  [
    'MutatingAdmissionWebhook',
    (c) => new AdmissionWebhook('MutatingAdmissionWebhook', c.registry, c.services),
  ],
  ['ValidatingAdmissionPolicy', (c) => new ValidatingAdmissionPolicy(c.registry, c.authz)],
  [
    'ValidatingAdmissionWebhook',
    (c) => new AdmissionWebhook('ValidatingAdmissionWebhook', c.registry, c.services),
  ],
  ['ResourceQuota', (c) => new ResourceQuota(c.registry)],
  ['AlwaysDeny', () => new AlwaysDeny()],
];

export const ALL_ORDERED_PLUGINS = ORDERED.map(([n]) => n);

/** kube-apiserver's default-on plugins. */
export const DEFAULT_ON_PLUGINS = new Set([
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'PersistentVolumeClaimResize',
  'DefaultTolerationSeconds',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'StorageObjectInUseProtection',
  'Priority',
  'TaintNodesByCondition',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'PodSecurity',
  'PodTopologyLabels',
  'MutatingAdmissionPolicy',
  'ValidatingAdmissionPolicy',
]);

/** The enabled plugin names in execution order; throws Kubernetes' option errors. */
export function enabledPlugins(enable: string[] = [], disable: string[] = []): string[] {
  const known = new Set(ALL_ORDERED_PLUGINS);
  const errs: string[] = [];
  for (const p of [...new Set(enable)].sort())
    if (!known.has(p)) errs.push(`enable-admission-plugins plugin "${p}" is unknown`);
  for (const p of [...new Set(disable)].sort())
    if (!known.has(p)) errs.push(`disable-admission-plugins plugin "${p}" is unknown`);
  const overlap = [...new Set(enable)].filter((p) => disable.includes(p)).sort();
  if (overlap.length)
    errs.push(`[${overlap.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  if (errs.length) throw new Error(errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  const on = new Set([...DEFAULT_ON_PLUGINS, ...enable]);
  for (const p of disable) on.delete(p);
  return ALL_ORDERED_PLUGINS.filter((p) => on.has(p));
}

export async function buildAdmission(deps: SecurityDeps, authz: AuthzCheck): Promise<AdmissionChain> {
  const names = enabledPlugins(
    ((deps.values.enableAdmissionPlugins as string[] | undefined) ?? []).filter(Boolean),
    ((deps.values.disableAdmissionPlugins as string[] | undefined) ?? []).filter(Boolean),
  );
  const ctx: PluginContext = {
    registry: () => deps.registry(),
    values: deps.values,
    authz,
    services: deps.services,
  };
  const factories = new Map(ORDERED);
  const plugins: AdmissionPlugin[] = [];
  for (const n of names) {
    const f = factories.get(n);
    if (f) plugins.push(f(ctx));
  }
  return new AdmissionChain(plugins);
}

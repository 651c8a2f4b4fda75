// The remaining built-in plugins: DefaultStorageClass, DefaultIngressClass,
// TaintNodesByCondition, StorageObjectInUseProtection, DenyServiceExternalIPs,
// AlwaysAdmit, AlwaysDeny, NamespaceExists, NamespaceAutoProvision.
import { notFound } from '../../../shared/api/status';
import { TAINT_NOT_READY } from '../../../shared/api/taints';
import type { Registry } from '../../registry/registry';
import { systemContext } from '../../registry/context';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, Lister } from './util';

/** The default of several classes: the newest, then the name (Kubernetes 1.28+). */
function newest(classes: any[]): any | null {
  let best: any = null;
  for (const c of classes) {
    if (!best) best = c;
    else {
      const t = Date.parse(c.metadata.creationTimestamp) - Date.parse(best.metadata.creationTimestamp);
      if (t > 0 || (t === 0 && c.metadata.name < best.metadata.name)) best = c;
    }
  }
  return best;
}

const IS_DEFAULT_SC = 'storageclass.kubernetes.io/is-default-class';
const IS_DEFAULT_SC_BETA = 'storageclass.beta.kubernetes.io/is-default-class';

/** Sets spec.storageClassName of a new PersistentVolumeClaim that has none to the default class. */
export class DefaultStorageClass implements AdmissionPlugin {
  readonly name = 'DefaultStorageClass';
  private readonly classes: Lister;
  constructor(registry: () => Registry) {
    this.classes = new Lister(registry, 'storage.k8s.io', 'storageclasses');
  }
  async admit(a: AdmissionAttributes): Promise<void> {
    if (
      a.group !== '' ||
      a.resource !== 'persistentvolumeclaims' ||
      a.subresource ||
      a.operation !== 'CREATE'
    )
      return;
    const pvc = a.object;
    if (!pvc?.spec || (pvc.spec.storageClassName !== undefined && pvc.spec.storageClassName !== null)) return;
    if (pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] !== undefined) return;
    const defaults = (await this.classes.list()).filter((c) => {
      const ann = c.metadata?.annotations ?? {};
      return (
        ann[IS_DEFAULT_SC] === 'true' ||
        (ann[IS_DEFAULT_SC] === undefined && ann[IS_DEFAULT_SC_BETA] === 'true')
      );
    });
    const dflt = newest(defaults);
    if (dflt) pvc.spec.storageClassName = dflt.metadata.name;
  }
}

const IS_DEFAULT_IC = 'ingressclass.kubernetes.io/is-default-class';

/** Sets spec.ingressClassName of a new Ingress that names no class to the default IngressClass. */
export class DefaultIngressClass implements AdmissionPlugin {
  readonly name = 'DefaultIngressClass';
  private readonly classes: Lister;
  constructor(registry: () => Registry) {
    this.classes = new Lister(registry, 'networking.k8s.io', 'ingressclasses');
  }
  async admit(a: AdmissionAttributes): Promise<void> {
    if (
      a.group !== 'networking.k8s.io' ||
      a.resource !== 'ingresses' ||
      a.subresource ||
      a.operation !== 'CREATE'
    )
      return;
    const ing = a.object;
    if (!ing?.spec) return;
    if (ing.spec.ingressClassName) return;
    if (ing.metadata?.annotations?.['kubernetes.io/ingress.class'] !== undefined) return;
    const dflt = newest(
      (await this.classes.list()).filter((c) => c.metadata?.annotations?.[IS_DEFAULT_IC] === 'true'),
    );
    if (dflt) ing.spec.ingressClassName = dflt.metadata.name;
  }
}

/** New Nodes start with the not-ready:NoSchedule taint; the node lifecycle controller lifts it. */
export class TaintNodesByCondition implements AdmissionPlugin {
  readonly name = 'TaintNodesByCondition';
  admit(a: AdmissionAttributes): void {
    if (a.group !== '' || a.resource !== 'nodes' || a.subresource || a.operation !== 'CREATE') return;
    const node = a.object;
    if (!node) return;
    node.spec ??= {};
    const taints: any[] = node.spec.taints ?? [];
    if (taints.some((t) => t.key === TAINT_NOT_READY && t.effect === 'NoSchedule')) return;
    node.spec.taints = [...taints, { key: TAINT_NOT_READY, effect: 'NoSchedule' }];
  }
}

/** PVCs and PVs get the protection finalizer their controllers remove when unused. */
export class StorageObjectInUseProtection implements AdmissionPlugin {
  readonly name = 'StorageObjectInUseProtection';
  admit(a: AdmissionAttributes): void {
    if (a.group !== '' || a.subresource || a.operation !== 'CREATE') return;
    const finalizer =
      a.resource === 'persistentvolumeclaims'
        ? 'kubernetes.io/pvc-protection'
        : a.resource === 'persistentvolumes'
          ? 'kubernetes.io/pv-protection'
          : '';
    if (!finalizer || !a.object?.metadata) return;
    const f: string[] = a.object.metadata.finalizers ?? [];
    if (!f.includes(finalizer)) a.object.metadata.finalizers = [...f, finalizer];
  }
}

/** Refuses new spec.externalIPs on Services. */
export class DenyServiceExternalIPs implements AdmissionPlugin {
  readonly name = 'DenyServiceExternalIPs';
  validate(a: AdmissionAttributes): void {
    if (a.group !== '' || a.resource !== 'services' || a.subresource) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const ips: string[] = a.object?.spec?.externalIPs ?? [];
    const old = new Set<string>(a.oldObject?.spec?.externalIPs ?? []);
    if (ips.some((ip) => !old.has(ip)))
      throw admissionForbidden(
        a,
        'spec.externalIPs: Forbidden: use of external IPs is denied by admission control',
      );
  }
}

export class AlwaysAdmit implements AdmissionPlugin {
  readonly name = 'AlwaysAdmit';
}

export class AlwaysDeny implements AdmissionPlugin {
  readonly name = 'AlwaysDeny';
  validate(a: AdmissionAttributes): void {
    throw admissionForbidden(a, 'admission control is denying all modifications');
  }
}

/** Writes into a namespace need the namespace (NamespaceLifecycle does more). */
export class NamespaceExists implements AdmissionPlugin {
  readonly name = 'NamespaceExists';
  private readonly namespaces: Lister;
  constructor(registry: () => Registry) {
    this.namespaces = new Lister(registry, '', 'namespaces');
  }
  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.namespace || (a.group === '' && a.resource === 'namespaces')) return;
    if (a.operation === 'DELETE' || a.operation === 'CONNECT') return;
    if (!(await this.namespaces.get('', a.namespace)))
      throw notFound({ group: '', resource: 'namespaces' }, a.namespace);
  }
}

/** Creates the namespace of a create on the fly (never in dry-run). */
export class NamespaceAutoProvision implements AdmissionPlugin {
  readonly name = 'NamespaceAutoProvision';
  private readonly namespaces: Lister;
  constructor(private readonly registry: () => Registry) {
    this.namespaces = new Lister(registry, '', 'namespaces');
  }
  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || !a.namespace || a.dryRun) return;
    if (a.group === '' && a.resource === 'namespaces') return;
    if (await this.namespaces.get('', a.namespace)) return;
    const ns = this.registry().preferred('', 'namespaces');
    if (!ns) return;
    try {
      await ns.store.create(systemContext(), {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: a.namespace },
      });
    } catch {
      /* created concurrently */
    }
  }
}

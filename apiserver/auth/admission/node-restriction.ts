// NodeRestriction (plugin/pkg/admission/noderestriction): a kubelet
// (user system:node:<name> in group system:nodes) may only modify its own Node
// (no taints, no labels outside the kubelet set), its own Lease in
// kube-node-lease, mirror pods bound to it, and the status of pods bound to it.
import {
  NODE_LEASE_NAMESPACE,
  inDomain,
  isKubeletLabel,
  isKubernetesLabel,
  labelNamespace,
} from '../../../shared/api/nodes';
import type { Registry } from '../../registry/registry';
import { nodeIdentity } from '../node-identity';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, isPods, Lister, MIRROR_POD_ANNOTATION } from './util';

function forbiddenLabels(modified: string[]): string[] {
  const out = new Set<string>();
  for (const key of modified) {
    if (inDomain(labelNamespace(key), 'node-restriction.kubernetes.io')) out.add(key);
    if (isKubernetesLabel(key) && !isKubeletLabel(key)) out.add(key);
  }
  return [...out].sort();
}

function modifiedLabels(
  next: Record<string, string> | undefined,
  old: Record<string, string> | undefined,
): string[] {
  const a = next ?? {};
  const b = old ?? {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]);
}

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';
  private readonly nodes: Lister;
  private readonly pods: Lister;

  constructor(registry: () => Registry) {
    this.nodes = new Lister(registry, '', 'nodes');
    this.pods = new Lister(registry, '', 'pods');
  }

  // Deletes reach only the validating phase of the chain; everything else is checked while mutating.
  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'DELETE') await this.check(a);
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation === 'DELETE') await this.check(a);
  }

  private async check(a: AdmissionAttributes): Promise<void> {
    const { isNode, name: node } = nodeIdentity(a.user);
    if (!isNode || !node) return;
    if (isPods(a)) return this.admitPod(node, a);
    if (a.group === '' && a.resource === 'nodes') return this.admitNode(node, a);
    if (a.group === 'coordination.k8s.io' && a.resource === 'leases') return this.admitLease(node, a);
  }

  private async admitPod(node: string, a: AdmissionAttributes): Promise<void> {
    switch (a.subresource) {
      case '':
        break;
      case 'status':
        if (a.operation !== 'UPDATE') throw admissionForbidden(a, `unexpected operation "${a.operation}"`);
        if (a.oldObject?.spec?.nodeName !== node)
          throw admissionForbidden(
            a,
            `node "${node}" can only update pod status for pods with spec.nodeName set to itself`,
          );
        if (!sameJSON(a.oldObject?.metadata?.labels, a.object?.metadata?.labels))
          throw admissionForbidden(a, `node "${node}" cannot update labels through pod status`);
        return;
      case 'eviction':
        return;
      default:
        throw admissionForbidden(
          a,
          `unexpected subresource "${a.subresource}", only 'status' and 'eviction' are allowed`,
        );
    }
    if (a.operation === 'CREATE') return this.admitPodCreate(node, a);
    if (a.operation === 'DELETE') {
      const existing = a.oldObject ?? (await this.pods.get(a.namespace, a.name));
      if (existing?.spec?.nodeName !== node)
        throw admissionForbidden(a, `node "${node}" can only delete pods with spec.nodeName set to itself`);
      return;
    }
    throw admissionForbidden(
      a,
      `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`,
    );
  }

  private async admitPodCreate(node: string, a: AdmissionAttributes): Promise<void> {
    const pod = a.object ?? {};
    const fail = (msg: string) => admissionForbidden(a, msg);
    if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] === undefined)
      throw fail(
        `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`,
      );
    if (pod.spec?.nodeName !== node)
      throw fail(`node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners: any[] = pod.metadata?.ownerReferences ?? [];
    if (owners.length > 1)
      throw fail(`node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 0)
      throw fail(`node "${node}" can only create pods with an owner reference set to itself`);
    const owner = owners[0];
    if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node)
      throw fail(`node "${node}" can only create pods with an owner reference set to itself`);
    if (owner.controller !== true)
      throw fail(`node "${node}" can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true)
      throw fail(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const nodeObj = await this.nodes.get('', node);
    if (nodeObj && nodeObj.metadata?.uid !== owner.uid)
      throw fail(`node ${node} UID mismatch: expected ${owner.uid} got ${nodeObj.metadata?.uid}`);
    if (pod.spec?.serviceAccountName)
      throw fail(`node "${node}" can not create pods that reference a service account`);
    const spec = pod.spec ?? {};
    const containers = [
      ...(spec.initContainers ?? []),
      ...(spec.containers ?? []),
      ...(spec.ephemeralContainers ?? []),
    ];
    const refs = { secret: false, configMap: false };
    if (spec.imagePullSecrets?.length) refs.secret = true;
    for (const v of spec.volumes ?? []) {
      if (v.secret) refs.secret = true;
      if (v.configMap) refs.configMap = true;
      for (const p of v.projected?.sources ?? []) {
        if (p.secret) refs.secret = true;
        if (p.configMap) refs.configMap = true;
      }
    }
    for (const c of containers) {
      for (const e of c.env ?? []) {
        if (e.valueFrom?.secretKeyRef) refs.secret = true;
        if (e.valueFrom?.configMapKeyRef) refs.configMap = true;
      }
      for (const e of c.envFrom ?? []) {
        if (e.secretRef) refs.secret = true;
        if (e.configMapRef) refs.configMap = true;
      }
    }
    if (refs.secret) throw fail(`node "${node}" can not create pods that reference secrets`);
    if (refs.configMap) throw fail(`node "${node}" can not create pods that reference configmaps`);
    for (const v of spec.volumes ?? []) {
      if (v.persistentVolumeClaim)
        throw fail(`node "${node}" can not create pods that reference persistentvolumeclaims`);
      if (v.ephemeral) throw fail(`node "${node}" can not create pods that use generic ephemeral volumes`);
    }
    if (spec.resourceClaims?.length)
      throw fail(`node "${node}" can not create pods that reference resourceclaims`);
  }

  private admitNode(node: string, a: AdmissionAttributes): void {
    const requested = a.name || a.object?.metadata?.name;
    if (requested !== node)
      throw admissionForbidden(a, `node "${node}" is not allowed to modify node "${requested}"`);
    if (a.operation === 'CREATE') {
      const bad = forbiddenLabels(modifiedLabels(a.object?.metadata?.labels, undefined));
      if (bad.length)
        throw admissionForbidden(
          a,
          `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`,
        );
    }
    if (a.operation === 'UPDATE') {
      if (!sameJSON(a.object?.spec?.taints, a.oldObject?.spec?.taints))
        throw admissionForbidden(a, `node "${node}" is not allowed to modify taints`);
      const bad = forbiddenLabels(modifiedLabels(a.object?.metadata?.labels, a.oldObject?.metadata?.labels));
      if (bad.length) throw admissionForbidden(a, `is not allowed to modify labels: ${bad.join(', ')}`);
    }
  }

  private admitLease(node: string, a: AdmissionAttributes): void {
    if (a.namespace !== NODE_LEASE_NAMESPACE)
      throw admissionForbidden(a, `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    const name = a.operation === 'CREATE' ? a.object?.metadata?.name : a.name;
    if (name !== node)
      throw admissionForbidden(a, 'can only access node lease with the same name as the requesting node');
  }
}

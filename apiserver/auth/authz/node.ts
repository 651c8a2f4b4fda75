// The Node authorizer: a kubelet (user system:node:<name> in group
// system:nodes) may read the secrets, configmaps, PVCs, PVs and service
// accounts of pods bound to its node, its own Node and Lease objects, and
// list/watch pods only with spec.nodeName=<name>; everything else is judged
// against the static system:node rules. The graph (pod -> node, object -> pod,
// PV -> PVC) is kept current from informers.
import { parseFieldSelector } from '../../../shared/api/fields';
import { NODE_LEASE_NAMESPACE } from '../../../shared/api/nodes';
import type { UserInfo } from '../../registry/context';
import { nodeIdentity } from '../node-identity';
import type { Registry } from '../../registry/registry';
import { nodeRules } from './bootstrap-policy';
import { StoreInformer, objectKey } from './informer';
import { rulesAllow, type PolicyRule } from './rules';
import {
  ALLOW,
  NO_OPINION,
  noOpinion,
  type Attributes,
  type Authorizer,
  type AuthorizerResult,
  type RulesResult,
} from './types';

type RefType = 'secret' | 'configmap' | 'pvc' | 'serviceaccount';

/** What a pod references, as "type:ns/name". */
export function podReferences(pod: any): string[] {
  const ns = pod.metadata?.namespace ?? '';
  const spec = pod.spec ?? {};
  const out = new Set<string>();
  const add = (t: RefType, name: string | undefined, namespace = ns) => {
    if (name) out.add(`${t}:${namespace}/${name}`);
  };
  add('serviceaccount', spec.serviceAccountName);
  for (const s of spec.imagePullSecrets ?? []) add('secret', s?.name);
  for (const c of [
    ...(spec.containers ?? []),
    ...(spec.initContainers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ]) {
    for (const e of c.env ?? []) {
      add('secret', e.valueFrom?.secretKeyRef?.name);
      add('configmap', e.valueFrom?.configMapKeyRef?.name);
    }
    for (const e of c.envFrom ?? []) {
      add('secret', e.secretRef?.name);
      add('configmap', e.configMapRef?.name);
    }
  }
  for (const v of spec.volumes ?? []) {
    add('secret', v.secret?.secretName);
    add('configmap', v.configMap?.name);
    add('pvc', v.persistentVolumeClaim?.claimName);
    if (v.ephemeral) add('pvc', `${pod.metadata?.name}-${v.name}`);
    for (const src of v.projected?.sources ?? []) {
      add('secret', src.secret?.name);
      add('configmap', src.configMap?.name);
    }
    add('secret', v.azureFile?.secretName);
    for (const k of ['csi', 'cephfs', 'rbd', 'flexVolume', 'iscsi', 'scaleIO', 'storageos', 'cinder']) {
      const ref = v[k]?.secretRef ?? v[k]?.nodePublishSecretRef;
      add('secret', ref?.name);
    }
  }
  return [...out];
}

/** Secrets a PersistentVolume's node-side plugin reads. */
function pvSecrets(pv: any): string[] {
  const out: string[] = [];
  const spec = pv.spec ?? {};
  const add = (ref: any, dflt = '') => {
    if (ref?.name) out.push(`secret:${ref.namespace ?? dflt}/${ref.name}`);
  };
  if (spec.csi) {
    add(spec.csi.nodePublishSecretRef);
    add(spec.csi.nodeStageSecretRef);
    add(spec.csi.nodeExpandSecretRef);
  }
  if (spec.azureFile?.secretName)
    out.push(`secret:${spec.azureFile.secretNamespace ?? 'default'}/${spec.azureFile.secretName}`);
  for (const k of ['cephfs', 'rbd', 'flexVolume', 'iscsi', 'scaleIO', 'storageos', 'cinder'])
    add(spec[k]?.secretRef);
  return out;
}

class Multiset {
  private readonly m = new Map<string, Map<string, number>>();
  add(key: string, node: string): void {
    let n = this.m.get(key);
    if (!n) this.m.set(key, (n = new Map()));
    n.set(node, (n.get(node) ?? 0) + 1);
  }
  remove(key: string, node: string): void {
    const n = this.m.get(key);
    if (!n) return;
    const c = (n.get(node) ?? 0) - 1;
    if (c > 0) n.set(node, c);
    else n.delete(node);
    if (!n.size) this.m.delete(key);
  }
  has(key: string, node: string): boolean {
    return !!this.m.get(key)?.has(node);
  }
}

export class NodeGraph {
  readonly pods: StoreInformer;
  readonly pvs: StoreInformer;
  readonly pvcs: StoreInformer;
  /** "type:ns/name" -> node -> count of pods on that node referencing it. */
  private readonly refs = new Multiset();
  /** pod key -> [node, refs] as indexed. */
  private readonly podIndex = new Map<string, { node: string; refs: string[] }>();
  /** PV name -> PVC keys bound to it. */
  private readonly pvcsByVolume = new Map<string, Set<string>>();
  /** secret key -> PV names that read it. */
  private readonly pvsBySecret = new Map<string, Set<string>>();
  private startPromise: Promise<void> | null = null;

  constructor(registry: () => Registry) {
    this.pods = new StoreInformer(registry, '', 'pods');
    this.pvs = new StoreInformer(registry, '', 'persistentvolumes');
    this.pvcs = new StoreInformer(registry, '', 'persistentvolumeclaims');
    this.pods.onChange((type, obj, old) => {
      const key = objectKey(obj);
      const prev = this.podIndex.get(key);
      if (prev) for (const r of prev.refs) this.refs.remove(r, prev.node);
      this.podIndex.delete(key);
      void old;
      const node = obj.spec?.nodeName;
      if (type === 'DELETED' || !node) return;
      const refs = podReferences(obj);
      for (const r of refs) this.refs.add(r, node);
      this.podIndex.set(key, { node, refs });
    });
    this.pvcs.onChange((type, obj, old) => {
      const key = objectKey(obj);
      const before = old?.spec?.volumeName;
      if (before) this.pvcsByVolume.get(before)?.delete(key);
      const vol = obj.spec?.volumeName;
      if (type === 'DELETED' || !vol) return;
      let s = this.pvcsByVolume.get(vol);
      if (!s) this.pvcsByVolume.set(vol, (s = new Set()));
      s.add(key);
    });
    this.pvs.onChange((type, obj, old) => {
      const name = obj.metadata?.name;
      for (const s of old ? pvSecrets(old) : []) this.pvsBySecret.get(s)?.delete(name);
      if (type === 'DELETED') return;
      for (const s of pvSecrets(obj)) {
        let set = this.pvsBySecret.get(s);
        if (!set) this.pvsBySecret.set(s, (set = new Set()));
        set.add(name);
      }
    });
  }

  start(): Promise<void> {
    this.startPromise ??= Promise.all([this.pods.start(), this.pvs.start(), this.pvcs.start()]).then(
      () => undefined,
    );
    return this.startPromise;
  }

  stop(): void {
    this.pods.stop();
    this.pvs.stop();
    this.pvcs.stop();
  }

  private pvReachable(name: string, node: string): boolean {
    for (const pvc of this.pvcsByVolume.get(name) ?? []) if (this.refs.has(`pvc:${pvc}`, node)) return true;
    return false;
  }

  /** A path from the object to the node in the graph. */
  hasPath(node: string, type: 'pod' | 'pv' | RefType, namespace: string, name: string): boolean {
    switch (type) {
      case 'pod':
        return this.podIndex.get(`${namespace}/${name}`)?.node === node;
      case 'pv':
        return this.pvReachable(name, node);
      case 'secret': {
        if (this.refs.has(`secret:${namespace}/${name}`, node)) return true;
        for (const pv of this.pvsBySecret.get(`secret:${namespace}/${name}`) ?? [])
          if (this.pvReachable(pv, node)) return true;
        return false;
      }
      default:
        return this.refs.has(`${type}:${namespace}/${name}`, node);
    }
  }
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  private readonly rules: PolicyRule[] = nodeRules();

  constructor(private readonly graph: NodeGraph) {}

  authorize(a: Attributes): AuthorizerResult | Promise<AuthorizerResult> {
    const id = nodeIdentity(a.user);
    if (!id.isNode) return NO_OPINION;
    if (!id.name) return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);
    return this.graph.start().then(() => this.decide(id.name, a));
  }

  private path(node: string, type: 'pod' | 'pv' | RefType, a: Attributes): AuthorizerResult {
    if (!a.name) return noOpinion('No Object name found');
    if (this.graph.hasPath(node, type, a.namespace, a.name)) return ALLOW;
    return noOpinion(`no relationship found between node '${node}' and this object`);
  }

  private readNamespaced(node: string, type: RefType, a: Attributes): AuthorizerResult {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch')
      return noOpinion('can only read resources of this type');
    if (a.subresource) return noOpinion('cannot read subresource');
    if (!a.namespace) return noOpinion('can only read namespaced object of this type');
    return this.path(node, type, a);
  }

  private get(node: string, type: 'pod' | 'pv' | RefType, a: Attributes): AuthorizerResult {
    if (a.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (a.subresource) return noOpinion('cannot get subresource');
    return this.path(node, type, a);
  }

  private fieldSelectorNode(a: Attributes, field: string): string | undefined {
    try {
      return parseFieldSelector(a.fieldSelector).exactValue(field);
    } catch {
      return undefined;
    }
  }

  private decide(node: string, a: Attributes): AuthorizerResult {
    if (a.isResourceRequest) {
      const gr = `${a.apiGroup}/${a.resource}`;
      switch (gr) {
        case '/secrets':
          return this.readNamespaced(node, 'secret', a);
        case '/configmaps':
          return this.readNamespaced(node, 'configmap', a);
        case '/persistentvolumeclaims':
          if (a.subresource === 'status') {
            if (a.verb !== 'update' && a.verb !== 'patch')
              return noOpinion('can only get/update/patch this type');
            return this.path(node, 'pvc', a);
          }
          return this.get(node, 'pvc', a);
        case '/persistentvolumes':
          return this.get(node, 'pv', a);
        case '/serviceaccounts':
          if (a.verb === 'get' && !a.subresource) return this.readNamespaced(node, 'serviceaccount', a);
          if (a.verb !== 'create' || !a.name)
            return noOpinion('can only create tokens for individual service accounts');
          if (a.subresource !== 'token')
            return noOpinion('can only create token subresource of serviceaccount');
          return this.path(node, 'serviceaccount', a);
        case 'coordination.k8s.io/leases':
          if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb))
            return noOpinion('can only get, create, update, patch, or delete a node lease');
          if (a.namespace !== NODE_LEASE_NAMESPACE)
            return noOpinion(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
          if (a.verb !== 'create' && a.name !== node)
            return noOpinion('can only access node lease with the same name as the requesting node');
          return ALLOW;
        case 'storage.k8s.io/csinodes':
          if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb))
            return noOpinion('can only get, create, update, patch, or delete a CSINode');
          if (a.subresource) return noOpinion('cannot authorize CSINode subresources');
          if (a.verb !== 'create' && a.name !== node)
            return noOpinion('can only access CSINode with the same name as the requesting node');
          return ALLOW;
        case '/nodes':
          if (!a.subresource) {
            if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return ALLOW;
            if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
              if (a.name === node) return ALLOW;
              if (!a.name) return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
              return noOpinion(`node '${node}' cannot read '${a.name}', only its own Node object`);
            }
          } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return ALLOW;
          return NO_OPINION;
        case '/pods':
          switch (a.subresource) {
            case '':
              if (a.verb === 'get') return this.get(node, 'pod', a);
              if (a.verb === 'list' || a.verb === 'watch') {
                if (this.fieldSelectorNode(a, 'spec.nodeName') === node) return ALLOW;
                if (a.name) return this.path(node, 'pod', a);
                return noOpinion('can only list/watch pods with spec.nodeName field selector');
              }
              if (a.verb === 'create' || a.verb === 'delete') return ALLOW;
              break;
            case 'status':
              if (a.verb === 'update' || a.verb === 'patch') return ALLOW;
              break;
            case 'eviction':
              if (a.verb === 'create') return ALLOW;
              break;
          }
          return NO_OPINION;
      }
    }
    return rulesAllow(a, this.rules) ? ALLOW : NO_OPINION;
  }

  rulesFor(user: UserInfo): RulesResult {
    if (nodeIdentity(user).isNode)
      return {
        resourceRules: [],
        nonResourceRules: [],
        incomplete: true,
        error: 'node authorizer does not support user rule resolution',
      };
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

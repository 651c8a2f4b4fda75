// Core v1 defaults (pkg/apis/core/v1/defaults.go and the declarative +default
// markers of k8s.io/api/core/v1), Kubernetes 1.36.
import {
  CORE,
  asArr,
  asObj,
  asStr,
  ensureObj,
  registerDefaults,
  setIfUnset,
  setIfZero,
  type Obj,
} from './defaults-registry';
import { formatQuantity, parseQuantity, roundUpQuantity } from './validation/quantity';
import { volumeSourcesOf } from './volume-sources';
import { boundedMemo } from '../heap/bounded-memo';

type PullPolicy = 'Always' | 'IfNotPresent';

/**
 * PullPolicy default: Always for :latest or untagged images, IfNotPresent otherwise (and for unparseable ones).
 * By image: the pods of one template name the same images, and the reference grammar is regular expressions.
 */
export const defaultPullPolicy: (image: string) => PullPolicy = boundedMemo(1024, pullPolicyOf);

function pullPolicyOf(image: string): PullPolicy {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const digest = at >= 0 ? image.slice(at + 1) : '';
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const tag = colon > slash ? name.slice(colon + 1) : '';
  const repo = colon > slash ? name.slice(0, colon) : name;
  // Docker reference grammar: lowercase path components; anything else fails to parse.
  const path =
    repo.includes('/') && /[.:]|^localhost$/.test(repo.split('/')[0])
      ? repo.split('/').slice(1).join('/')
      : repo;
  if (
    !repo ||
    !/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(path)
  )
    return 'IfNotPresent';
  if (tag && !/^[\w][\w.-]{0,127}$/.test(tag)) return 'IfNotPresent';
  const effective = !tag && !digest ? 'latest' : tag;
  return effective === 'latest' ? 'Always' : 'IfNotPresent';
}

/** SetDefaults_ResourceList: values rounded up to milli precision. */
export function roundResourceList(list: Obj): void {
  for (const [k, v] of Object.entries(list)) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    try {
      list[k] = formatQuantity(roundUpQuantity(parseQuantity(String(v)), -3));
    } catch {
      /* decode rejects malformed quantities */
    }
  }
}

function limitsToRequests(containers: unknown): void {
  for (const c of asArr(containers)) {
    const res = asObj(asObj(c)?.resources);
    const limits = asObj(res?.limits);
    if (!res || !limits) continue;
    const requests = ensureObj(res, 'requests');
    for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
  }
}

function hostNetworkPorts(containers: unknown): void {
  for (const c of asArr(containers))
    for (const p of asArr(asObj(c)?.ports)) {
      const port = asObj(p);
      if (port && !port.hostPort) port.hostPort = port.containerPort;
    }
}

registerDefaults(CORE + 'Pod', (pod) => {
  const spec = asObj(pod.spec);
  if (!spec) return;
  limitsToRequests(spec.containers);
  limitsToRequests(spec.initContainers);
  setIfUnset(spec, 'enableServiceLinks', true);
  if (spec.hostNetwork === true) {
    hostNetworkPorts(spec.containers);
    hostNetworkPorts(spec.initContainers);
  }
});

registerDefaults(CORE + 'PodSpec', (s) => {
  setIfUnset(s, 'dnsPolicy', 'ClusterFirst');
  setIfUnset(s, 'restartPolicy', 'Always');
  setIfUnset(s, 'securityContext', {});
  setIfUnset(s, 'terminationGracePeriodSeconds', 30);
  setIfUnset(s, 'schedulerName', 'default-scheduler');
});

const containerDefaults = (c: Obj) => {
  setIfUnset(c, 'imagePullPolicy', defaultPullPolicy(asStr(c.image)));
  setIfUnset(c, 'terminationMessagePath', '/dev/termination-log');
  setIfUnset(c, 'terminationMessagePolicy', 'File');
};
registerDefaults(CORE + 'Container', containerDefaults);
registerDefaults(CORE + 'EphemeralContainer', containerDefaults);
registerDefaults(CORE + 'ContainerPort', (p) => setIfUnset(p, 'protocol', 'TCP'));
registerDefaults(CORE + 'Probe', (p) => {
  setIfZero(p, 'timeoutSeconds', 1);
  setIfZero(p, 'periodSeconds', 10);
  setIfZero(p, 'successThreshold', 1);
  setIfZero(p, 'failureThreshold', 3);
});
registerDefaults(CORE + 'HTTPGetAction', (h) => {
  setIfUnset(h, 'path', '/');
  setIfUnset(h, 'scheme', 'HTTP');
});
registerDefaults(CORE + 'GRPCAction', (g) => {
  if (g.service === undefined || g.service === null) g.service = '';
});

registerDefaults(CORE + 'Volume', (v) => {
  if (!volumeSourcesOf(v).length) v.emptyDir = {};
  const image = asObj(v.image);
  if (image) setIfUnset(image, 'pullPolicy', defaultPullPolicy(asStr(image.reference)));
});
for (const t of [
  'SecretVolumeSource',
  'ConfigMapVolumeSource',
  'DownwardAPIVolumeSource',
  'ProjectedVolumeSource',
])
  registerDefaults(CORE + t, (s) => setIfUnset(s, 'defaultMode', 420));
registerDefaults(CORE + 'ServiceAccountTokenProjection', (s) => setIfUnset(s, 'expirationSeconds', 3600));
registerDefaults(CORE + 'HostPathVolumeSource', (s) => {
  if (s.type === undefined || s.type === null) s.type = '';
});
registerDefaults(CORE + 'ObjectFieldSelector', (s) => setIfUnset(s, 'apiVersion', 'v1'));

type ServiceHook = (svc: Obj) => void;
let serviceHook: ServiceHook | undefined;
/** The IP allocator's defaulting (ipFamilies, ipFamilyPolicy, clusterIPs) runs after Service defaults. */
export function setServiceDefaultsHook(hook: ServiceHook | undefined): void {
  serviceHook = hook;
}

registerDefaults(CORE + 'Service', (svc) => {
  const s = ensureObj(svc, 'spec');
  setIfUnset(s, 'sessionAffinity', 'None');
  if (s.sessionAffinity === 'None') delete s.sessionAffinityConfig;
  if (s.sessionAffinity === 'ClientIP') {
    const timeout = asObj(asObj(s.sessionAffinityConfig)?.clientIP)?.timeoutSeconds;
    if (timeout === undefined || timeout === null)
      s.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  setIfUnset(s, 'type', 'ClusterIP');
  for (const p of asArr(s.ports)) {
    const port = asObj(p);
    if (!port) continue;
    setIfUnset(port, 'protocol', 'TCP');
    if (
      port.targetPort === undefined ||
      port.targetPort === null ||
      port.targetPort === 0 ||
      port.targetPort === ''
    )
      port.targetPort = port.port;
  }
  const external =
    s.type === 'LoadBalancer' ||
    s.type === 'NodePort' ||
    (s.type === 'ClusterIP' && asArr(s.externalIPs).length > 0);
  if (external) setIfUnset(s, 'externalTrafficPolicy', 'Cluster');
  if (s.type === 'NodePort' || s.type === 'LoadBalancer' || s.type === 'ClusterIP')
    setIfUnset(s, 'internalTrafficPolicy', 'Cluster');
  if (s.type === 'LoadBalancer') {
    setIfUnset(s, 'allocateLoadBalancerNodePorts', true);
    for (const ing of asArr(asObj(asObj(svc.status)?.loadBalancer)?.ingress)) {
      const i = asObj(ing);
      if (i && asStr(i.ip)) setIfUnset(i, 'ipMode', 'VIP');
    }
  }
  serviceHook?.(svc);
});

registerDefaults(CORE + 'Secret', (secret) => {
  setIfUnset(secret, 'type', 'Opaque');
  // v1 → internal conversion: stringData overwrites data and is never stored.
  const stringData = asObj(secret.stringData);
  if (stringData) {
    const data = ensureObj(secret, 'data');
    for (const [k, v] of Object.entries(stringData))
      data[k] = Buffer.from(asStr(v), 'utf8').toString('base64');
  }
  delete secret.stringData;
});

registerDefaults(CORE + 'PersistentVolume', (pv) => {
  setIfUnset(ensureObj(pv, 'status'), 'phase', 'Pending');
  const s = ensureObj(pv, 'spec');
  setIfUnset(s, 'persistentVolumeReclaimPolicy', 'Retain');
  setIfUnset(s, 'volumeMode', 'Filesystem');
});
registerDefaults(CORE + 'PersistentVolumeClaim', (pvc) =>
  setIfUnset(ensureObj(pvc, 'status'), 'phase', 'Pending'),
);
registerDefaults(CORE + 'PersistentVolumeClaimSpec', (s) => setIfUnset(s, 'volumeMode', 'Filesystem'));
registerDefaults(CORE + 'Endpoints', (ep) => {
  for (const ss of asArr(ep.subsets))
    for (const p of asArr(asObj(ss)?.ports)) if (asObj(p)) setIfUnset(asObj(p)!, 'protocol', 'TCP');
});

registerDefaults(CORE + 'Namespace', (ns) => {
  const meta = ensureObj(ns, 'metadata');
  const name = asStr(meta.name);
  if (name) ensureObj(meta, 'labels')['kubernetes.io/metadata.name'] = name;
  // spec.finalizers is set by the namespace strategy on create only: /finalize may empty it.
  setIfUnset(ensureObj(ns, 'status'), 'phase', 'Active');
});

registerDefaults(CORE + 'NodeStatus', (st) => {
  if ((st.allocatable === undefined || st.allocatable === null) && asObj(st.capacity))
    st.allocatable = { ...asObj(st.capacity) };
});

registerDefaults(CORE + 'LimitRangeItem', (item) => {
  if (item.type !== 'Container') return;
  const def = ensureObj(item, 'default');
  const req = ensureObj(item, 'defaultRequest');
  for (const [k, v] of Object.entries(asObj(item.max) ?? {})) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in req)) req[k] = v;
  for (const [k, v] of Object.entries(asObj(item.min) ?? {})) if (!(k in req)) req[k] = v;
});

registerDefaults(CORE + 'ReplicationController', (rc) => {
  const s = ensureObj(rc, 'spec');
  const labels = asObj(asObj(asObj(s.template)?.metadata)?.labels);
  if (labels) {
    if (Object.keys(asObj(s.selector) ?? {}).length === 0) s.selector = { ...labels };
    const meta = ensureObj(rc, 'metadata');
    if (Object.keys(asObj(meta.labels) ?? {}).length === 0) meta.labels = { ...labels };
  }
  setIfUnset(s, 'replicas', 1);
});

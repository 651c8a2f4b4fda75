// What Kubernetes fixes about Nodes for every component: the namespace of
// the node heartbeat Leases, and the labels a kubelet may set on its own Node
// (pkg/kubelet/apis well_known_labels.go) — the node agent refuses other
// --node-labels, the apiserver's NodeRestriction refuses other label changes.

/** v1.NamespaceNodeLease. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** KubeletLabels: the kubernetes.io labels a kubelet may set. */
export const KUBELET_LABELS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
]);

/** KubeletLabelNamespaces: label namespaces (and their subdomains) a kubelet may use freely. */
export const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

/** The prefix of a label key ("" for an unprefixed key). */
export const labelNamespace = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');

/** Is the label namespace the domain or one of its subdomains? */
export const inDomain = (ns: string, domain: string) => ns === domain || ns.endsWith(`.${domain}`);

/** A label in the kubernetes.io or k8s.io namespaces, reserved for Kubernetes. */
export function isKubernetesLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io');
}

/** IsKubeletLabel. */
export function isKubeletLabel(key: string): boolean {
  if (KUBELET_LABELS.has(key)) return true;
  const ns = labelNamespace(key);
  return KUBELET_LABEL_NAMESPACES.some((d) => inDomain(ns, d));
}

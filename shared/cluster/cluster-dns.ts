// The cluster DNS of a local cluster, as kubeadm installs CoreDNS: the
// kube-dns Service in kube-system at the service range's .10, the node agents
// told --cluster-dns/--cluster-domain, and the server (cmd/dns.ts) as a host
// process under the launcher's supervision, with CoreDNS's RBAC (list and
// watch of Services, EndpointSlices, Namespaces, Pods) under a user of its own.
// It serves on the host's address on node 0's pod bridge, which every pod on
// this machine reaches; the Service has no selector, its EndpointSlice (not
// the endpointslice controller's) points there, for the service proxy.
import { Client } from '../client/client';
import { loadKubeconfig } from '../client/kubeconfig';
import { isAlreadyExists } from '../client/errors';
import { createMissing, type BootstrapObject } from './bootstrap-objects';
import { writeComponentKubeconfig } from './credentials';
import type { ClusterPaths } from './data-dir';
import { indexedIP, podCIDRGateway } from './node-addresses';
import { freePort, waitUntil, type Proc } from './process';

export const DNS_USER = 'system:coredns';
export const CLUSTER_DOMAIN = 'cluster.local';
const NAMESPACE = 'kube-system';
const SERVICE = 'kube-dns';
/** The managed-by of the kube-dns EndpointSlice: not the endpointslice controller's, which leaves it alone. */
export const DNS_SLICE_MANAGER = 'launcher.tkube.io';

/** kubeadm's GetDNSIP: the 10th address of the service CIDR (10.96.0.10 of 10.96.0.0/12). */
export function clusterDNSIP(serviceCIDR: string): string {
  return indexedIP(serviceCIDR.split(',')[0].trim(), 10);
}

/** What every node agent is told (kubeadm's KubeletConfiguration clusterDNS, clusterDomain). */
export function clusterDNSAgentFlags(serviceCIDR: string): string[] {
  return ['--cluster-dns', clusterDNSIP(serviceCIDR), '--cluster-domain', CLUSTER_DOMAIN];
}

const labels = {
  'k8s-app': 'kube-dns',
  'kubernetes.io/cluster-service': 'true',
  'kubernetes.io/name': 'CoreDNS',
};

function rbac(): BootstrapObject[] {
  const group = 'rbac.authorization.k8s.io';
  return [
    {
      resource: `clusterroles.${group}`,
      obj: {
        apiVersion: `${group}/v1`,
        kind: 'ClusterRole',
        metadata: { name: DNS_USER },
        rules: [
          {
            apiGroups: [''],
            resources: ['endpoints', 'services', 'pods', 'namespaces'],
            verbs: ['list', 'watch'],
          },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
        ],
      },
    },
    {
      resource: `clusterrolebindings.${group}`,
      obj: {
        apiVersion: `${group}/v1`,
        kind: 'ClusterRoleBinding',
        metadata: { name: DNS_USER },
        roleRef: { apiGroup: group, kind: 'ClusterRole', name: DNS_USER },
        subjects: [{ kind: 'User', apiGroup: group, name: DNS_USER }],
      },
    },
  ];
}

/** The kube-dns Service, as kubeadm's manifest has it, without a selector (no pod serves it). */
function service(clusterIP: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: SERVICE,
      namespace: NAMESPACE,
      labels,
      annotations: { 'prometheus.io/port': '9153', 'prometheus.io/scrape': 'true' },
    },
    spec: {
      clusterIP,
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
      ],
    },
  };
}

function endpointSlice(address: string, metricsPort: number): any {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${SERVICE}-host`,
      namespace: NAMESPACE,
      labels: {
        'kubernetes.io/service-name': SERVICE,
        'endpointslice.kubernetes.io/managed-by': DNS_SLICE_MANAGER,
        'k8s-app': 'kube-dns',
      },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true, serving: true, terminating: false } }],
    ports: [
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'dns-tcp', port: 53, protocol: 'TCP' },
      { name: 'metrics', port: metricsPort, protocol: 'TCP' },
    ],
  };
}

/**
 * The kube-dns Service at the range's .10, created as kubeadm does before anything else could
 * take the address (an existing one is left alone); the ClusterIP it has.
 */
export async function ensureKubeDNSService(admin: Client, serviceCIDR: string): Promise<string> {
  await createMissing(admin, [
    { resource: 'services', namespace: NAMESPACE, obj: service(clusterDNSIP(serviceCIDR)) },
  ]);
  return (await admin.resource('services').namespace(NAMESPACE).get(SERVICE)).spec.clusterIP;
}

/** The Service's endpoints: the server's address and ports of this run (the metrics port is picked at start). */
async function writeEndpointSlice(admin: Client, address: string, metricsPort: number): Promise<void> {
  const slices = admin.resource('endpointslices.discovery.k8s.io').namespace(NAMESPACE);
  const want = endpointSlice(address, metricsPort);
  try {
    await slices.create(want);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const have = await slices.get(want.metadata.name);
    await slices.update({
      ...want,
      metadata: { ...want.metadata, resourceVersion: have.metadata.resourceVersion },
    });
  }
}

export interface ClusterDNSOptions {
  paths: ClusterPaths;
  server: string;
  serviceCIDR: string;
  /** Node 0's pod CIDR: its containerd made the bridge with the gateway address (containerd.ts). */
  podCIDR: string;
  /** Starts the process as the launcher starts its components (supervised, recorded). */
  start(args: string[]): Proc;
  timeoutMs: number;
  extra?: string[];
}

export interface RunningClusterDNS {
  /** The kube-dns ClusterIP. */
  clusterIP: string;
  /** Where the server answers on UDP and TCP port 53: node 0's bridge gateway. */
  address: string;
  proc: Proc;
}

/** RBAC, credentials, the kube-dns Service and its EndpointSlice, then the server, ready. */
export async function startClusterDNS(o: ClusterDNSOptions): Promise<RunningClusterDNS> {
  const admin = Client.create(loadKubeconfig(o.paths.kubeconfig), { http2: false });
  let clusterIP: string;
  const address = podCIDRGateway(o.podCIDR);
  const ports = { health: await freePort(), ready: await freePort(), metrics: await freePort() };
  try {
    await createMissing(admin, rbac());
    clusterIP = await ensureKubeDNSService(admin, o.serviceCIDR);
    await writeEndpointSlice(admin, address, ports.metrics);
  } finally {
    await admin.close();
  }
  await writeComponentKubeconfig({
    certDir: o.paths.certDir,
    server: o.server,
    subject: { commonName: DNS_USER },
    kubeconfig: o.paths.dnsKubeconfig,
  });
  const proc = o.start([
    '--kubeconfig',
    o.paths.dnsKubeconfig,
    '--cluster-domain',
    CLUSTER_DOMAIN,
    '--dns-bind-address',
    address,
    '--dns-port',
    '53',
    '--health-port',
    String(ports.health),
    '--ready-port',
    String(ports.ready),
    '--metrics-bind-address',
    `${address}:${ports.metrics}`,
    // kubeadm's Corefile: ttl 30, pods insecure.
    '--ttl',
    '30',
    '--pods',
    'insecure',
    ...(o.extra ?? []),
  ]);
  await waitUntil(
    async () => {
      try {
        return (await fetch(`http://${address}:${ports.ready}/ready`)).status === 200;
      } catch {
        return false;
      }
    },
    o.timeoutMs,
    'cluster DNS /ready',
    proc.exited,
  );
  return { clusterIP, address, proc };
}

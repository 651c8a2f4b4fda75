// Services and EndpointSlices covering each feature of the rule generation, for
// the model and renderer tests (goldens in testdata/) and the apply tests.
import type { ModelOptions } from './model';
import type { EndpointSlice, EndpointSliceEndpoint, Service } from './types';

export const NODE = 'node-a';

export const fixtureOptions: ModelOptions = {
  nodeName: NODE,
  nodeIPs: ['192.168.50.2'],
  clusterCIDRs: ['10.244.0.0/16'],
  serviceCIDRs: ['10.96.0.0/16'],
  masqueradeAll: false,
  nodePortAddresses: [],
};

export function service(
  ns: string,
  name: string,
  spec: Service['spec'],
  extra: Partial<Service> = {},
): Service {
  return { metadata: { namespace: ns, name, ...extra.metadata }, spec, status: extra.status };
}

export function ep(
  ip: string,
  nodeName: string,
  conditions: EndpointSliceEndpoint['conditions'] = {},
): EndpointSliceEndpoint {
  return { addresses: [ip], nodeName, conditions: { ready: true, ...conditions } };
}

export function slice(
  ns: string,
  svc: string,
  endpoints: EndpointSliceEndpoint[],
  ports: EndpointSlice['ports'],
  name = `${svc}-abcde`,
): EndpointSlice {
  return {
    metadata: { namespace: ns, name, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints,
    ports,
  };
}

const http = [{ name: 'http', port: 8080, protocol: 'TCP' }];

export const fixtureServices: Service[] = [
  // Balanced over two ready endpoints; the not-ready one is left out.
  service('default', 'web', {
    type: 'ClusterIP',
    clusterIP: '10.96.0.10',
    ports: [{ name: 'http', port: 80 }],
  }),
  // UDP with ClientIP affinity.
  service('kube-system', 'kube-dns', {
    clusterIP: '10.96.0.53',
    ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
    sessionAffinity: 'ClientIP',
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
  }),
  // No endpoints: rejected.
  service('default', 'empty', { clusterIP: '10.96.0.20', ports: [{ port: 80 }] }),
  // NodePort + externalIPs with externalTrafficPolicy Local.
  service('default', 'np', {
    type: 'NodePort',
    clusterIP: '10.96.0.30',
    externalIPs: ['192.0.2.10'],
    externalTrafficPolicy: 'Local',
    ports: [{ name: 'http', port: 80, nodePort: 30080 }],
  }),
  // internalTrafficPolicy Local with no endpoint on this node: dropped.
  service('default', 'itp', {
    clusterIP: '10.96.0.40',
    internalTrafficPolicy: 'Local',
    ports: [{ name: 'http', port: 80 }],
  }),
  // Only a terminating (still serving) endpoint: used.
  service('default', 'term', { clusterIP: '10.96.0.50', ports: [{ name: 'http', port: 80 }] }),
  // SCTP.
  service('default', 'sctp', {
    clusterIP: '10.96.0.60',
    ports: [{ name: 'assoc', port: 9999, protocol: 'SCTP' }],
  }),
  // LoadBalancer: its ingress IP and NodePort, Cluster policy.
  service(
    'default',
    'lb',
    {
      type: 'LoadBalancer',
      clusterIP: '10.96.0.70',
      ports: [{ name: 'https', port: 443, nodePort: 30443 }],
      // The LB IP only for these clients; the invalid entry is ignored.
      loadBalancerSourceRanges: ['203.0.113.0/24', ' 192.168.50.0/24 ', 'not-a-cidr'],
    },
    { status: { loadBalancer: { ingress: [{ ip: '198.51.100.5' }] } } },
  ),
  // Skipped: headless, ExternalName, another proxy's.
  service('default', 'headless', { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] }),
  service('default', 'ext', { type: 'ExternalName', ports: [{ port: 80 }] }),
  service(
    'default',
    'other-proxy',
    { clusterIP: '10.96.0.90', ports: [{ name: 'http', port: 80 }] },
    { metadata: { name: 'other-proxy', labels: { 'service.kubernetes.io/service-proxy-name': 'foo' } } },
  ),
];

export const fixtureSlices: EndpointSlice[] = [
  slice(
    'default',
    'web',
    [ep('10.244.1.5', 'node-a'), ep('10.244.2.7', 'node-b'), ep('10.244.2.9', 'node-b', { ready: false })],
    http,
  ),
  slice(
    'kube-system',
    'kube-dns',
    [ep('10.244.1.53', 'node-a')],
    [{ name: 'dns', port: 5353, protocol: 'UDP' }],
  ),
  slice('default', 'np', [ep('10.244.1.30', 'node-a'), ep('10.244.2.30', 'node-b')], http),
  slice('default', 'itp', [ep('10.244.2.40', 'node-b')], http),
  slice(
    'default',
    'term',
    [
      ep('10.244.1.50', 'node-a', { ready: false, serving: true, terminating: true }),
      ep('10.244.1.51', 'node-a', { ready: false, serving: false, terminating: true }),
    ],
    http,
  ),
  slice('default', 'sctp', [ep('10.244.1.60', 'node-a')], [{ name: 'assoc', port: 9999, protocol: 'SCTP' }]),
  slice('default', 'lb', [ep('10.244.2.70', 'node-b')], [{ name: 'https', port: 8443, protocol: 'TCP' }]),
  slice('default', 'headless', [ep('10.244.1.80', 'node-a')], http),
  slice('default', 'other-proxy', [ep('10.244.1.90', 'node-a')], http),
];

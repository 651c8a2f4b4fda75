// The DNS server's flags: what CoreDNS's Corefile says for a kubeadm cluster
// (kubernetes plugin zone and ttl, pods mode, forward, health, ready,
// prometheus), as command-line flags like the other tkube executables.
import type { FlagSpec } from '../../shared/options/flags';
import { commonFlags } from '../../shared/options/common';

const port = (v: number) =>
  Number.isInteger(v) && v >= 0 && v <= 65535 ? undefined : 'must be a port number between 0 and 65535';

export const dnsFlags: FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    help: 'Path to a kubeconfig file with the apiserver and credentials (defaults to in-cluster config).',
  },
  {
    name: 'cluster-domain',
    type: 'string',
    default: 'cluster.local',
    help: 'The cluster zone this server is authoritative for (with in-addr.arpa and ip6.arpa for cluster IPs).',
    validate: (v: string) =>
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$/i.test(v)
        ? undefined
        : 'must be a DNS domain name',
  },
  {
    name: 'dns-bind-address',
    type: 'string',
    default: '0.0.0.0',
    help: 'The IP address to serve DNS (UDP and TCP) and the health and ready ports on.',
  },
  {
    name: 'dns-port',
    type: 'int',
    default: 53,
    help: 'The port to serve DNS on, UDP and TCP (0: a free port).',
    validate: port,
  },
  {
    name: 'health-port',
    type: 'int',
    default: 8080,
    help: 'The port of /health (CoreDNS health plugin; 0: a free port).',
    validate: port,
  },
  {
    name: 'ready-port',
    type: 'int',
    default: 8181,
    help: 'The port of /ready, 200 once the informers have synced (CoreDNS ready plugin; 0: a free port).',
    validate: port,
  },
  {
    name: 'metrics-bind-address',
    type: 'string',
    default: ':9153',
    help: 'The host:port of /metrics in the Prometheus format (CoreDNS prometheus plugin); "0" disables it.',
  },
  {
    name: 'ttl',
    type: 'int',
    default: 5,
    help: 'The TTL in seconds of the records of the cluster zone (CoreDNS kubernetes plugin ttl; kubeadm sets 30).',
    validate: (v: number) =>
      Number.isInteger(v) && v >= 0 && v <= 3600 ? undefined : 'must be between 0 and 3600',
  },
  {
    name: 'pods',
    type: 'string',
    default: 'insecure',
    help: 'Pod records a-b-c-d.<ns>.pod.<zone>: disabled, insecure (any IP in an existing namespace, as kubeadm and kind configure CoreDNS) or verified (only IPs of pods in that namespace).',
    validate: (v: string) =>
      ['disabled', 'insecure', 'verified'].includes(v) ? undefined : 'must be disabled, insecure or verified',
  },
  {
    name: 'upstream',
    type: 'list',
    default: ['/etc/resolv.conf'],
    help: 'Where names outside the cluster zone go (CoreDNS forward): resolv.conf paths and ip[:port] addresses, or "none" to answer them SERVFAIL.',
  },
  ...commonFlags,
];

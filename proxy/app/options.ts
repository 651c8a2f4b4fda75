// kube-proxy's flags that apply to tkube's service proxy, under their real
// names, with kube-proxy's defaults and help; the few tkube adds say so.
import type { FlagSpec } from '../../shared/options/flags';
import { commonFlags } from '../../shared/options/common';
import { parseCIDR } from '../ip';
import { DEFAULT_CHAIN_PREFIX } from '../iptables';

export const DEFAULT_NFT_TABLE = 'tkube-proxy';

const hostPort = (v: string) =>
  /^(\[[0-9a-fA-F:.]+\]|[^:[\]]*):\d{1,5}$/.test(v) && Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535
    ? undefined
    : `"${v}" must be of the form IP:port`;
const cidrs = (v: string[]) => {
  for (const c of v) {
    try {
      parseCIDR(c);
    } catch (err) {
      return (err as Error).message;
    }
  }
  return undefined;
};
const positive = (v: number) => (v <= 0 ? 'must be greater than 0' : undefined);

export const proxyFlags: FlagSpec[] = [
  ...commonFlags,
  {
    name: 'kubeconfig',
    type: 'string',
    help: 'Path to kubeconfig file with authorization information (the master location can be overridden by the master flag).',
  },
  {
    name: 'master',
    type: 'string',
    help: 'The address of the Kubernetes API server (overrides any value in kubeconfig)',
  },
  {
    name: 'kube-api-qps',
    type: 'float',
    default: 5,
    help: 'QPS to use while talking with kubernetes apiserver',
  },
  {
    name: 'kube-api-burst',
    type: 'int',
    default: 10,
    help: 'Burst to use while talking with kubernetes apiserver',
  },
  {
    name: 'proxy-mode',
    type: 'string',
    default: '',
    help: "Which proxy mode to use: on Linux this can be 'nftables' or 'iptables'. If blank, nftables, falling back to iptables where nft is missing (kube-proxy's blank is iptables).",
    validate: (v) =>
      ['', 'nftables', 'iptables'].includes(v)
        ? undefined
        : `unknown proxy mode "${v}": must be nftables or iptables`,
  },
  {
    name: 'cluster-cidr',
    type: 'list',
    default: [],
    help: 'The CIDR range of the pods in the cluster. Traffic to a Service from outside it is masqueraded; if unset, nothing counts as local.',
    validate: cidrs,
  },
  {
    name: 'nodeport-addresses',
    type: 'list',
    default: [],
    help: "A list of CIDR ranges that contain valid node IPs, or alternatively, the single string 'primary'. If set, connections to NodePort services will only be accepted on node IPs in one of the indicated ranges. If unset, NodePort connections will be accepted on all local IPs.",
    validate: (v: string[]) => cidrs(v.filter((e) => e !== 'primary')),
  },
  {
    name: 'masquerade-all',
    type: 'bool',
    default: false,
    help: 'SNAT all traffic sent via Service cluster IPs. This may be required with some CNI plugins.',
  },
  {
    name: 'node-ip-override',
    type: 'list',
    default: [],
    help: "Overrides kube-proxy's idea of what its node's primary IP(s) are (what --nodeport-addresses=primary means).",
  },
  {
    name: 'healthz-bind-address',
    type: 'string',
    default: '0.0.0.0:10256',
    help: 'The IP address and port for the health check server to serve on, defaulting to "0.0.0.0:10256". Empty: no health server.',
    validate: (v: string) => (v === '' ? undefined : hostPort(v)),
  },
  {
    name: 'metrics-bind-address',
    type: 'string',
    default: '127.0.0.1:10249',
    help: 'The IP address and port for the metrics server to serve on, defaulting to "127.0.0.1:10249". Empty: no metrics server.',
    validate: (v: string) => (v === '' ? undefined : hostPort(v)),
  },
  {
    name: 'hostname-override',
    type: 'string',
    help: "If non-empty, will be used as the name of the Node that kube-proxy is running on. If unset, the node name is assumed to be the same as the node's hostname.",
  },
  {
    name: 'cleanup',
    type: 'bool',
    default: false,
    help: 'If true cleanup iptables and nftables rules and exit.',
  },
  {
    name: 'sync-period',
    type: 'duration',
    default: 30_000,
    help: "An interval (e.g. '5s', '1m', '2h22m') indicating how frequently various re-synchronizing and cleanup operations are performed. Must be greater than 0.",
    validate: positive,
  },
  {
    name: 'min-sync-period',
    type: 'duration',
    default: 1_000,
    help: "The minimum period between proxy rule resyncs (e.g. '5s', '1m', '2h22m'). A value of 0 means every Service or EndpointSlice change will result in an immediate proxy resync.",
  },
  {
    name: 'iptables-sync-period',
    type: 'duration',
    help: 'An interval indicating how frequently various re-synchronizing and cleanup operations are performed.',
    deprecated: 'use --sync-period instead',
  },
  {
    name: 'iptables-min-sync-period',
    type: 'duration',
    help: 'The minimum period between iptables rule resyncs.',
    deprecated: 'use --min-sync-period instead',
  },
  {
    name: 'service-cluster-ip-range',
    type: 'list',
    default: [],
    help: "tkube's own (kube-proxy reads ServiceCIDR objects): the Service CIDR(s); traffic to an address in them that is no ClusterIP is rejected.",
    validate: cidrs,
  },
  {
    name: 'scope-source-cidrs',
    type: 'list',
    default: [],
    help: "tkube's own: for several nodes on one host (one kernel), each with its own proxy: handle only new connections from these CIDRs (the node's pod CIDR) or to the node's IPs (--node-ip-override), leaving the rest to the other nodes' proxies. Unset: every connection.",
    validate: cidrs,
  },
  {
    name: 'nftables-table',
    type: 'string',
    default: DEFAULT_NFT_TABLE,
    help: "tkube's own: the name of the nftables table (in the ip family) the proxy owns, so that several clusters on one host each have their own.",
    validate: (v: string) =>
      /^[A-Za-z][A-Za-z0-9_-]{0,62}$/.test(v)
        ? undefined
        : 'must be a letter followed by letters, digits, "-" or "_"',
  },
  {
    name: 'iptables-chain-prefix',
    type: 'string',
    default: DEFAULT_CHAIN_PREFIX,
    help: "tkube's own: the prefix of the proxy's iptables chains (PREFIX-SERVICES, PREFIX-SVC-..., at most 8 characters).",
    validate: (v: string) =>
      /^[A-Z][A-Z0-9]{0,7}$/.test(v) ? undefined : 'must be 1-8 upper-case letters or digits',
  },
];

// Every kubelet option the node agent knows, under the kubelet's own name and
// with the kubelet's default (SPEC.md "Node agent options"), plus the typed
// configuration the agent runs with once flags and the --config file
// (KubeletConfiguration) are merged (see config.ts).
import type { FlagSpec } from '../../shared/options/flags';
import { commonFlags } from '../../shared/options/common';
import {
  authorizationWebhookCacheFlags,
  clientCAFileFlag,
  tokenWebhookCacheTTLFlag,
} from '../../shared/options/auth';

const portOrZero = (v: number) => (v < 0 || v > 65535 ? 'must be between 0 and 65535, inclusive' : undefined);
const port = (v: number) => (v < 1 || v > 65535 ? 'must be between 1 and 65535, inclusive' : undefined);
const nonNegative = (v: number) => (v < 0 ? 'must be greater than or equal to 0' : undefined);
const percent = (v: number) => (v < 0 || v > 100 ? 'must be between 0 and 100, inclusive' : undefined);

/** The runtimes the agent can drive: the fake one runs no processes; remote is a CRI runtime (containerd). */
export const RUNTIMES = ['fake', 'remote'];

/** The eviction-hard default of the kubelet on Linux (SPEC.md). */
export const DEFAULT_EVICTION_HARD = 'imagefs.available<15%,memory.available<100Mi,nodefs.available<10%';

const serving: FlagSpec[] = [
  {
    name: 'address',
    type: 'string',
    default: '0.0.0.0',
    help: 'The IP address for the Kubelet to serve on (set to 0.0.0.0 or :: for listening on all interfaces and IP address families).',
  },
  {
    name: 'port',
    type: 'int',
    default: 10250,
    help: 'The port for the Kubelet to serve on.',
    validate: port,
  },
  {
    name: 'read-only-port',
    type: 'int',
    default: 10255,
    help: 'The read-only port for the Kubelet to serve on with no authentication/authorization (set to 0 to disable).',
    validate: portOrZero,
  },
  {
    name: 'healthz-port',
    type: 'int',
    default: 10248,
    help: 'The port of the localhost healthz endpoint (set to 0 to disable).',
    validate: portOrZero,
  },
  {
    name: 'healthz-bind-address',
    type: 'string',
    default: '127.0.0.1',
    help: 'The IP address for the healthz server to serve on (set to 0.0.0.0 or :: for listening on all interfaces and IP families).',
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    help: 'File containing x509 Certificate used for serving HTTPS (with intermediate certs, if any, concatenated after server cert). If --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory passed to --cert-dir.',
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    help: 'File containing x509 private key matching --tls-cert-file.',
  },
  {
    name: 'tls-min-version',
    type: 'string',
    help: 'Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13.',
    validate: (v: string) =>
      ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'].includes(v)
        ? undefined
        : `unknown tls version "${v}"`,
  },
  {
    name: 'cert-dir',
    type: 'string',
    default: '/var/lib/kubelet/pki',
    help: 'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored. When left unset, <root-dir>/pki is used if --root-dir was given or the default is not writable (not root).',
  },
];

const auth: FlagSpec[] = [
  {
    name: 'anonymous-auth',
    type: 'bool',
    default: true,
    help: 'Enables anonymous requests to the Kubelet server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.',
  },
  clientCAFileFlag,
  {
    name: 'authentication-token-webhook',
    type: 'bool',
    default: false,
    help: 'Use the TokenReview API to determine authentication for bearer tokens.',
  },
  tokenWebhookCacheTTLFlag,
  {
    name: 'authorization-mode',
    type: 'string',
    default: 'AlwaysAllow',
    help: 'Authorization mode for Kubelet server. Valid options are AlwaysAllow or Webhook. Webhook mode uses the SubjectAccessReview API to determine authorization.',
    validate: (v: string) =>
      ['AlwaysAllow', 'Webhook'].includes(v) ? undefined : `unknown authorization mode "${v}"`,
  },
  ...authorizationWebhookCacheFlags,
];

const node: FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    help: 'Path to a kubeconfig file, specifying how to connect to the API server. Providing --kubeconfig enables API server mode, omitting --kubeconfig enables standalone mode (static pods only).',
  },
  {
    name: 'config',
    type: 'string',
    help: "The Kubelet will load its initial configuration from this file (a KubeletConfiguration of kubelet.config.k8s.io/v1beta1). The path may be absolute or relative; relative paths start at the Kubelet's current working directory. Command-line flags override configuration from this file.",
  },
  {
    name: 'hostname-override',
    type: 'string',
    help: 'If non-empty, will use this string as identification instead of the actual hostname.',
  },
  {
    name: 'node-ip',
    type: 'string',
    help: "IP address (or comma-separated dual-stack IP addresses) of the node. If unset, kubelet will use the node's default IPv4 address, if any.",
  },
  {
    name: 'node-labels',
    type: 'map',
    help: "Labels to add when registering the node in the cluster. Labels must be key=value pairs separated by ','. Labels in the 'kubernetes.io' namespace must begin with an allowed prefix (kubelet.kubernetes.io, node.kubernetes.io) or be in the specifically allowed set (beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, beta.kubernetes.io/os, failure-domain.beta.kubernetes.io/region, failure-domain.beta.kubernetes.io/zone, kubernetes.io/arch, kubernetes.io/hostname, kubernetes.io/os, node.kubernetes.io/instance-type, topology.kubernetes.io/region, topology.kubernetes.io/zone).",
  },
  {
    name: 'register-node',
    type: 'bool',
    default: true,
    help: "Register the node with the apiserver. If --kubeconfig is not provided, this flag is irrelevant, as the Kubelet won't have an apiserver to register with.",
  },
  {
    name: 'register-schedulable',
    type: 'bool',
    default: true,
    help: "Register the node as schedulable. Won't have any effect if --register-node is false.",
    deprecated: 'will be removed in a future version',
  },
  {
    name: 'register-with-taints',
    type: 'list',
    help: 'Register the node with the given list of taints ("<key>=<value>:<effect>" or "<key>:<effect>", comma-separated). No-op if --register-node is false.',
  },
  {
    name: 'pod-cidr',
    type: 'string',
    help: "The CIDR to use for pod IP addresses. Pod IPs are allocated from it (the first usable address is kept for the node bridge); without it the Node's spec.podCIDR assigned by the controller manager is used, and 10.88.0.0/16 when there is none.",
  },
  {
    name: 'root-dir',
    type: 'string',
    default: '/var/lib/kubelet',
    help: "Directory path for managing kubelet files (container logs under <root-dir>/logs). When the default is not writable (not root), a directory under the user's state directory is used.",
  },
  {
    name: 'runtime',
    type: 'string',
    default: 'fake',
    help: `The container runtime to run pods with. Supported: ${RUNTIMES.join(', ')}. fake: containers "run" without processes (annotations tkube.io/fake-* shape their life); remote: the CRI runtime at --container-runtime-endpoint (containerd).`,
    validate: (v: string) =>
      RUNTIMES.includes(v) ? undefined : `unsupported runtime "${v}"; supported: ${RUNTIMES.join(', ')}`,
  },
  {
    // tkube's own (kwok's idea): many nodes for scale tests from one process.
    name: 'simulated-nodes',
    type: 'int',
    default: 0,
    help: 'Host this many simulated nodes instead of being one node: <hostname-override>-1 ... -N each register a Node, renew a Lease and report status, and the pods bound to them go Running on the fake runtime without running anything; each node serves the kubelet API (synthetic stats and logs, no exec) on --address at a port the system picks, in its status.daemonEndpoints. Needs --runtime=fake and --kubeconfig. --kube-api-qps and --kube-api-burst apply per node. Not a kubelet flag.',
    validate: (v: number) => (v < 0 ? 'must not be negative' : undefined),
  },
];

// The CRI runtime (--runtime=remote) and what pods get from the node.
const runtime: FlagSpec[] = [
  {
    name: 'container-runtime-endpoint',
    type: 'string',
    default: 'unix:///run/containerd/containerd.sock',
    help: 'The endpoint of remote runtime service. UNIX domain sockets are supported on Linux, e.g. unix:///path/to/runtime.sock.',
  },
  {
    name: 'image-service-endpoint',
    type: 'string',
    help: 'The endpoint of remote image service. If not specified, it will be the same with --container-runtime-endpoint by default.',
  },
  {
    name: 'runtime-request-timeout',
    type: 'duration',
    default: 120_000,
    help: 'Timeout of all runtime requests except long running request - pull, logs, exec and attach. When timeout exceeded, kubelet will cancel the request, throw out an error and retry later.',
  },
  {
    name: 'pod-infra-container-image',
    type: 'string',
    default: 'registry.k8s.io/pause:3.10',
    help: "Specified image will not be pruned by the image garbage collector. The sandbox image itself is set in the container runtime's configuration.",
  },
  {
    name: 'registry-mirror',
    type: 'string',
    help: "tkube: the registry the container runtime pulls through (the cluster's registry, e.g. http://127.0.0.1:5000); pull errors name it, as the runtime's own do not.",
  },
  {
    name: 'cluster-dns',
    type: 'list',
    help: 'Comma-separated list of DNS server IP address. This value is used for containers DNS server in case of Pods with "dnsPolicy=ClusterFirst".',
  },
  {
    name: 'cluster-domain',
    type: 'string',
    default: '',
    help: "Domain for this cluster. If set, kubelet will configure all containers to search this domain in addition to the host's search domains.",
  },
  {
    name: 'resolv-conf',
    type: 'string',
    default: '/etc/resolv.conf',
    help: 'Resolver configuration file used as the basis for the container DNS resolution configuration.',
  },
  {
    name: 'cgroup-root',
    type: 'string',
    default: '',
    help: "Optional root cgroup to use for pods. This is handled by the container runtime on a best effort basis. Default: '', which means use the container runtime default.",
  },
];

const pods: FlagSpec[] = [
  {
    name: 'max-pods',
    type: 'int',
    default: 110,
    help: 'Number of Pods that can run on this Kubelet.',
    validate: nonNegative,
  },
  {
    name: 'pod-manifest-path',
    type: 'string',
    help: 'Path to the directory containing static pod files to run, or the path to a single static pod file. Files starting with dots will be ignored.',
  },
  {
    name: 'file-check-frequency',
    type: 'duration',
    default: 20_000,
    help: 'Duration between checking config files for new data.',
  },
  {
    name: 'manifest-url',
    type: 'string',
    help: 'URL for accessing additional Pod specifications to run.',
  },
  {
    name: 'manifest-url-header',
    type: 'array',
    help: "Comma-separated list of HTTP headers to use when accessing the url provided to --manifest-url. Multiple headers with the same name will be added in the same order provided. This flag can be repeatedly invoked. For example: --manifest-url-header 'a:hello,b:again,c:world' --manifest-url-header 'b:beautiful'",
  },
  {
    name: 'http-check-frequency',
    type: 'duration',
    default: 20_000,
    help: 'Duration between checking http for new data.',
  },
  {
    name: 'container-log-max-size',
    type: 'string',
    default: '10Mi',
    help: 'Set the maximum size (e.g. 10Mi) of container log file before it is rotated.',
  },
  {
    name: 'container-log-max-files',
    type: 'int',
    default: 5,
    help: 'Set the maximum number of container log files that can be present for a container. The number must be >= 2.',
    validate: (v: number) => (v < 2 ? 'must be greater than or equal to 2' : undefined),
  },
  {
    name: 'pod-max-pids',
    type: 'int',
    default: -1,
    help: 'Set the maximum number of processes per pod. If -1, the kubelet defaults to the node allocatable pid capacity.',
  },
];

const status: FlagSpec[] = [
  {
    name: 'node-status-update-frequency',
    type: 'duration',
    default: 10_000,
    help: 'Specifies how often kubelet computes node status; the status is posted when it changed, and at least every nodeStatusReportFrequency (5m0s, --config only).',
  },
  {
    name: 'node-status-max-images',
    type: 'int',
    default: 50,
    help: 'The maximum number of images to report in Node.Status.Images. If -1 is specified, no cap will be applied.',
  },
  {
    name: 'eviction-hard',
    type: 'string',
    default: DEFAULT_EVICTION_HARD,
    help: 'A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod eviction.',
  },
  {
    name: 'eviction-pressure-transition-period',
    type: 'duration',
    default: 300_000,
    help: 'Duration for which the kubelet has to wait before transitioning out of an eviction pressure condition.',
  },
  {
    name: 'image-gc-high-threshold',
    type: 'int',
    default: 85,
    help: 'The percent of disk usage after which image garbage collection is always run. Values must be within the range [0, 100].',
    validate: percent,
  },
  {
    name: 'image-gc-low-threshold',
    type: 'int',
    default: 80,
    help: 'The percent of disk usage before which image garbage collection is never run. Lowest disk usage to garbage collect to. Values must be within the range [0, 100] and should not be larger than that of --image-gc-high-threshold.',
    validate: percent,
  },
  {
    name: 'minimum-image-ttl-duration',
    type: 'duration',
    default: 120_000,
    help: 'Minimum age for an unused image before it is garbage collected.',
  },
];

const client: FlagSpec[] = [
  {
    name: 'kube-api-qps',
    type: 'int',
    // kubelet's default since Kubernetes 1.27 (5/10 before): pod status writes must not queue.
    default: 50,
    help: 'QPS to use while talking with kubernetes apiserver.',
  },
  {
    name: 'kube-api-burst',
    type: 'int',
    default: 100,
    help: 'Burst to use while talking with kubernetes apiserver.',
  },
  {
    name: 'kube-api-content-type',
    type: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    help: 'Content type of requests sent to apiserver.',
    validate: (v: string) =>
      ['application/json', 'application/vnd.kubernetes.protobuf'].includes(v)
        ? undefined
        : `unsupported content type "${v}"`,
  },
  {
    name: 'event-qps',
    type: 'int',
    default: 5,
    help: 'QPS to limit event creations. The number must be >= 0. If 0 will use DefaultQPS: 5.',
    validate: nonNegative,
  },
  {
    name: 'event-burst',
    type: 'int',
    default: 10,
    help: 'Maximum size of a bursty event records, temporarily allows event records to burst to this number, while still not exceeding event-qps. The number must be >= 0. If 0 will use DefaultBurst: 10.',
    validate: nonNegative,
  },
];

// Accepted and shown for compatibility: the agent has no CPU manager or swap
// handling, and the pods' cgroups are the runtime's (cgroupfs under /kubepods).
const host: FlagSpec[] = [
  {
    name: 'cpu-manager-policy',
    type: 'string',
    default: 'none',
    help: "CPU Manager policy to use. Possible values: 'none', 'static'.",
    validate: (v: string) => (['none', 'static'].includes(v) ? undefined : `unknown policy: "${v}"`),
  },
  {
    name: 'cgroup-driver',
    type: 'string',
    default: 'cgroupfs',
    help: "Driver that the kubelet uses to manipulate cgroups on the host. Possible values: 'cgroupfs', 'systemd'.",
    validate: (v: string) =>
      ['cgroupfs', 'systemd'].includes(v) ? undefined : `invalid cgroup driver "${v}"`,
  },
  {
    name: 'cgroups-per-qos',
    type: 'bool',
    default: true,
    help: 'Enable creation of QoS cgroup hierarchy, if true top level QoS and pod cgroups are created.',
  },
  {
    name: 'cpu-cfs-quota',
    type: 'bool',
    default: true,
    help: 'Enable CPU CFS quota enforcement for containers that specify CPU limits.',
  },
  {
    name: 'fail-swap-on',
    type: 'bool',
    default: true,
    help: 'Makes the Kubelet fail to start if swap is enabled on the node.',
  },
  {
    name: 'oom-score-adj',
    type: 'int',
    default: -999,
    help: 'The oom-score-adj value for kubelet process. Values must be within the range [-1000, 1000].',
    validate: (v: number) => (v < -1000 || v > 1000 ? 'must be within the range [-1000, 1000]' : undefined),
  },
  {
    name: 'max-open-files',
    type: 'int',
    default: 1_000_000,
    help: 'Number of files that can be opened by Kubelet process.',
  },
];

export const nodeagentFlags: FlagSpec[] = [
  ...node,
  ...serving,
  ...runtime,
  ...auth,
  ...pods,
  ...status,
  ...client,
  ...host,
  ...commonFlags,
];

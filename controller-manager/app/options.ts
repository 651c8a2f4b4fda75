// Every kube-controller-manager option tkube knows, under its real Kubernetes
// name, with Kubernetes' default and help text. Behaviour lives in the manager
// and the controllers (ctx.options, camelCase: concurrentGcSyncs ...); this is the table.
import type { FlagSpec } from '../../shared/options/flags';
import { commonFlags } from '../../shared/options/common';
import { clientCAFileFlag } from '../../shared/options/auth';
import { LOCK_TYPES } from '../../shared/leaderelection';

const MIN = 60_000;
const port = (v: number) => (v < 0 || v > 65535 ? 'must be a port number between 0 and 65535' : undefined);
const positive = (v: number) => (v <= 0 ? 'must be greater than 0' : undefined);
const nonNegative = (v: number) => (v < 0 ? 'must not be negative' : undefined);
const fraction = (v: number) =>
  v <= 0 || v > 1 ? 'must be greater than 0 and less than or equal to 1' : undefined;

const generic: FlagSpec[] = [
  {
    name: 'master',
    type: 'string',
    help: 'The address of the Kubernetes API server (overrides any value in kubeconfig).',
  },
  {
    name: 'kubeconfig',
    type: 'string',
    help: 'Path to kubeconfig file with authorization and master location information (the master location can be overridden by the master flag).',
  },
  {
    name: 'kube-api-qps',
    type: 'float',
    default: 20,
    help: 'QPS to use while talking with kubernetes apiserver.',
  },
  {
    name: 'kube-api-burst',
    type: 'int',
    default: 30,
    help: 'Burst to use while talking with kubernetes apiserver.',
  },
  {
    name: 'kube-api-content-type',
    type: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    help: 'Content type of requests sent to apiserver.',
    validate: (v) =>
      ['application/vnd.kubernetes.protobuf', 'application/json'].includes(v)
        ? undefined
        : 'must be application/vnd.kubernetes.protobuf or application/json',
  },
  {
    name: 'controllers',
    type: 'list',
    default: ['*'],
    // The help text lists the known controllers; filled in by controllersHelp().
    help: "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.",
  },
  {
    name: 'controller-start-interval',
    type: 'duration',
    default: 0,
    help: 'Interval between starting controller managers.',
  },
  {
    name: 'min-resync-period',
    type: 'duration',
    default: 12 * 60 * MIN,
    help: 'The resync period in reflectors will be random between MinResyncPeriod and 2*MinResyncPeriod.',
  },
  {
    name: 'use-service-account-credentials',
    type: 'bool',
    default: false,
    help: 'If true, use individual service account credentials for each controller.',
  },
  {
    // tkube's own: the scheduler runs in this process, but as kube-scheduler does under its own
    // identity (system:kube-scheduler) rather than a controller's service account.
    name: 'scheduler-kubeconfig',
    type: 'string',
    help: "Path to a kubeconfig for the built-in scheduler (the 'scheduler' controller), as kube-scheduler's --kubeconfig, e.g. for the user system:kube-scheduler. Defaults to --kubeconfig. Not a kube-controller-manager flag.",
  },
  {
    // tkube's own, beside --scheduler-kubeconfig: kube-scheduler's clientConnection.qps/burst.
    name: 'scheduler-kube-api-qps',
    type: 'float',
    default: 50,
    help: "QPS of the built-in scheduler's client, as kube-scheduler's clientConnection.qps. Not a kube-controller-manager flag.",
  },
  {
    name: 'scheduler-kube-api-burst',
    type: 'int',
    default: 100,
    help: "Burst of the built-in scheduler's client, as kube-scheduler's clientConnection.burst. Not a kube-controller-manager flag.",
  },
  {
    name: 'cluster-name',
    type: 'string',
    default: 'kubernetes',
    help: 'The instance prefix for the cluster.',
  },
  {
    name: 'root-ca-file',
    type: 'string',
    help: "If set, this root certificate authority will be included in service account's token secret. This must be a valid PEM-encoded CA bundle.",
  },
  {
    name: 'service-account-private-key-file',
    type: 'string',
    help: 'Filename containing a PEM-encoded private RSA or ECDSA key used to sign service account tokens.',
  },
  {
    name: 'show-hidden-metrics-for-version',
    type: 'string',
    help: "The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '1.16'. The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, rather than being surprised when they are permanently removed in the release after that.",
  },
  {
    name: 'disabled-metrics',
    type: 'list',
    help: 'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disclaimer: disabling metrics is higher in precedence than showing hidden metrics.',
  },
];

const leaderElection: FlagSpec[] = [
  {
    name: 'leader-elect',
    type: 'bool',
    default: true,
    help: 'Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.',
  },
  {
    name: 'leader-elect-lease-duration',
    type: 'duration',
    default: 15_000,
    help: 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.',
    validate: positive,
  },
  {
    name: 'leader-elect-renew-deadline',
    type: 'duration',
    default: 10_000,
    help: 'The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.',
    validate: positive,
  },
  {
    name: 'leader-elect-retry-period',
    type: 'duration',
    default: 2_000,
    help: 'The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.',
    validate: positive,
  },
  {
    name: 'leader-elect-resource-lock',
    type: 'string',
    default: 'leases',
    help: "The type of resource object that is used for locking during leader election. Supported options are 'leases', 'endpointsleases' and 'configmapsleases'.",
    validate: (v) =>
      (LOCK_TYPES as readonly string[]).includes(v) ? undefined : `must be one of ${LOCK_TYPES.join(', ')}`,
  },
  {
    name: 'leader-elect-resource-name',
    type: 'string',
    default: 'kube-controller-manager',
    help: 'The name of resource object that is used for locking during leader election.',
  },
  {
    name: 'leader-elect-resource-namespace',
    type: 'string',
    default: 'kube-system',
    help: 'The namespace of resource object that is used for locking during leader election.',
  },
  {
    name: 'leader-elect-thread',
    type: 'bool',
    default: false,
    help: 'Campaign for and renew the lease from a thread of its own, so that a long turn of the main thread (collecting a large heap, a pass over a large cache) cannot cost the lease. Costs ~20 MB and ~0.3 s of CPU at start. tkube up sets it for simulated nodes. Not a kube-controller-manager flag.',
  },
];

const serving: FlagSpec[] = [
  {
    name: 'secure-port',
    type: 'int',
    default: 10257,
    help: "The port on which to serve HTTPS with authentication and authorization. If 0, don't serve HTTPS at all.",
    validate: port,
  },
  {
    name: 'bind-address',
    type: 'string',
    default: '0.0.0.0',
    help: 'The IP address on which to listen for the --secure-port port. The associated interface(s) must be reachable by the rest of the cluster, and by CLI/web clients. If blank or an unspecified address (0.0.0.0 or ::), all interfaces and IP address families will be used.',
  },
  {
    name: 'cert-dir',
    type: 'string',
    help: 'The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored. When neither is given the self-signed certificate is kept in memory.',
  },
  {
    name: 'tls-cert-file',
    type: 'string',
    help: 'File containing the default x509 Certificate for HTTPS. (CA cert, if any, concatenated after server cert). If HTTPS serving is enabled, and --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory specified by --cert-dir.',
  },
  {
    name: 'tls-private-key-file',
    type: 'string',
    help: 'File containing the default x509 private key matching --tls-cert-file.',
  },
  {
    name: 'tls-min-version',
    type: 'string',
    help: 'Minimum TLS version supported. Possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13',
    validate: (v) =>
      ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'].includes(v)
        ? undefined
        : 'unknown TLS version',
  },
  clientCAFileFlag,
  {
    name: 'authentication-kubeconfig',
    type: 'string',
    help: "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create tokenreviews.authentication.k8s.io. This is optional. If empty, all token requests are considered to be anonymous and no client CA is looked up in the cluster.",
  },
  {
    name: 'authentication-skip-lookup',
    type: 'bool',
    default: false,
    help: 'If false, the authentication-kubeconfig will be used to lookup missing authentication configuration from the cluster.',
  },
  {
    name: 'authentication-tolerate-lookup-failure',
    type: 'bool',
    default: false,
    help: 'If true, failures to look up missing authentication configuration from the cluster are not considered fatal. Note that this can result in authentication that treats all requests as anonymous.',
  },
  {
    name: 'authorization-kubeconfig',
    type: 'string',
    help: "kubeconfig file pointing at the 'core' kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io. This is optional. If empty, all requests not skipped by authorization are forbidden.",
  },
  {
    name: 'authorization-always-allow-paths',
    type: 'list',
    default: ['/healthz', '/readyz', '/livez'],
    help: "A list of HTTP paths to skip during authorization, i.e. these are authorized without contacting the 'core' kubernetes server.",
  },
];

const concurrency: FlagSpec[] = [
  [
    'concurrent-deployment-syncs',
    5,
    'The number of deployment objects that are allowed to sync concurrently. Larger number = more responsive deployments, but more CPU (and network) load',
  ],
  [
    'concurrent-endpoint-syncs',
    5,
    'The number of endpoint syncing operations that will be done concurrently. Larger number = faster endpoint updating, but more CPU (and network) load',
  ],
  [
    'concurrent-ephemeralvolume-syncs',
    5,
    'The number of ephemeral volume syncing operations that will be done concurrently. Larger number = faster ephemeral volume updating, but more CPU (and network) load',
  ],
  [
    'concurrent-rc-syncs',
    5,
    'The number of replication controllers that are allowed to sync concurrently. Larger number = more responsive replica management, but more CPU (and network) load',
  ],
  [
    'concurrent-replicaset-syncs',
    5,
    'The number of replica sets that are allowed to sync concurrently. Larger number = more responsive replica management, but more CPU (and network) load',
  ],
  [
    'concurrent-resource-quota-syncs',
    5,
    'The number of resource quotas that are allowed to sync concurrently. Larger number = more responsive quota management, but more CPU (and network) load',
  ],
  [
    'concurrent-service-endpoint-syncs',
    5,
    'The number of service endpoint syncing operations that will be done concurrently. Larger number = faster endpoint slice updating, but more CPU (and network) load. Defaults to 5.',
  ],
  [
    'concurrent-serviceaccount-token-syncs',
    5,
    'The number of service account token objects that are allowed to sync concurrently. Larger number = more responsive token generation, but more CPU (and network) load',
  ],
  [
    'concurrent-statefulset-syncs',
    5,
    'The number of statefulset objects that are allowed to sync concurrently. Larger number = more responsive statefulsets, but more CPU (and network) load',
  ],
  [
    'concurrent-ttl-after-finished-syncs',
    5,
    'The number of ttl-after-finished-controller workers that are allowed to sync concurrently.',
  ],
  [
    'concurrent-validating-admission-policy-status-syncs',
    5,
    'The number of ValidatingAdmissionPolicyStatusController workers that are allowed to sync concurrently.',
  ],
  [
    'concurrent-daemonset-syncs',
    2,
    'The number of daemonset objects that are allowed to sync concurrently. Larger number = more responsive daemonsets, but more CPU (and network) load',
  ],
  [
    'concurrent-job-syncs',
    5,
    'The number of job objects that are allowed to sync concurrently. Larger number = more responsive jobs, but more CPU (and network) load',
  ],
  [
    'concurrent-cron-job-syncs',
    5,
    'The number of cron job objects that are allowed to sync concurrently. Larger number = more responsive jobs, but more CPU (and network) load',
  ],
  [
    'concurrent-horizontal-pod-autoscaler-syncs',
    5,
    'The number of horizontal pod autoscaler objects that are allowed to sync concurrently. Larger number = more responsive horizontal pod autoscaler objects processing, but more CPU (and network) load.',
  ],
  [
    'concurrent-gc-syncs',
    20,
    'The number of garbage collector workers that are allowed to sync concurrently.',
  ],
  [
    'concurrent-namespace-syncs',
    10,
    'The number of namespace objects that are allowed to sync concurrently. Larger number = more responsive namespace termination, but more CPU (and network) load',
  ],
  [
    'concurrent-service-syncs',
    1,
    'The number of services that are allowed to sync concurrently. Larger number = more responsive service management, but more CPU (and network) load',
  ],
  [
    'mirroring-concurrent-service-endpoint-syncs',
    5,
    'The number of service endpoint syncing operations that will be done concurrently by the endpointslice-mirroring-controller. Larger number = faster endpoint slice updating, but more CPU (and network) load. Defaults to 5.',
  ],
].map(([name, def, help]) => ({
  name: name as string,
  type: 'int',
  default: def as number,
  help: help as string,
  validate: positive,
}));

const nodes: FlagSpec[] = [
  {
    name: 'node-monitor-grace-period',
    type: 'duration',
    default: 40_000,
    help: "Amount of time which we allow running Node to be unresponsive before marking it unhealthy. Must be N times more than kubelet's nodeStatusUpdateFrequency, where N means number of retries allowed for kubelet to post node status.",
    validate: positive,
  },
  {
    name: 'node-monitor-period',
    type: 'duration',
    default: 5_000,
    help: 'The period for syncing NodeStatus in cloud-node-lifecycle-controller.',
    validate: positive,
  },
  {
    name: 'node-startup-grace-period',
    type: 'duration',
    default: MIN,
    help: 'Amount of time which we allow starting Node to be unresponsive before marking it unhealthy.',
    validate: positive,
  },
  {
    name: 'pod-eviction-timeout',
    type: 'duration',
    default: 5 * MIN,
    help: 'The grace period for deleting pods on failed nodes. This flag has no effect: pods are evicted by the NoExecute taints of taint-based eviction.',
    deprecated:
      'This flag is deprecated and will be removed in a future release. It has no effect: taint-based eviction is always used.',
  },
  {
    name: 'node-eviction-rate',
    type: 'float',
    default: 0.1,
    help: 'Number of nodes per second on which pods are deleted in case of node failure when a zone is healthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters.',
    validate: nonNegative,
  },
  {
    name: 'secondary-node-eviction-rate',
    type: 'float',
    default: 0.01,
    help: 'Number of nodes per second on which pods are deleted in case of node failure when a zone is unhealthy (see --unhealthy-zone-threshold for definition of healthy/unhealthy). Zone refers to entire cluster in non-multizone clusters. This value is implicitly overridden to 0 if the cluster size is smaller than --large-cluster-size-threshold.',
    validate: nonNegative,
  },
  {
    name: 'large-cluster-size-threshold',
    type: 'int',
    default: 50,
    help: 'Number of nodes from which node-lifecycle-controller treats the cluster as large for the eviction logic purposes. --secondary-node-eviction-rate is implicitly overridden to 0 for clusters this size or smaller.',
    validate: nonNegative,
  },
  {
    name: 'unhealthy-zone-threshold',
    type: 'float',
    default: 0.55,
    help: 'Fraction of Nodes in a zone which needs to be not Ready (minimum 3) for zone to be treated as unhealthy.',
    validate: fraction,
  },
  {
    name: 'enable-taint-manager',
    type: 'bool',
    default: true,
    help: 'If set to true enables NoExecute Taints and will evict all not-tolerating Pod running on Nodes tainted with this kind of Taints.',
    deprecated:
      'The taint-eviction-controller is enabled and disabled with --controllers; this flag is kept for compatibility.',
  },
  {
    name: 'terminated-pod-gc-threshold',
    type: 'int',
    default: 12500,
    help: 'Number of terminated pods that can exist before the terminated pod garbage collector starts deleting terminated pods. If <= 0, the terminated pod garbage collector is disabled.',
  },
  {
    name: 'cidr-allocator-type',
    type: 'string',
    default: 'RangeAllocator',
    help: 'Type of CIDR allocator to use',
  },
  {
    name: 'allocate-node-cidrs',
    type: 'bool',
    default: false,
    help: 'Should CIDRs for Pods be allocated and set on the cloud provider.',
  },
  {
    name: 'cluster-cidr',
    type: 'string',
    help: 'CIDR Range for Pods in cluster. Requires --allocate-node-cidrs to be true',
  },
  {
    name: 'service-cluster-ip-range',
    type: 'string',
    help: 'CIDR Range for Services in cluster. Requires --allocate-node-cidrs to be true',
  },
  {
    name: 'node-cidr-mask-size',
    type: 'int',
    default: 0,
    help: 'Mask size for node cidr in cluster. Default is 24 for IPv4 and 64 for IPv6.',
  },
  {
    name: 'route-reconciliation-period',
    type: 'duration',
    default: 10_000,
    help: 'The period for reconciling routes created for Nodes by cloud provider.',
  },
  {
    name: 'configure-cloud-routes',
    type: 'bool',
    default: true,
    help: 'Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider.',
  },
];

const misc: FlagSpec[] = [
  {
    name: 'enable-garbage-collector',
    type: 'bool',
    default: true,
    help: 'Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-apiserver.',
  },
  {
    name: 'namespace-sync-period',
    type: 'duration',
    default: 5 * MIN,
    help: 'The period for syncing namespace life-cycle updates',
    validate: positive,
  },
  {
    name: 'resource-quota-sync-period',
    type: 'duration',
    default: 5 * MIN,
    help: 'The period for syncing quota usage status in the system',
  },
  {
    name: 'pvclaimbinder-sync-period',
    type: 'duration',
    default: 15_000,
    help: 'The period for syncing persistent volumes and persistent volume claims',
  },
  {
    // tkube's own: the local-path provisioner (rancher.io/local-path) runs in this process.
    name: 'local-path-base-dir',
    type: 'string',
    help: "The directory of each node's local-path volumes, {node} standing for the node's name (e.g. /var/lib/tkube/nodes/{node}/storage); the controller manager must run on the nodes' host. Unset: the 'local-path-provisioner' controller does nothing. Not a kube-controller-manager flag.",
  },
  {
    name: 'attach-detach-reconcile-sync-period',
    type: 'duration',
    default: MIN,
    help: 'The reconciler sync wait time between volume attach detach. This duration must be larger than one second, and increasing this value from the default may allow for volumes to be mismatched with pods.',
  },
  {
    name: 'enable-dynamic-provisioning',
    type: 'bool',
    default: true,
    help: 'Enable dynamic provisioning for environments that support it.',
  },
  {
    name: 'pv-recycler-minimum-timeout-hostpath',
    type: 'int',
    default: 60,
    help: 'The minimum ActiveDeadlineSeconds to use for a HostPath Recycler pod.  This is for development and testing only and will not work in a multi-node cluster.',
  },
  {
    name: 'pv-recycler-minimum-timeout-nfs',
    type: 'int',
    default: 300,
    help: 'The minimum ActiveDeadlineSeconds to use for an NFS Recycler pod',
  },
  {
    name: 'pv-recycler-increment-timeout-nfs',
    type: 'int',
    default: 30,
    help: 'the increment of time added per Gi to ActiveDeadlineSeconds for an NFS scrubber pod',
  },
  {
    name: 'pv-recycler-timeout-increment-hostpath',
    type: 'int',
    default: 30,
    help: 'the increment of time added per Gi to ActiveDeadlineSeconds for a HostPath scrubber pod.  This is for development and testing only and will not work in a multi-node cluster.',
  },
  {
    name: 'pv-recycler-pod-template-filepath-hostpath',
    type: 'string',
    help: 'The file path to a pod definition used as a template for HostPath persistent volume recycling. This is for development and testing only and will not work in a multi-node cluster.',
  },
  {
    name: 'pv-recycler-pod-template-filepath-nfs',
    type: 'string',
    help: 'The file path to a pod definition used as a template for NFS persistent volume recycling',
  },
  {
    name: 'volume-host-allow-local-loopback',
    type: 'bool',
    default: true,
    help: 'If false, deny local loopback IPs in addition to any CIDR ranges in --volume-host-cidr-denylist',
  },
  {
    name: 'volume-host-cidr-denylist',
    type: 'list',
    help: 'A comma-separated list of CIDR ranges to avoid from volume plugins.',
  },
  {
    name: 'horizontal-pod-autoscaler-sync-period',
    type: 'duration',
    default: 15_000,
    help: 'The period for syncing the number of pods in horizontal pod autoscaler.',
  },
  {
    name: 'horizontal-pod-autoscaler-downscale-stabilization',
    type: 'duration',
    default: 5 * MIN,
    help: 'Period for which autoscaler will look backwards and not scale down below any recommendation it made during that period.',
  },
  {
    name: 'horizontal-pod-autoscaler-cpu-initialization-period',
    type: 'duration',
    default: 5 * MIN,
    help: 'The period after pod start when CPU samples might be skipped.',
  },
  {
    name: 'horizontal-pod-autoscaler-initial-readiness-delay',
    type: 'duration',
    default: 30_000,
    help: 'The period after pod start during which readiness changes will be treated as initial readiness.',
  },
  {
    name: 'horizontal-pod-autoscaler-tolerance',
    type: 'float',
    default: 0.1,
    help: 'The minimum change (from 1.0) in the desired-to-actual metrics ratio for the horizontal pod autoscaler to consider scaling.',
  },
  {
    name: 'max-endpoints-per-slice',
    type: 'int',
    default: 100,
    help: 'The maximum number of endpoints that will be added to an EndpointSlice. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.',
  },
  {
    name: 'mirroring-max-endpoints-per-subset',
    type: 'int',
    default: 1000,
    help: 'The maximum number of endpoints that will be added to an EndpointSlice by the EndpointSliceMirroring controller. More endpoints per slice will result in less endpoint slices, but larger resources. Defaults to 100.',
  },
  {
    name: 'endpoint-updates-batch-period',
    type: 'duration',
    default: 0,
    help: 'The length of endpoint updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated',
  },
  {
    name: 'endpointslice-updates-batch-period',
    type: 'duration',
    default: 0,
    help: 'The length of endpoint slice updates batching period. Processing of pod changes will be delayed by this duration to join them with potential upcoming updates and reduce the overall number of endpoints updates. Larger number = higher endpoint programming latency, but lower number of endpoints revision generated',
  },
  {
    name: 'cluster-signing-cert-file',
    type: 'string',
    help: 'Filename containing a PEM-encoded X509 CA certificate used to issue cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.',
  },
  {
    name: 'cluster-signing-key-file',
    type: 'string',
    help: 'Filename containing a PEM-encoded RSA or ECDSA private key used to sign cluster-scoped certificates.  If specified, no more specific --cluster-signing-* flag may be specified.',
  },
  {
    name: 'cluster-signing-duration',
    type: 'duration',
    default: 8760 * 60 * MIN,
    help: 'The max length of duration signed certificates will be given.  Individual CSRs may request shorter certs by setting spec.expirationSeconds.',
  },
];

/** The controller manager's flags, as `tkube controller-manager --help` shows them. */
export const controllerManagerFlags: FlagSpec[] = [
  ...generic,
  ...leaderElection,
  ...serving,
  ...concurrency,
  ...nodes,
  ...misc,
  ...commonFlags,
];

/** The --controllers help text with the known names, as kube-controller-manager prints it. */
export function controllersHelp(all: string[], disabledByDefault: string[]): string {
  return (
    "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\n" +
    `All controllers: ${[...all].sort().join(', ')}\n` +
    `Disabled-by-default controllers: ${[...disabledByDefault].sort().join(', ')}`
  );
}

// kube-apiserver's request limits (in-flight, timeouts, sizes), with Kubernetes' defaults.
import type { FlagSpec } from '../../../shared/options/flags';
import { nonNegative } from './checks';

export const limits: FlagSpec[] = [
  {
    name: 'request-timeout',
    type: 'duration',
    default: 60_000,
    help: 'An optional field indicating the duration a handler must keep a request open before timing it out. This is the default request timeout for requests but may be overridden by flags such as --min-request-timeout for specific types of requests.',
  },
  {
    name: 'min-request-timeout',
    type: 'int',
    default: 1800,
    help: 'An optional field indicating the minimum number of seconds a handler must keep a request open before timing it out. Currently only honored by the watch request handler, which picks a randomized value above this number as the connection timeout, to spread out load.',
    validate: nonNegative,
  },
  {
    name: 'max-requests-inflight',
    type: 'int',
    default: 400,
    help: "This and --max-mutating-requests-inflight are summed to determine the server's total concurrency limit when priority and fairness is on. Otherwise, the maximum number of non-mutating requests in flight at a given time; 0 means no limit.",
    validate: nonNegative,
  },
  {
    name: 'max-mutating-requests-inflight',
    type: 'int',
    default: 200,
    help: 'The maximum number of mutating requests in flight at a given time (when priority and fairness is off); 0 means no limit.',
    validate: nonNegative,
  },
  {
    name: 'enable-priority-and-fairness',
    type: 'bool',
    default: true,
    help: 'If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness.',
  },
  {
    name: 'goaway-chance',
    type: 'float',
    default: 0,
    help: 'To prevent HTTP/2 clients from getting stuck on a single apiserver, randomly close a connection (GOAWAY). Min is 0 (off), Max is .02.',
    validate: (v) => (v < 0 || v > 0.02 ? 'must be between 0 and 0.02' : undefined),
  },
  {
    name: 'shutdown-delay-duration',
    type: 'duration',
    default: 0,
    help: 'Time to delay the termination. During that time the server keeps serving requests normally; /healthz and /livez return success, /readyz returns failure.',
  },
  {
    name: 'shutdown-send-retry-after',
    type: 'bool',
    default: false,
    help: 'If true the HTTP server will continue listening until all non long running requests in flight have been drained, during this window all incoming requests will be rejected with a status code 429 and a Retry-After response header.',
  },
  {
    name: 'shutdown-watch-termination-grace-period',
    type: 'duration',
    default: 0,
    help: 'The grace period for active watch requests to drain during graceful shutdown.',
  },
  {
    name: 'livez-grace-period',
    type: 'duration',
    default: 0,
    help: "This option represents the maximum amount of time it should take for apiserver to complete its startup sequence and become live. From apiserver's start time to when this amount of time has elapsed, /livez will assume that unfinished post-start hooks will complete successfully and therefore return true.",
  },
  { name: 'event-ttl', type: 'duration', default: 3_600_000, help: 'Amount of time to retain events.' },
  {
    name: 'service-cluster-ip-range',
    type: 'string',
    default: '10.0.0.0/24',
    help: 'A CIDR notation IP range from which to assign service cluster IPs. This must not overlap with any IP ranges assigned to nodes or pods. Max of two dual-stack CIDRs is allowed.',
  },
  {
    name: 'service-node-port-range',
    type: 'string',
    default: '30000-32767',
    help: 'A port range to reserve for services with NodePort visibility. Example: "30000-32767". Inclusive at both ends of the range.',
    validate: (v: string) =>
      /^\d+-\d+$/.test(v) || /^\d+\+\d+$/.test(v) ? undefined : 'invalid port range, expected "30000-32767"',
  },
  {
    name: 'endpoint-reconciler-type',
    type: 'string',
    default: 'lease',
    help: 'Use an endpoint reconciler (master-count, lease, none). master-count is deprecated, and will be removed in a future version.',
    validate: (v) =>
      ['lease', 'master-count', 'none'].includes(v) ? undefined : 'must be one of lease, master-count, none',
  },
  {
    name: 'apiserver-count',
    type: 'int',
    default: 1,
    help: 'The number of apiservers running in the cluster, must be a positive number. (In use when --endpoint-reconciler-type=master-count is enabled.)',
    deprecated: 'apiserver-count is deprecated and will be removed in a future version.',
  },
  {
    name: 'identity-lease-duration-seconds',
    type: 'int',
    default: 3600,
    help: 'The duration of kube-apiserver lease in seconds, must be a positive number.',
    hidden: true,
    validate: (v) => (v <= 0 ? 'must be positive' : undefined),
  },
  {
    name: 'identity-lease-renew-interval-seconds',
    type: 'int',
    default: 10,
    help: 'The interval of kube-apiserver renewing its lease in seconds, must be a positive number.',
    hidden: true,
    validate: (v) => (v <= 0 ? 'must be positive' : undefined),
  },
  {
    name: 'default-not-ready-toleration-seconds',
    type: 'int',
    default: 300,
    help: 'Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.',
  },
  {
    name: 'default-unreachable-toleration-seconds',
    type: 'int',
    default: 300,
    help: 'Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.',
  },
  { name: 'kubelet-timeout', type: 'duration', default: 5_000, help: 'Timeout for kubelet operations.' },
  {
    name: 'kubelet-preferred-address-types',
    type: 'list',
    default: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'],
    help: 'List of the preferred NodeAddressTypes to use for kubelet connections.',
  },
  {
    name: 'kubelet-client-certificate',
    type: 'string',
    help: 'Path to a client cert file for TLS to kubelets.',
  },
  { name: 'kubelet-client-key', type: 'string', help: 'Path to a client key file for TLS to kubelets.' },
  {
    name: 'kubelet-certificate-authority',
    type: 'string',
    help: 'Path to a cert file for the certificate authority of kubelets.',
  },
  {
    name: 'max-request-body-bytes',
    type: 'int',
    default: 3 * 1024 * 1024,
    help: 'The limit on the request body size that the server accepts (Kubernetes uses 3 MiB).',
    hidden: true,
  },
];

// kube-apiserver's storage flags (etcd, the embedded store, watch cache, encryption), with Kubernetes' defaults.
import type { FlagSpec } from '../../../shared/options/flags';
import { nonNegative } from './checks';

export const storage: FlagSpec[] = [
  {
    name: 'storage-backend',
    type: 'string',
    default: 'embedded',
    help: 'The storage backend for persistence. Options: "embedded" (LMDB in --data-dir, the default), "etcd3".',
    validate: (v) => (['embedded', 'etcd3'].includes(v) ? undefined : 'must be "embedded" or "etcd3"'),
  },
  { name: 'data-dir', type: 'string', default: '/var/lib/tkube', help: 'Directory of the embedded store.' },
  {
    name: 'etcd-servers',
    type: 'list',
    help: 'List of etcd servers to connect with (scheme://ip:port), comma separated. Selects the etcd3 backend.',
  },
  {
    name: 'etcd-prefix',
    type: 'string',
    default: '/registry',
    help: 'The prefix to prepend to all resource paths in the store.',
  },
  {
    name: 'etcd-cafile',
    type: 'string',
    help: 'SSL Certificate Authority file used to secure etcd communication.',
  },
  {
    name: 'etcd-certfile',
    type: 'string',
    help: 'SSL certification file used to secure etcd communication.',
  },
  { name: 'etcd-keyfile', type: 'string', help: 'SSL key file used to secure etcd communication.' },
  {
    name: 'etcd-compaction-interval',
    type: 'duration',
    default: 300_000,
    help: 'The interval of compaction requests. If 0, the compaction request from apiserver is disabled.',
  },
  {
    name: 'etcd-count-metric-poll-period',
    type: 'duration',
    default: 60_000,
    help: 'Frequency of polling the store for the number of resources per type. 0 disables metric collection.',
  },
  {
    name: 'etcd-db-metric-poll-interval',
    type: 'duration',
    default: 30_000,
    help: 'The interval of requests to poll the store and update the database size metric. 0 disables the metric collection.',
  },
  {
    name: 'etcd-healthcheck-timeout',
    type: 'duration',
    default: 2_000,
    help: 'The timeout to use when checking the store health.',
  },
  {
    name: 'etcd-readycheck-timeout',
    type: 'duration',
    default: 2_000,
    help: 'The timeout to use when checking the store readiness.',
  },
  {
    name: 'lease-reuse-duration-seconds',
    type: 'int',
    default: 60,
    help: 'The time in seconds that each lease is reused. A lower value could avoid large number of objects reusing the same lease.',
  },
  {
    name: 'storage-media-type',
    type: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    help: 'The media type to use to store objects in storage. Supported: application/json, application/yaml, application/vnd.kubernetes.protobuf.',
    validate: (v) =>
      ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'].includes(v)
        ? undefined
        : 'unsupported media type',
  },
  { name: 'watch-cache', type: 'bool', default: true, help: 'Enable watch caching in the apiserver.' },
  {
    name: 'default-watch-cache-size',
    type: 'int',
    default: 100,
    help: 'Default watch cache size. If zero, watch cache will be disabled for resources that do not have a default watch size set.',
    validate: nonNegative,
  },
  {
    name: 'watch-cache-sizes',
    type: 'list',
    help: 'Watch cache size settings for some resources (pods, nodes, etc.), comma separated. The individual setting format: resource[.group]#size.',
    validate: (v: string[]) =>
      v.find((s) => !/^[a-z0-9.-]+#\d+$/.test(s)) && 'invalid format, expected resource[.group]#size',
  },
  {
    name: 'encryption-provider-config',
    type: 'string',
    help: 'The file containing configuration for encryption providers to be used for storing secrets in the store.',
  },
  {
    name: 'encryption-provider-config-automatic-reload',
    type: 'bool',
    default: false,
    help: 'Determines if the file set by --encryption-provider-config should be automatically reloaded if the disk contents change.',
  },
  {
    name: 'delete-collection-workers',
    type: 'int',
    default: 1,
    help: 'Number of workers spawned for DeleteCollection call. These are used to speed up namespace cleanup.',
    validate: (v) => (v < 1 ? 'must be at least 1' : undefined),
  },
  {
    name: 'enable-garbage-collector',
    type: 'bool',
    default: true,
    help: 'Enables the generic garbage collector. MUST be synced with the corresponding flag of the kube-controller-manager.',
  },
];

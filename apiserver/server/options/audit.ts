// kube-apiserver's audit flags (log and webhook backends), with Kubernetes' defaults.
import type { FlagSpec } from '../../../shared/options/flags';

export const audit: FlagSpec[] = [
  {
    name: 'audit-policy-file',
    type: 'string',
    help: 'Path to the file that defines the audit policy configuration.',
  },
  {
    name: 'audit-log-path',
    type: 'string',
    help: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out.",
  },
  {
    name: 'audit-log-format',
    type: 'string',
    default: 'json',
    help: 'Format of saved audits. "legacy" indicates 1-line text format for each event. "json" indicates structured json format.',
    validate: (v) => (['json', 'legacy'].includes(v) ? undefined : 'must be json or legacy'),
  },
  {
    name: 'audit-log-mode',
    type: 'string',
    default: 'blocking',
    help: 'Strategy for sending audit events. Blocking indicates sending events should block server responses. Batch causes the backend to buffer and write events asynchronously. Known modes are batch,blocking,blocking-strict.',
    validate: (v) =>
      ['batch', 'blocking', 'blocking-strict'].includes(v)
        ? undefined
        : 'must be batch, blocking or blocking-strict',
  },
  {
    name: 'audit-log-version',
    type: 'string',
    default: 'audit.k8s.io/v1',
    help: 'API group and version used for serializing audit events written to log.',
  },
  {
    name: 'audit-log-maxage',
    type: 'int',
    default: 0,
    help: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename.',
  },
  {
    name: 'audit-log-maxbackup',
    type: 'int',
    default: 0,
    help: "The maximum number of old audit log files to retain. Setting a value of 0 will mean there's no restriction on the number of files.",
  },
  {
    name: 'audit-log-maxsize',
    type: 'int',
    default: 0,
    help: 'The maximum size in megabytes of the audit log file before it gets rotated.',
  },
  {
    name: 'audit-log-compress',
    type: 'bool',
    default: false,
    help: 'If set, the rotated log files will be compressed using gzip.',
  },
  {
    name: 'audit-log-batch-buffer-size',
    type: 'int',
    default: 10000,
    help: 'The size of the buffer to store events before batching and writing. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-max-size',
    type: 'int',
    default: 1,
    help: 'The maximum size of a batch. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-max-wait',
    type: 'duration',
    default: 0,
    help: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
  },
  {
    name: 'audit-log-batch-throttle-burst',
    type: 'int',
    default: 0,
    help: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-throttle-enable',
    type: 'bool',
    default: false,
    help: 'Whether batching throttling is enabled. Only used in batch mode.',
  },
  {
    name: 'audit-log-batch-throttle-qps',
    type: 'float',
    default: 0,
    help: 'Maximum average number of batches per second. Only used in batch mode.',
  },
  {
    name: 'audit-log-truncate-enabled',
    type: 'bool',
    default: false,
    help: 'Whether event and batch truncating is enabled.',
  },
  {
    name: 'audit-log-truncate-max-batch-size',
    type: 'int',
    default: 10485760,
    help: 'Maximum size of the batch sent to the underlying backend.',
  },
  {
    name: 'audit-log-truncate-max-event-size',
    type: 'int',
    default: 102400,
    help: 'Maximum size of the audit event sent to the underlying backend.',
  },
  {
    name: 'audit-webhook-config-file',
    type: 'string',
    help: 'Path to a kubeconfig formatted file that defines the audit webhook configuration.',
  },
  {
    name: 'audit-webhook-mode',
    type: 'string',
    default: 'batch',
    help: 'Strategy for sending audit events. Known modes are batch,blocking,blocking-strict.',
    validate: (v) =>
      ['batch', 'blocking', 'blocking-strict'].includes(v)
        ? undefined
        : 'must be batch, blocking or blocking-strict',
  },
  {
    name: 'audit-webhook-batch-buffer-size',
    type: 'int',
    default: 10000,
    help: 'The size of the buffer to store events before batching and writing. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-max-size',
    type: 'int',
    default: 400,
    help: 'The maximum size of a batch. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-max-wait',
    type: 'duration',
    default: 30_000,
    help: "The amount of time to wait before force writing the batch that hadn't reached the max size. Only used in batch mode.",
  },
  {
    name: 'audit-webhook-batch-throttle-burst',
    type: 'int',
    default: 15,
    help: 'Maximum number of requests sent at the same moment if ThrottleQPS was not utilized before. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-throttle-enable',
    type: 'bool',
    default: true,
    help: 'Whether batching throttling is enabled. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-batch-throttle-qps',
    type: 'float',
    default: 10,
    help: 'Maximum average number of batches per second. Only used in batch mode.',
  },
  {
    name: 'audit-webhook-initial-backoff',
    type: 'duration',
    default: 10_000,
    help: 'The amount of time to wait before retrying the first failed request.',
  },
  {
    name: 'audit-webhook-truncate-enabled',
    type: 'bool',
    default: false,
    help: 'Whether event and batch truncating is enabled.',
  },
  {
    name: 'audit-webhook-truncate-max-batch-size',
    type: 'int',
    default: 10485760,
    help: 'Maximum size of the batch sent to the underlying backend.',
  },
  {
    name: 'audit-webhook-truncate-max-event-size',
    type: 'int',
    default: 102400,
    help: 'Maximum size of the audit event sent to the underlying backend.',
  },
  {
    name: 'audit-webhook-version',
    type: 'string',
    default: 'audit.k8s.io/v1',
    help: 'API group and version used for serializing audit events written to webhook.',
  },
];

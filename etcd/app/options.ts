// The stand-in's flags: etcd's own names and defaults (etcd --help), so that envtest's
// command line and the usual single-member ones run unchanged. Clustering, TLS and tuning
// flags are accepted for a one-member, plain-HTTP server and otherwise change nothing.
import type { FlagSpec } from '../../shared/options/flags';

const s = (name: string, help: string, def?: string): FlagSpec => ({
  name,
  type: 'string',
  help,
  default: def,
});
const b = (name: string, help: string): FlagSpec => ({ name, type: 'bool', default: false, help });
const i = (name: string, help: string, def: number): FlagSpec => ({ name, type: 'int', help, default: def });
const l = (name: string, help: string, def: string[]): FlagSpec => ({
  name,
  type: 'list',
  help,
  default: def,
});

/** Accepted with no effect here: a single member has no peers, elections or snapshots to tune. */
const noEffect = '(accepted; no effect in tkube etcd)';

export const etcdFlags: FlagSpec[] = [
  s('name', 'Human-readable name for this member.', 'default'),
  s('data-dir', 'Path to the data directory (default "${name}.etcd").'),
  l('listen-client-urls', 'List of URLs to listen on for client traffic (http:// only).', [
    'http://localhost:2379',
  ]),
  l('advertise-client-urls', "List of this member's client URLs to advertise to the public.", [
    'http://localhost:2379',
  ]),
  l('listen-peer-urls', `List of URLs to listen on for peer traffic ${noEffect}.`, ['http://localhost:2380']),
  l(
    'initial-advertise-peer-urls',
    "List of this member's peer URLs to advertise to the rest of the cluster.",
    ['http://localhost:2380'],
  ),
  s('initial-cluster', `Initial cluster configuration for bootstrapping ${noEffect}.`),
  s('initial-cluster-token', `Initial cluster token for the etcd cluster during bootstrap ${noEffect}.`),
  s('initial-cluster-state', `Initial cluster state ('new' or 'existing') ${noEffect}.`, 'new'),
  b('unsafe-no-fsync', 'Disables fsync, unsafe, will cause data loss.'),
  i('quota-backend-bytes', `Raise alarms when backend size exceeds the given quota ${noEffect}.`, 0),
  i('max-request-bytes', 'Maximum client request size in bytes the server will accept.', 1572864),
  i('max-txn-ops', 'Maximum number of operations permitted in a transaction.', 128),
  {
    name: 'experimental-watch-progress-notify-interval',
    type: 'duration',
    default: 10 * 60_000,
    help: 'Duration of periodic watch progress notifications.',
  },
  s('auto-compaction-retention', `Auto compaction retention ${noEffect}.`, '0'),
  s(
    'auto-compaction-mode',
    `Interpret 'auto-compaction-retention' one of: periodic|revision ${noEffect}.`,
    'periodic',
  ),
  i('snapshot-count', `Number of committed transactions to trigger a snapshot to disk ${noEffect}.`, 100000),
  i('heartbeat-interval', `Time (in milliseconds) of a heartbeat interval ${noEffect}.`, 100),
  i('election-timeout', `Time (in milliseconds) for an election to timeout ${noEffect}.`, 1000),
  s('logger', `Currently only supports 'zap' for structured logging ${noEffect}.`, 'zap'),
  s('log-level', 'Configures log level. Only supports debug, info, warn, error, panic, or fatal.', 'info'),
  l('log-outputs', `Specify 'stdout' or 'stderr' to skip journald logging ${noEffect}.`, ['default']),
  l('listen-metrics-urls', `List of URLs to listen on for the metrics and health endpoints ${noEffect}.`, []),
  b('enable-pprof', `Enable runtime profiling data via HTTP server ${noEffect}.`),
  b('enable-v2', `Accept etcd V2 client requests ${noEffect}.`),
  b('force-new-cluster', `Force to create a new one member cluster ${noEffect}.`),
  b('strict-reconfig-check', `Reject reconfiguration requests that would cause quorum loss ${noEffect}.`),
  s('cert-file', 'Path to the client server TLS cert file (TLS is not served: https:// URLs are refused).'),
  s('key-file', 'Path to the client server TLS key file.'),
  s('trusted-ca-file', 'Path to the client server TLS trusted CA cert file.'),
  b('client-cert-auth', 'Enable client cert authentication.'),
  b('version', 'Print the version and exit.'),
];

// metrics-server's flags (the ones it has in Kubernetes clusters that apply here).
import type { FlagSpec } from '../shared/options/flags';

export const metricsServerFlags: FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    help: 'The path to the kubeconfig used to connect to the Kubernetes API server and the Kubelets (defaults to in-cluster config)',
  },
  {
    name: 'secure-port',
    type: 'int',
    default: 10250,
    help: 'The port on which to serve HTTPS with authentication and authorization. If 0, a free port is picked.',
  },
  {
    name: 'bind-address',
    type: 'string',
    default: '127.0.0.1',
    help: 'The IP address on which to listen for the --secure-port port.',
  },
  {
    name: 'metric-resolution',
    type: 'duration',
    default: 15_000,
    help: 'The resolution at which metrics-server will retain metrics, must set value at least 10s.',
  },
  {
    name: 'service-external-name',
    type: 'string',
    default: 'localhost',
    help: 'The name the registered Service kube-system/metrics-server resolves to (an ExternalName service: the aggregator reaches this server there).',
  },
];

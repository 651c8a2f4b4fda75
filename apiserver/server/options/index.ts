// Every kube-apiserver option tkube knows, under its real Kubernetes name,
// with Kubernetes' default. Behaviour lives elsewhere; these are the tables, one file per group.
import type { FlagSpec } from '../../../shared/options/flags';
import { commonFlags } from '../../../shared/options/common';
import { audit } from './audit';
import { authentication } from './authentication';
import { limits } from './limits';
import { serving } from './serving';
import { storage } from './storage';

const workloads: FlagSpec[] = [
  {
    name: 'allow-privileged',
    type: 'bool',
    default: false,
    help: 'If true, allow privileged containers. [default=false] (accepted as kube-apiserver does; tkube does not reject privileged containers yet, so false is not enforced)',
  },
  {
    name: 'run-controller-manager',
    type: 'bool',
    default: false,
    help: "tkube only: also run the controller manager's controllers (all but the scheduler: namespace deletion, garbage collection, workloads ...) in this process, against this apiserver through its loopback client, from the first client request after start (health probes aside). The envtest kube-apiserver asset (tkube envtest-assets) sets it, since envtest starts no controller manager.",
  },
];

const versioning: FlagSpec[] = [
  {
    name: 'runtime-config',
    type: 'map',
    help: 'A set of key=value pairs that enable or disable built-in APIs. Supported keys: v1=true|false for the core API group; <group>/<version>=true|false for a specific API group and version; <group>/<version>/<resource>=true|false for a resource; api/all, api/ga, api/beta, api/alpha for all, GA, beta or alpha API versions; api/legacy is deprecated.',
  },
  {
    name: 'show-hidden-metrics-for-version',
    type: 'string',
    help: "The previous version for which you want to show hidden metrics. Only the previous minor version is meaningful, other values will not be allowed. The format is <major>.<minor>, e.g.: '1.16'.",
  },
  {
    name: 'disabled-metrics',
    type: 'list',
    help: 'This flag provides an escape hatch for misbehaving metrics. You must provide the fully qualified metric name in order to disable it. Disabling metrics takes precedence over showing hidden metrics.',
  },
];

export const apiserverFlags: FlagSpec[] = [
  ...serving,
  ...storage,
  ...limits,
  ...authentication,
  ...audit,
  ...workloads,
  ...versioning,
  ...commonFlags,
];

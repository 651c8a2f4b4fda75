// Flags every tkube executable has, as every Kubernetes component does.
import type { FlagSpec } from './flags';
import { featureGates } from './feature-gates';

export const commonFlags: FlagSpec[] = [
  { name: 'v', short: 'v', type: 'int', default: 0, help: 'number for the log level verbosity' },
  {
    name: 'feature-gates',
    type: 'map',
    help:
      'A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n' +
      featureGates.describe().join('\n'),
  },
];

// NodePorts: the pod's host ports must be free on the node (same protocol and
// port on an overlapping host IP conflicts).
import { hostPortsConflict } from '../../../../shared/api/scheduling';
import type { Plugin } from '../framework';

export const nodePorts: Plugin = {
  name: 'NodePorts',
  filter(s, n) {
    if (!s.hostPorts.length || !hostPortsConflict(s.hostPorts, n.usage.hostPorts.keys())) return undefined;
    return { reasons: ["node(s) didn't have free ports for the requested pod ports"], resolvable: true };
  },
};

// NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that
// tolerate node.kubernetes.io/unschedulable:NoSchedule.
import { TAINT_UNSCHEDULABLE, tolerationsTolerateTaint } from '../../../../shared/api/taints';
import type { Plugin } from '../framework';

const UNSCHEDULABLE = { key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' as const };

export const nodeUnschedulable: Plugin = {
  name: 'NodeUnschedulable',
  filter(s, n) {
    if (!n.node.spec?.unschedulable || tolerationsTolerateTaint(s.pod.spec?.tolerations ?? [], UNSCHEDULABLE))
      return undefined;
    return { reasons: ['node(s) were unschedulable'], resolvable: false };
  },
};

// TaintToleration: untolerated NoSchedule/NoExecute taints keep a pod off a
// node; fewer untolerated PreferNoSchedule taints score higher (weight 3).
import { findUntoleratedTaint } from '../../../../shared/api/scheduling';
import { tolerationsTolerateTaint, type Taint, type Toleration } from '../../../../shared/api/taints';
import { defaultNormalizeScore, type Plugin } from '../framework';

const NAME = 'TaintToleration';

export const taintToleration: Plugin = {
  name: NAME,
  weight: 3,
  filter(s, n) {
    const taint = findUntoleratedTaint(n.taints, s.pod.spec?.tolerations ?? [], ['NoSchedule', 'NoExecute']);
    if (!taint) return undefined;
    return {
      reasons: [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`],
      resolvable: false,
    };
  },
  preScore(s) {
    // getAllTolerationPreferNoSchedule: only tolerations of that effect (or of every effect) count.
    const tolerations = (s.pod.spec?.tolerations ?? []).filter(
      (t: Toleration) => !t.effect || t.effect === 'PreferNoSchedule',
    );
    s.write(NAME, tolerations);
    return true;
  },
  score(s, n) {
    const tolerations = s.read<Toleration[]>(NAME)!;
    let count = 0;
    for (const t of n.node.spec?.taints ?? [])
      if ((t as Taint).effect === 'PreferNoSchedule' && !tolerationsTolerateTaint(tolerations, t)) count++;
    return count;
  },
  normalize: (_s, scores) => defaultNormalizeScore(scores, true),
};

// NodeAffinity: the pod's nodeSelector and required node affinity select the
// node; the weights of its preferred terms the node matches score (weight 2).
import {
  nodeSelectorTermMatches,
  podMatchesNodeSelectorAndAffinity,
} from '../../../../shared/api/scheduling';
import { defaultNormalizeScore, type Plugin } from '../framework';

const NAME = 'NodeAffinity';

export const nodeAffinity: Plugin = {
  name: NAME,
  weight: 2,
  filter(s, n) {
    if (podMatchesNodeSelectorAndAffinity(s.pod.spec, n.node)) return undefined;
    return { reasons: ["node(s) didn't match Pod's node affinity/selector"], resolvable: false };
  },
  preScore(s) {
    const preferred: any[] =
      s.pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    s.write(NAME, preferred);
    return preferred.length > 0;
  },
  score(s, n) {
    let sum = 0;
    for (const term of s.read<any[]>(NAME)!)
      if (term.weight && nodeSelectorTermMatches(term.preference, n.node)) sum += term.weight;
    return sum;
  },
  normalize: (_s, scores) => defaultNormalizeScore(scores, false),
};

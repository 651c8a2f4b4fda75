// NodeName: a pod that names its node fits that node only.
import type { Plugin } from '../framework';

export const nodeName: Plugin = {
  name: 'NodeName',
  filter(s, n) {
    const want: string | undefined = s.pod.spec?.nodeName;
    if (!want || want === n.name) return undefined;
    return { reasons: ["node(s) didn't match the requested node name"], resolvable: false };
  },
};

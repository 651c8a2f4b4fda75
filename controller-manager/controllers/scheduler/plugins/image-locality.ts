// ImageLocality (weight 1): nodes that already have the pod's images score
// higher, by the images' sizes scaled by how many nodes have them (so one
// node with a popular image does not draw every pod), between 23 MB and
// 1000 MB per container.
import { normalizedImageName } from '../cache';
import { MAX_NODE_SCORE, type Plugin } from '../framework';

const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;

export const imageLocality: Plugin = {
  name: 'ImageLocality',
  weight: 1,
  score(s, n) {
    const containers: any[] = [...(s.pod.spec?.initContainers ?? []), ...(s.pod.spec?.containers ?? [])];
    if (!n.images.size) return 0;
    const total = s.cache.nodes().length;
    let sum = 0;
    for (const c of containers) {
      const name = normalizedImageName(String(c.image ?? ''));
      const size = n.images.get(name);
      if (size !== undefined) sum += Math.trunc((size * (s.cache.imageNodes.get(name) ?? 0)) / total);
    }
    const max = MAX_CONTAINER_THRESHOLD * containers.length;
    const clamped = Math.min(max, Math.max(MIN_THRESHOLD, sum));
    return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (max - MIN_THRESHOLD));
  },
};

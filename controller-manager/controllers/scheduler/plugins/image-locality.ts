// ImageLocality (weight 1): nodes that already have the pod's images score
// higher, by the images' sizes scaled by how many nodes have them (so one
// node with a popular image does not draw every pod), between 23 MB and
// 1000 MB per container.
import { normalizedImageName } from '../cache';
import { MAX_NODE_SCORE, type Plugin } from '../framework';

const NAME = 'ImageLocality';
const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;

export const imageLocality: Plugin = {
  name: NAME,
  weight: 1,
  // No node lists any of the pod's images (simulated nodes list none): every node would score 0.
  preScore(s) {
    const containers: any[] = [...(s.pod.spec?.initContainers ?? []), ...(s.pod.spec?.containers ?? [])];
    const images = containers.map((c) => normalizedImageName(String(c.image ?? '')));
    s.write(NAME, images);
    return images.some((i) => s.cache.imageNodes.has(i));
  },
  score(s, n) {
    const images = s.read<string[]>(NAME)!;
    if (!n.images.size) return 0;
    const total = s.cache.nodes().length;
    let sum = 0;
    for (const name of images) {
      const size = n.images.get(name);
      if (size !== undefined) sum += Math.trunc((size * (s.cache.imageNodes.get(name) ?? 0)) / total);
    }
    const max = MAX_CONTAINER_THRESHOLD * images.length;
    const clamped = Math.min(max, Math.max(MIN_THRESHOLD, sum));
    return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (max - MIN_THRESHOLD));
  },
};

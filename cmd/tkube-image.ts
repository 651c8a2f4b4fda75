// tkube image load | ls: a user's images into a running cluster's nodes and registry,
// and what each node's containerd holds (crictl images).
import { Command } from 'commander';
import { readClusterState } from '../shared/cluster/cluster-state';
import { humanSize, listNodeImages, loadImages, type ImageTargets } from '../shared/cluster/images';
import { clusterDataDir } from '../shared/cluster/running-clusters';
import { clusterOptions, printTable } from './tkube-clusters';

/** The running cluster's containerds and registry, from its state. */
function targetsOf(o: { name?: string; dataDir?: string }): ImageTargets {
  const dataDir = clusterDataDir(o);
  const state = readClusterState(dataDir);
  if (!state) throw new Error(`no running cluster in ${dataDir} (start one with tkube up)`);
  const nodes = (state.containerds ?? []).map((c, i) => ({
    node: c.node ?? state.nodes?.[i] ?? `node ${i + 1}`,
    endpoint: c.endpoint,
  }));
  if (!nodes.length)
    throw new Error(
      `the cluster in ${dataDir} has no containerd (its nodes are simulated): no images to hold`,
    );
  return { nodes, registry: state.registry };
}

export function imageCommand(): Command {
  const image = new Command('image').description(
    "a running cluster's images (kind load, k3s ctr images import)",
  );
  clusterOptions(
    image
      .command('load')
      .argument(
        '<path...>',
        'docker-archive (docker save), OCI archive or OCI layout directory (skopeo copy)',
      )
      .description("import images into every node's containerd and the cluster's registry"),
  ).action((paths: string[], o) => {
    for (const l of loadImages(paths, targetsOf(o)))
      console.log(`Loaded ${l.name} on ${l.nodes.join(', ')}; registry: ${l.registry}`);
  });
  clusterOptions(image.command('ls').description("list each node's images (crictl images)")).action(
    async (o) => {
      const rows = await listNodeImages(targetsOf(o).nodes);
      const short = (d: string) => d.replace(/^sha256:/, '').slice(0, 13);
      printTable(
        ['NODE', 'IMAGE', 'TAG', 'DIGEST', 'IMAGE ID', 'SIZE'],
        rows.map((r) => [
          r.node,
          r.image,
          r.tag,
          short(r.digest) || '<none>',
          short(r.id),
          humanSize(r.size),
        ]),
      );
    },
  );
  return image;
}

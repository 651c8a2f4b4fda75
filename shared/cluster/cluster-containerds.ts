// The containerd side of a local cluster: the offline images built once, the
// cluster's image registry, then a containerd per node with them imported, each
// node's pods routed to the other nodes' pod CIDRs and the Service CIDR through
// the host (nothing else), and the host's forwarding for them (host-forwarding.ts);
// then the user's images of the auto-import folder into every node.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { containerdRuntimeFlags } from './component-flags';
import { startContainerd, type RunningContainerd } from './containerd';
import type { ClusterPaths } from './data-dir';
import { allowPodForwarding } from './host-forwarding';
import { autoImport, moveBuiltImages } from './images';
import { DIST, type Proc } from './process';
import { startRegistry } from './registry';
import type { SupervisorOptions } from './supervisor';

export interface NodeContainerdsOptions {
  paths: ClusterPaths;
  dataDir: string;
  nodes: number;
  nodeName(i: number): string;
  podCIDR(i: number): string;
  serviceCIDR: string;
  registryPort?: number;
  registriesFile?: string;
  upstreamRegistries?: boolean;
  detached?: boolean;
  supervise?: SupervisorOptions;
  /** Each process as soon as it runs (the cluster stops it, also when a later step fails). */
  started(p: Proc | RunningContainerd): void;
}

export interface NodeContainerds {
  /** The node agents' runtime flags, per node. */
  runtimeArgs: string[][];
  registryHost: string;
  /** What the auto-import folder gave, for the progress line ('' when nothing). */
  userImages: string;
  /** What was changed on the host for the pods' forwarding. */
  hostChanges: string[];
}

/** What node i's pods reach through the host: the other nodes' pod CIDRs and the Service CIDR. */
function podRoutes(o: NodeContainerdsOptions, i: number): string[] {
  const all = Array.from({ length: o.nodes }, (_, j) => o.podCIDR(j));
  return [...new Set([...all, ...o.serviceCIDR.split(',')])].filter((c) => c !== o.podCIDR(i));
}

export async function startNodeContainerds(o: NodeContainerdsOptions): Promise<NodeContainerds> {
  const imagesDir = o.paths.offlineImages;
  moveBuiltImages(o.paths.images, imagesDir);
  execFileSync('bash', [join(DIST, '..', 'scripts', 'build-images.sh'), imagesDir], { stdio: 'pipe' });
  const registry = await startRegistry({
    dataDir: o.paths.registry,
    port: o.registryPort ?? 5000,
    imagesDir,
    detached: o.detached,
  });
  o.started(registry.proc);
  const mirror = { endpoint: registry.endpoint, mirrorOnly: !o.upstreamRegistries };
  const runtimeArgs: string[][] = [];
  const containerds: RunningContainerd[] = [];
  for (let i = 0; i < o.nodes; i++) {
    const ctd = await startContainerd({
      dataDir: join(o.paths.nodeDir(o.nodeName(i)), 'containerd'),
      podCIDR: o.podCIDR(i),
      routes: podRoutes(o, i),
      imagesDir,
      registriesFile: o.registriesFile,
      mirror,
      detached: o.detached,
      supervise: o.supervise,
    });
    o.started(ctd);
    containerds.push(ctd);
    runtimeArgs.push(containerdRuntimeFlags(o.nodeName(i), ctd.endpoint, registry.endpoint));
  }
  const podCIDRs = Array.from({ length: o.nodes }, (_, i) => o.podCIDR(i));
  const hostChanges = allowPodForwarding(o.paths.hostSettings, podCIDRs, `tkube pods of ${o.dataDir}`);
  // The user's images (k3s' auto-import folder), before the agents first report the nodes' images.
  const userImages = autoImport(o.paths.images, {
    nodes: containerds.map((c, i) => ({ node: o.nodeName(i), endpoint: c.endpoint })),
    registry: registry.host,
  });
  return { runtimeArgs, registryHost: registry.host, hostChanges, userImages };
}

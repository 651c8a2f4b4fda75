// What a local cluster's data dir has running or mounted on the host, removed:
// the last step of a stop, the second Ctrl-C's kill, and the first step of an
// `up` after a crash (then it says what it found). Only the data dir's own
// parts are searched, so a data dir that holds other things, or another
// cluster's, is never touched.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bridgeExists, removeLeftovers } from './containerd';
import { killProcessesUnder, mountsUnder, unmountUnder, type HostProcess } from './leftovers';

/**
 * The parts of a data dir that its processes name on their command lines (a launcher names
 * only the data dir itself, so it is never among them), and the one under which it mounts.
 */
function ownedDirs(dataDir: string) {
  const d = (name: string) => join(dataDir, name);
  return {
    processes: [
      d('apiserver'),
      d('controller-manager'),
      d('metrics-server'),
      d('dns'),
      d('proxy'),
      d('nodes'),
      d('registry'),
    ],
    mounts: d('nodes'),
  };
}

/** The nodes' containerd data dirs that exist. */
function containerdDirs(dataDir: string): string[] {
  const nodes = join(dataDir, 'nodes');
  return (existsSync(nodes) ? readdirSync(nodes) : [])
    .map((n) => join(nodes, n, 'containerd'))
    .filter((d) => existsSync(d));
}

/**
 * SIGKILLs every process whose command line names a path of the data dir (the components,
 * containerd, shims) and the containers under its shims, deletes runc's state of them, the
 * nodes' bridges and the mounts (volumes the agents mounted stay mounted when they stop, as
 * kubelet's do). Says what it removed, undefined when there was nothing.
 */
export async function removeClusterLeftovers(dataDir: string): Promise<string | undefined> {
  const owned = ownedDirs(dataDir);
  const killed: HostProcess[] = await killProcessesUnder(owned.processes);
  const mounts = mountsUnder(owned.mounts).length;
  let bridges = 0;
  for (const d of containerdDirs(dataDir)) {
    if (bridgeExists(d)) bridges++;
    killed.push(...(await removeLeftovers(d)));
  }
  unmountUnder(owned.mounts);
  const count = (n: number, one: string, many = `${one}s`) => (n ? [`${n} ${n === 1 ? one : many}`] : []);
  const kind = (k: HostProcess['kind']) => killed.filter((p) => p.kind === k).length;
  const removed = [
    ...count(kind('component'), 'component process', 'component processes'),
    ...count(kind('containerd'), 'containerd'),
    ...count(kind('shim'), 'shim'),
    ...count(kind('container'), 'container process', 'container processes'),
    ...count(mounts, 'mount'),
    ...count(bridges, 'bridge'),
  ];
  return removed.length ? removed.join(', ') : undefined;
}

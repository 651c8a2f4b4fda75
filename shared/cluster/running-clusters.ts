// Which named clusters run on this host (kind's cluster list): one small entry
// per name in a host-wide directory (/run/tkube/clusters as root, a tmpfs, so
// nothing survives a reboot), pointing at the cluster's data dir, whose state
// (cluster-state.ts) says what it holds. `tkube up --name` claims its entry
// first, so a second `up` of a running name is refused before anything starts;
// `tkube ls`, `down --name`, `kubeconfig --name` and `image --name` find the
// cluster through it from any working directory.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { defaultDataDir, DEFAULT_CLUSTER_NAME, type HeldResources } from './cluster-names';
import { aliveProcesses, alive, readClusterState, type ClusterState } from './cluster-state';

interface Entry {
  name: string;
  /** Absolute. */
  dataDir: string;
  /** The `tkube up` that claimed the name (it may have exited since: --detach). */
  launcherPid: number;
  /** Started with --detach: it runs on once its launcher exits; else it ends with its launcher. */
  detached?: boolean;
}

/** The host-wide directory of entries; TKUBE_CLUSTERS_DIR moves it (tests keep theirs apart). */
export function clustersDir(): string {
  if (process.env.TKUBE_CLUSTERS_DIR) return process.env.TKUBE_CLUSTERS_DIR;
  const uid = process.getuid?.() ?? 0;
  return uid === 0 ? '/run/tkube/clusters' : join(tmpdir(), `tkube-${uid}`, 'clusters');
}

const entryFile = (name: string) => join(clustersDir(), `${name}.json`);

function readEntry(file: string): Entry | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Entry;
  } catch {
    return undefined;
  }
}

export type ClusterStatus = 'running' | 'starting' | 'degraded' | 'stopped';

/** Whether the entry's `tkube up` still runs (its PID, and a command line of tkube's: PIDs are reused). */
function launcherAlive(e: Entry): boolean {
  if (!alive(e.launcherPid)) return false;
  if (e.launcherPid === process.pid) return true;
  try {
    return readFileSync(`/proc/${e.launcherPid}/cmdline`, 'utf8').includes('tkube');
  } catch {
    return false;
  }
}

function statusOf(e: Entry, state: ClusterState | undefined): ClusterStatus {
  const launcher = launcherAlive(e);
  // A launcher in the foreground that is gone crashed: what it left is leftovers, removed by
  // the next `up` of its data dir, and the name is free.
  if (!launcher && !e.detached) return 'stopped';
  if (!state) return launcher ? 'starting' : 'stopped';
  const up = aliveProcesses(state);
  const all = state.pids.length + (state.containerds?.length ?? 0);
  if (up === 0) return launcher ? 'starting' : 'stopped';
  return up === all ? 'running' : 'degraded';
}

export interface RunningCluster {
  name: string;
  dataDir: string;
  status: ClusterStatus;
  state?: ClusterState;
  /** The `tkube up` that supervises it, while it runs in the foreground. */
  launcherPid?: number;
}

/** Every cluster with an entry whose processes (or launcher) still run; stale entries are removed. */
export function runningClusters(): RunningCluster[] {
  let files: string[];
  try {
    files = readdirSync(clustersDir()).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  const out: RunningCluster[] = [];
  for (const f of files.sort()) {
    const e = readEntry(join(clustersDir(), f));
    if (!e) continue;
    const state = readClusterState(e.dataDir);
    const status = statusOf(e, state);
    if (status === 'stopped') rmSync(join(clustersDir(), f), { force: true });
    else
      out.push({
        name: e.name,
        dataDir: e.dataDir,
        status,
        state,
        launcherPid: launcherAlive(e) ? e.launcherPid : undefined,
      });
  }
  return out;
}

/** A `tkube up` of a name that runs already: nothing was started, nothing must be stopped. */
export class ClusterNameTaken extends Error {}

/**
 * Claims the name for this process: refused (with what to do) when a cluster of that name runs.
 * A stale entry (its cluster crashed or was stopped) is taken over.
 */
export function claimClusterName(name: string, dataDir: string, detached = false): void {
  mkdirSync(clustersDir(), { recursive: true });
  const file = entryFile(name);
  const entry: Entry = { name, dataDir: resolve(dataDir), launcherPid: process.pid, detached };
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(entry), { flag: 'wx' });
      return;
    } catch (err: any) {
      if (err.code !== 'EEXIST' || attempt > 0) throw err;
    }
    const other = readEntry(file);
    if (other && statusOf(other, readClusterState(other.dataDir)) !== 'stopped') {
      const how = name === DEFAULT_CLUSTER_NAME ? 'tkube down' : `tkube down --name ${name}`;
      throw new ClusterNameTaken(
        `a cluster named "${name}" is already running (data dir ${other.dataDir}); stop it with \`${how}\`, or start another with --name`,
      );
    }
    rmSync(file, { force: true });
  }
}

const ALLOCATION_LOCK = '.allocating';
/** How long an allocation may wait for another `up`'s (its derivation takes well under a second). */
const ALLOCATION_WAIT_MS = 30_000;

/**
 * Runs fn (claim a name, derive its slot and ports, record them in the state) while no other
 * `tkube up` on the host does the same: two at once would each see the other holding nothing
 * and take the same slot. The lock is a file naming its holder's PID; a dead holder's is taken over.
 */
export async function withClusterAllocation<T>(fn: () => Promise<T>): Promise<T> {
  mkdirSync(clustersDir(), { recursive: true });
  const lock = join(clustersDir(), ALLOCATION_LOCK);
  const token = `${process.pid} ${Math.random()}`;
  for (const deadline = Date.now() + ALLOCATION_WAIT_MS; ;) {
    try {
      writeFileSync(lock, token, { flag: 'wx' });
      break;
    } catch (err: any) {
      if (err.code !== 'EEXIST') throw err;
    }
    const holder = Number(readFileOr(lock).split(' ')[0]);
    if (holder && !alive(holder)) rmSync(lock, { force: true });
    else if (Date.now() > deadline)
      throw new Error(`another tkube up (PID ${holder}) holds ${lock}: remove it if that is not so`);
    else await new Promise((r) => setTimeout(r, 20));
  }
  try {
    return await fn();
  } finally {
    if (readFileOr(lock) === token) rmSync(lock, { force: true });
  }
}

function readFileOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Gives the name back, if this data dir holds it. */
export function releaseClusterName(name: string, dataDir: string): void {
  const file = entryFile(name);
  if (readEntry(file)?.dataDir === resolve(dataDir)) rmSync(file, { force: true });
}

/** The host settings files of the other running clusters with pods on bridges (host-forwarding.ts's heirs). */
export function hostSettingsHeirs(dataDir: string): string[] {
  const own = resolve(dataDir);
  return runningClusters()
    .filter((c) => c.dataDir !== own && (c.state?.containerds?.length ?? 0) > 0 && c.state?.hostSettings)
    .map((c) => c.state!.hostSettings!);
}

/** What the other running clusters hold, from their states. */
export function heldByOtherClusters(name: string): HeldResources[] {
  return runningClusters()
    .filter((c) => c.name !== name)
    .map((c) => ({
      name: c.name,
      slot: c.state?.slot,
      ports: c.state?.ports ?? [],
      podCIDRs: c.state?.podCIDRs ?? [],
      serviceCIDRs: c.state?.serviceCIDR ? c.state.serviceCIDR.split(',') : [],
    }));
}

/**
 * The data dir a command acts on: --data-dir when given, else the running cluster of --name
 * (default "tkube"), else that name's default data dir.
 */
export function clusterDataDir(o: { name?: string; dataDir?: string }): string {
  if (o.dataDir) return resolve(o.dataDir);
  const name = o.name ?? DEFAULT_CLUSTER_NAME;
  return readEntry(entryFile(name))?.dataDir ?? resolve(defaultDataDir(name));
}

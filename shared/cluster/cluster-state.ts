// The record of a running cluster (cluster.json in its data dir): what a later
// `tkube down` needs to stop a cluster started detached, whose launcher is gone,
// what `tkube image load|ls` needs to reach its nodes' containerds and registry,
// and what another named cluster must not take (its ports and address blocks).
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CriClient } from '../cri/client';
import { removeClusterLeftovers } from './cluster-leftovers';
import { removeAllPods, removeLeftovers } from './containerd';
import { clusterPaths } from './data-dir';
import { cleanupProxyRules, type ProxyRuleNames } from './cluster-proxy';
import { restoreHostSettings } from './host-forwarding';
import { removeUnreachableRoutes, routeUnreachableAgain } from './service-route';

export interface ClusterState {
  /** The cluster's name (`tkube up --name`), when the launcher started it under one. */
  name?: string;
  /** Its slot of address blocks (cluster-names.ts). */
  slot?: number;
  /** Its nodes' names. */
  nodes?: string[];
  pids: { name: string; pid: number }[];
  /** The nodes' containerds (their pods are removed through the CRI before they stop). */
  containerds?: { pid: number; endpoint: string; dataDir: string; node?: string }[];
  kubeconfig: string;
  server: string;
  /** The image registry's host:port (containerd clusters). */
  registry?: string;
  /** Every port the cluster serves on the host. */
  ports?: number[];
  podCIDRs?: string[];
  serviceCIDR?: string;
  /** Service CIDRs routed unreachable while the cluster runs (removed when it stops). */
  unreachableRoutes?: string[];
  /** The bridge they are routed through while the service proxies run. */
  serviceRouteBridge?: string;
  /** Each node proxy's rules, removed once the proxies stopped. */
  proxyRules?: ProxyRuleNames[];
  /** Host settings changed for the pods (host-forwarding.ts), undone at the end. */
  hostSettings?: string;
}

export function writeClusterState(file: string, state: ClusterState): void {
  writeFileSync(file, JSON.stringify(state, null, 2));
}

export function readClusterState(dataDir: string): ClusterState | undefined {
  try {
    return JSON.parse(readFileSync(clusterPaths(resolve(dataDir)).stateFile, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/** How many of the recorded processes still run. */
export function aliveProcesses(state: ClusterState): number {
  return [...state.pids, ...(state.containerds ?? [])].filter((p) => alive(p.pid)).length;
}

/**
 * `tkube down` for a cluster started detached: signals the recorded PIDs. hostSettingsHeirs: the
 * other running clusters' host settings files, which keep the host's sysctls (host-forwarding.ts).
 */
export async function stopRecordedCluster(
  dataDir: string,
  hostSettingsHeirs: string[] = [],
): Promise<string[]> {
  const file = clusterPaths(resolve(dataDir)).stateFile;
  if (!existsSync(file)) return [];
  const state = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  const stopped: string[] = [];
  if (state.serviceRouteBridge)
    routeUnreachableAgain(state.unreachableRoutes ?? [], state.serviceRouteBridge);
  // Recorded in start order: node agents stop before the apiserver.
  for (const { name, pid } of [...state.pids].reverse()) {
    if (!alive(pid)) continue;
    stopped.push(name);
    await stopPid(pid);
  }
  for (const rules of state.proxyRules ?? []) {
    try {
      cleanupProxyRules(rules);
    } catch {
      // no nft nor iptables any more: nothing of them is left either
    }
  }
  for (const c of state.containerds ?? []) {
    const client = new CriClient({ runtimeEndpoint: c.endpoint, requestTimeoutMs: 10_000 });
    await removeAllPods(client).catch(() => {});
    client.close();
    await stopPid(c.pid);
    await removeLeftovers(c.dataDir);
    stopped.push('containerd');
  }
  // What runs or is mounted of the data dir still: the agents' volumes stay mounted when they stop.
  await removeClusterLeftovers(resolve(dataDir));
  if (state.hostSettings) restoreHostSettings(state.hostSettings, hostSettingsHeirs);
  for (const cidr of state.unreachableRoutes ?? []) removeUnreachableRoutes(cidr);
  rmSync(file, { force: true });
  return stopped;
}

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

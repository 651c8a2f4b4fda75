// What the CRI runtime knows of its sandboxes and containers, read from the
// runtime: CRI statuses turned into the records the pod workers read, and
// the whole state listed again after an agent restart — every sandbox and
// container carrying kubelet's labels, so that they are adopted, not
// duplicated.
import type { ContainerKind, ContainerRecord } from '../pods/runtime';
import type { CriClient } from '../../shared/cri/client';
import { ANNOTATION, LABEL } from './labels';

export interface Sandbox {
  id: string;
  podUID: string;
  attempt: number;
  podIPs: string[];
  ready: boolean;
  config?: any;
}

/** A container record with the runtime's own id (the record's id carries the "containerd://" scheme). */
export type CriContainer = ContainerRecord & { criID: string };

/** CRI int64 nanoseconds (decimal string) → ms; 0 → undefined. */
export const nsToMs = (ns: string | number | undefined) => {
  if (ns === undefined || ns === '0' || ns === 0) return undefined;
  return Number(BigInt(ns) / 1_000_000n);
};

export const CONTAINER_STATE: Record<string, ContainerRecord['state']> = {
  CONTAINER_CREATED: 'created',
  CONTAINER_RUNNING: 'running',
  CONTAINER_EXITED: 'exited',
  CONTAINER_UNKNOWN: 'exited',
};

export function sandboxIPs(st: any): string[] {
  const ip = st?.network?.ip;
  if (!ip) return [];
  return [ip, ...(st.network.additionalIps ?? []).map((a: any) => a.ip)];
}

/** ContainerStatus → the record: state, times, exit code and reason. */
export function applyStatus(c: ContainerRecord, st: any): void {
  c.state = CONTAINER_STATE[st.state] ?? 'exited';
  c.startedAt = nsToMs(st.startedAt) ?? c.startedAt;
  if (st.imageRef) c.imageID = st.imageRef;
  if (c.state !== 'exited') return;
  c.finishedAt = nsToMs(st.finishedAt) ?? c.finishedAt ?? Date.now();
  c.exitCode = st.exitCode;
  // The runtime says OOMKilled or StartError; otherwise kubelet's Completed / Error.
  c.reason = st.reason && st.reason !== 'Completed' && st.reason !== 'Error' ? st.reason : undefined;
  c.reason ??= st.exitCode === 0 ? 'Completed' : 'Error';
  if (st.message) c.message = st.message;
}

/** Every sandbox (newest attempt per pod) and container of kubelet's labels in the runtime, with its status. */
export async function listRuntimeState(
  client: CriClient,
  scheme: string,
  now: number,
): Promise<{ sandboxes: Map<string, Sandbox>; containers: Map<string, CriContainer> }> {
  const sandboxes = new Map<string, Sandbox>();
  const containers = new Map<string, CriContainer>();
  for (const s of (await client.call('ListPodSandbox', {})).items) {
    const uid = s.labels?.[LABEL.podUID];
    if (!uid) continue;
    const known = sandboxes.get(uid);
    // The newest attempt wins; older ones are cleaned up with the pod.
    if (known && known.attempt > s.metadata.attempt) continue;
    const st = (await client.call('PodSandboxStatus', { podSandboxId: s.id })).status;
    sandboxes.set(uid, {
      id: s.id,
      podUID: uid,
      attempt: s.metadata.attempt,
      podIPs: sandboxIPs(st),
      ready: s.state === 'SANDBOX_READY',
      config: { metadata: s.metadata, labels: s.labels },
    });
  }
  for (const x of (await client.call('ListContainers', {})).containers) {
    const uid = x.labels?.[LABEL.podUID];
    const name = x.labels?.[LABEL.containerName];
    if (!uid || !name) continue;
    const st = (await client.call('ContainerStatus', { containerId: x.id })).status;
    const rec: CriContainer = {
      id: `${scheme}://${x.id}`,
      criID: x.id,
      podUID: uid,
      name,
      kind: (x.annotations?.[ANNOTATION.kind] === 'init' ? 'init' : 'regular') as ContainerKind,
      image: x.annotations?.[ANNOTATION.image] ?? st.image?.image ?? '',
      imageID: st.imageRef ?? '',
      attempt: Number(x.annotations?.[ANNOTATION.restartCount] ?? x.metadata?.attempt ?? 0),
      state: 'created',
      createdAt: nsToMs(st.createdAt) ?? now,
      logPath: st.logPath,
    };
    applyStatus(rec, st);
    containers.set(rec.id, rec);
  }
  // The sandboxes' log directories (<dir>/<container>/<n>.log), for containers created in them from now on.
  for (const sb of sandboxes.values()) {
    const c = [...containers.values()].find((x) => x.podUID === sb.podUID && x.logPath);
    if (c) sb.config.logDirectory = c.logPath.split('/').slice(0, -2).join('/');
  }
  return { sandboxes, containers };
}

// What the agent knows of each pod it was given — the pod, where it came
// from, the instances of its containers, its addresses, what was last
// reported, its pending timers — and the table of those records that every
// part of the pod manager shares.
import type { Timer } from '../../shared/client/clock';
import type { KubeObject } from '../../shared/client/types';
import type { ContainerRecord } from './runtime';
import type { StartTrace } from './start-trace';
import type { PodSource } from './static';

export interface ContainerState {
  current?: ContainerRecord;
  last?: ContainerRecord;
  restartCount: number;
  waiting?: { reason: string; message?: string };
  /** The finishedAt the BackOff event was recorded for (once per wait). */
  backoffEventFor?: number;
  /** Asked to stop (pod termination or a changed spec). */
  stopRequestedAt?: number;
  specChanged?: boolean;
}

export interface PodRecord {
  uid: string;
  pod: KubeObject;
  source: PodSource;
  admitted: boolean;
  rejected?: { reason: string; message: string };
  startTime?: number;
  podIPs: string[];
  /** Its volumes failed to mount on the last sync: its status shows no IP yet (worker.ts). */
  volumesPending?: boolean;
  containers: Map<string, ContainerState>;
  /** The agent itself ended the pod (the kubelet's ShouldEvict: its active deadline passed): it fails so. */
  evicted?: { reason: string; message: string };
  /** All containers stopped and the pod reached a terminal phase here. */
  terminal: boolean;
  /** Kill deadline while terminating (ms). */
  killDeadline?: number;
  finalDeleteSent: boolean;
  /** Gone from its source: tear down and forget. */
  removed: boolean;
  /** The status last computed (served on /pods) and last written. */
  status?: any;
  lastSent?: string;
  adopted: boolean;
  /** The earliest timed resync already scheduled (ms). */
  wakeAt?: number;
  dirty: boolean;
  busy: boolean;
  timers: Timer[];
  /** Its first start step by step (-v 4; start-trace.ts). */
  startTrace?: StartTrace;
}

/** What the kubelet API reads of a pod (stats, streaming): a record, or a simulated node's pod. */
export type ServedPod = Pick<PodRecord, 'uid' | 'pod' | 'startTime'> & {
  containers: Map<string, Pick<ContainerState, 'current' | 'last'>>;
};

export const podKey = (ns: string, name: string) => `${ns}/${name}`;
export const isTerminalPhase = (p: string | undefined) => p === 'Succeeded' || p === 'Failed';

/** A fresh record for a pod a source just gave us (not admitted yet). */
export function newPodRecord(pod: KubeObject, source: PodSource): PodRecord {
  return {
    uid: pod.metadata.uid!,
    pod,
    source,
    admitted: false,
    podIPs: [],
    containers: new Map(),
    terminal: false,
    finalDeleteSent: false,
    removed: false,
    adopted: false,
    dirty: false,
    busy: false,
    timers: [],
  };
}

/** The record's state of one container, created on first use. */
export function containerState(rec: PodRecord, name: string): ContainerState {
  let s = rec.containers.get(name);
  if (!s) {
    s = { restartCount: 0 };
    rec.containers.set(name, s);
  }
  return s;
}

/** The deletion's grace period while deleting, else the spec's (30 s by default). */
export function graceSeconds(rec: PodRecord): number {
  const md = rec.pod.metadata;
  if (md.deletionGracePeriodSeconds !== undefined && md.deletionGracePeriodSeconds !== null)
    return Number(md.deletionGracePeriodSeconds);
  return Number(rec.pod.spec?.terminationGracePeriodSeconds ?? 30);
}

/** Every pod record of this node, by uid (static pods under their own uid). */
export class PodRecords {
  private readonly byUID = new Map<string, PodRecord>();

  get(uid: string): PodRecord | undefined {
    return this.byUID.get(uid);
  }

  add(rec: PodRecord): void {
    this.byUID.set(rec.uid, rec);
  }

  delete(uid: string): void {
    this.byUID.delete(uid);
  }

  uids(): IterableIterator<string> {
    return this.byUID.keys();
  }

  values(): IterableIterator<PodRecord> {
    return this.byUID.values();
  }

  /** The pods this agent runs: admitted and still wanted by their source. */
  active(): PodRecord[] {
    return [...this.byUID.values()].filter((r) => !r.removed && r.admitted);
  }

  byName(ns: string, name: string): PodRecord | undefined {
    for (const r of this.byUID.values())
      if (!r.removed && r.pod.metadata.namespace === ns && r.pod.metadata.name === name) return r;
    return undefined;
  }

  /** The static pod (file or http) a mirror pod of that name stands for. */
  staticByName(ns: string, name: string): PodRecord | undefined {
    for (const r of this.byUID.values())
      if (r.source !== 'api' && !r.removed && r.pod.metadata.namespace === ns && r.pod.metadata.name === name)
        return r;
    return undefined;
  }
}

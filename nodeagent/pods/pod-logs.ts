// Where the logs of a pod's containers live under <root-dir>/logs — one file
// per container instance in pods/<ns>_<name>_<uid>/<container>/<n>.log, and
// the containers/ links the kubelet makes for log shippers — and which file
// /containerLogs reads, with the kubelet's errors. (The files' format,
// rotation and reading are logs.ts.)
import { mkdirSync, symlinkSync } from 'node:fs';
import { rm, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PodRecord, PodRecords } from './records';
import type { ContainerRecord, ContainerRuntime } from './runtime';

export interface LogTarget {
  path: string;
  /** The log itself, when no file holds it (a simulated container's; path is then empty). */
  text?: string;
  running(): boolean;
}

/** A /containerLogs failure with the kubelet's status code and message. */
export class LogLookupError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The kubelet's /containerLogs lookup failures. */
export const logLookupErrors = {
  noPod: (pod: string) => new LogLookupError(404, `pod "${pod}" does not exist`),
  noContainer: (container: string, pod: string) =>
    new LogLookupError(404, `container "${container}" not found in pod "${pod}"`),
  noPrevious: (container: string, pod: string) =>
    new LogLookupError(400, `previous terminated container "${container}" in pod "${pod}" not found`),
  waiting: (container: string, pod: string, reason: string) =>
    new LogLookupError(400, `container "${container}" in pod "${pod}" is waiting to start: ${reason}`),
};

/** Whether a pod has a container of that name (init, regular or ephemeral). */
export function podHasContainer(pod: any, container: string): boolean {
  return [
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ].some((c: any) => c.name === container);
}

/** A pod's log directory under <root-dir>/logs (the CRI sandbox's log_directory). */
export function podLogDirectory(logsDir: string, pod: any): string {
  const md = pod.metadata;
  return join(logsDir, 'pods', `${md.namespace}_${md.name}_${md.uid}`);
}

export class PodLogs {
  constructor(
    private readonly d: {
      /** <root-dir>/logs */
      logsDir: string;
      records: PodRecords;
      runtime: ContainerRuntime;
    },
  ) {}

  private podDir(rec: PodRecord): string {
    return podLogDirectory(this.d.logsDir, rec.pod);
  }

  /** The log file of one instance of a container (restartCount numbers the instances). */
  path(rec: PodRecord, container: string, restartCount: number): string {
    return join(this.podDir(rec), container, `${restartCount}.log`);
  }

  private linkPath(rec: PodRecord, container: string, c: ContainerRecord): string {
    const md = rec.pod.metadata;
    const id = c.id.replace(/^[a-z]+:\/\//, '');
    return join(this.d.logsDir, 'containers', `${md.name}_${md.namespace}_${container}-${id}.log`);
  }

  /** containers/<pod>_<ns>_<container>-<id>.log → the instance's log file. */
  link(rec: PodRecord, container: string, c: ContainerRecord): void {
    const link = this.linkPath(rec, container, c);
    try {
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(c.logPath, link);
    } catch {
      // best effort, like the kubelet's
    }
  }

  /** The pod is forgotten: its log directory and its links go (off the event loop, as teardowns come in bursts). */
  async remove(rec: PodRecord): Promise<void> {
    await rm(this.podDir(rec), { recursive: true, force: true });
    for (const s of rec.containers.values()) {
      for (const c of [s.current, s.last]) {
        if (!c) continue;
        // already gone: nothing to do
        await unlink(this.linkPath(rec, c.name, c)).catch(() => {});
      }
    }
  }

  /** Where /containerLogs reads, with the kubelet's errors. */
  target(ns: string, podName: string, container: string, previous: boolean): LogTarget {
    const rec = this.d.records.byName(ns, podName);
    if (!rec) throw logLookupErrors.noPod(podName);
    if (!podHasContainer(rec.pod, container)) throw logLookupErrors.noContainer(container, podName);
    const s = rec.containers.get(container);
    if (previous) {
      const last = s?.current?.state === 'exited' && s.waiting ? s.current : s?.last;
      if (!last) throw logLookupErrors.noPrevious(container, podName);
      return { path: last.logPath, running: () => false };
    }
    const cur = s?.current;
    if (!cur) {
      const reason = s?.waiting?.reason ?? (rec.rejected ? rec.rejected.reason : 'ContainerCreating');
      throw logLookupErrors.waiting(container, podName, reason);
    }
    return { path: cur.logPath, running: () => this.d.runtime.container(cur.id)?.state === 'running' };
  }
}

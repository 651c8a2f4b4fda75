// A pod's first start, step by step, at -v 4: milliseconds from the agent
// learning of the pod to the end of each step of its first sync (sandbox,
// volumes, image, config, create, start, status written), logged once, when
// the first status that shows it Running is written. Where the agent's share of
// a pod start goes (the pod-start bench's --phases reads these lines).
import { getVerbosity, logger } from '../../shared/log';
import type { PodRecord } from './records';
import { podFullName } from './status';

const log = logger('nodeagent/pods');

export class StartTrace {
  private readonly t0 = performance.now();
  readonly marks: Record<string, number> = {};

  /** The first time the step ended (a retried step keeps its first). */
  mark(step: string): void {
    this.marks[step] ??= Math.round(performance.now() - this.t0);
  }
}

/** A trace for a pod just seen, when the verbosity asks for one. */
export function newStartTrace(): StartTrace | undefined {
  return getVerbosity() >= 4 ? new StartTrace() : undefined;
}

/** A step of the pod's first start ended. */
export function markStart(rec: PodRecord, step: string): void {
  rec.startTrace?.mark(step);
}

/** The status just written: logs the trace and ends it when that status is Running. */
export function statusWritten(rec: PodRecord, status: any): void {
  const t = rec.startTrace;
  if (!t) return;
  t.mark(`status ${status?.phase ?? ''}`.trim());
  if (status?.phase !== 'Running') return;
  rec.startTrace = undefined;
  log.info('pod start steps (ms since the agent saw the pod)', { pod: podFullName(rec.pod), steps: t.marks });
}

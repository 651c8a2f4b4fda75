// Supervision of the cluster's processes: a component that exits on its own
// (a crash, a controller manager that lost its lease, an outside SIGKILL) is
// started again with the same arguments after a back-off — 1 s, doubling to
// 30 s, back to 1 s once a run lasted 5 minutes — the way a kubelet restarts a
// static pod's container. stop() or endSupervision() ends the supervision.
import { logTail, type Proc } from './process';

export const RESTART_BACKOFF = { initialMs: 1000, maxMs: 30_000, resetAfterMs: 5 * 60_000 };

export interface Restart {
  name: string;
  /** The exit: "exit code 1", "signal SIGKILL" ..., with the log's last line when there is one. */
  why: string;
  delayMs: number;
  /** Restarts so far, this one included. */
  count: number;
}

export interface SupervisorOptions {
  /** Called when an exit was seen and a restart is scheduled. */
  onRestart?(r: Restart): void;
  /** Called once the new process runs (its PID is new). */
  onRestarted?(p: SupervisedProc): void;
  backoff?: typeof RESTART_BACKOFF;
}

/** A Proc that is started again when it exits; its pid, child and exited follow the current run. */
export class SupervisedProc implements Proc {
  private proc: Proc;
  private startedAt = Date.now();
  private delayMs: number;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  restarts = 0;

  constructor(
    private readonly launch: () => Proc,
    private readonly o: SupervisorOptions = {},
  ) {
    this.delayMs = (o.backoff ?? RESTART_BACKOFF).initialMs;
    this.proc = launch();
    this.watch();
  }

  get name() {
    return this.proc.name;
  }
  get pid() {
    return this.proc.pid;
  }
  get child() {
    return this.proc.child;
  }
  get logFile() {
    return this.proc.logFile;
  }
  get exited() {
    return this.proc.exited;
  }

  private watch(): void {
    const run = this.proc;
    void run.exited.then((code) => {
      if (this.stopped || run !== this.proc) return;
      const b = this.o.backoff ?? RESTART_BACKOFF;
      if (Date.now() - this.startedAt >= b.resetAfterMs) this.delayMs = b.initialMs;
      const delayMs = this.delayMs;
      this.delayMs = Math.min(b.maxMs, this.delayMs * 2);
      this.restarts++;
      const signal = run.child.signalCode;
      const last = lastLogLine(run.logFile);
      const why = `${signal ? `signal ${signal}` : `exit code ${code}`}${last ? `: ${last}` : ''}`;
      this.o.onRestart?.({ name: run.name, why, delayMs, count: this.restarts });
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (this.stopped) return;
        this.proc = this.launch();
        this.startedAt = Date.now();
        this.watch();
        this.o.onRestarted?.(this);
      }, delayMs);
    });
  }

  /**
   * Ends the supervision without signalling: an exit from now on is not restarted. A launcher
   * that is stopping calls it for every process first, before it signals any of them.
   */
  endSupervision(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Ends the supervision and stops the current run (SIGKILL after timeoutMs). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<number | null> {
    this.endSupervision();
    return this.proc.stop(signal, timeoutMs);
  }
}

/** The last non-empty line of a log file (at most 300 characters), for saying why a process ended. */
function lastLogLine(file: string): string {
  const lines = logTail(file, 4096)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return messageOf(lines[lines.length - 1] ?? '').slice(0, 300);
}

/** A JSON log line's msg (and err), or the line itself. */
function messageOf(line: string): string {
  try {
    const o = JSON.parse(line);
    if (o && typeof o.msg === 'string') return o.err ? `${o.msg} (${String(o.err)})` : o.msg;
  } catch {
    // not JSON
  }
  return line;
}

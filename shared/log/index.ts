// Structured logging for every executable: pino JSON on stderr, with klog-style
// verbosity (`-v N`): a message logged at V(n) is written only when n <= the
// configured verbosity. Library code logs through this module, never console.
import pino from 'pino';

export type Fields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** Verbose logging: `log.v(4)?.info(...)` writes only when verbosity >= 4. */
  v(level: number): Logger | undefined;
  child(fields: Fields): Logger;
}

let verbosity = 0;
let root: pino.Logger = pino(
  { base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
  pino.destination({ dest: 2, sync: false }),
);

/** Sets klog's -v level for all loggers (existing and future). */
export function setVerbosity(level: number): void {
  verbosity = Math.max(0, Math.floor(level));
}

export function getVerbosity(): number {
  return verbosity;
}

/** Silences all logging (tests that start in-process servers use it). */
export function setSilent(silent: boolean): void {
  root.level = silent ? 'silent' : 'info';
}

/** Replaces the destination, e.g. a synchronous one for short-lived tools. */
export function setDestination(dest: pino.DestinationStream): void {
  root = pino({ base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime }, dest);
}

class PinoLogger implements Logger {
  // Built once per root (setDestination replaces it): a pino child is not cheap to make.
  private made?: { root: pino.Logger; child: pino.Logger };
  constructor(private readonly fields: Fields) {}
  private target(): pino.Logger {
    if (!Object.keys(this.fields).length) return root;
    if (this.made?.root !== root) this.made = { root, child: root.child(this.fields) };
    // A child keeps the level it was made with; follow setSilent.
    else if (this.made.child.level !== root.level) this.made.child.level = root.level;
    return this.made.child;
  }
  info(msg: string, fields?: Fields): void {
    this.target().info(fields ?? {}, msg);
  }
  warn(msg: string, fields?: Fields): void {
    this.target().warn(fields ?? {}, msg);
  }
  error(msg: string, fields?: Fields): void {
    this.target().error(fields ?? {}, msg);
  }
  v(level: number): Logger | undefined {
    return level <= verbosity ? this : undefined;
  }
  child(fields: Fields): Logger {
    return new PinoLogger({ ...this.fields, ...fields });
  }
}

/** A logger for one component, e.g. `logger('storage/embedded')`. */
export function logger(component: string): Logger {
  return new PinoLogger({ component });
}

/** Flushes buffered log lines (call before process exit). */
export function flushLogs(): void {
  try {
    root.flush();
  } catch {
    // destination already closed
  }
}

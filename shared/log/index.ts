// Structured logging for every executable: one JSON object per line on stderr, with klog-style
// verbosity (`-v N`): a message logged at V(n) is written only when n <= the configured
// verbosity. Library code logs through this module, never console.
//
// The line is pino's (`{"level":30,"time":"<ISO>","pid":N,"component":...,<fields>,"msg":...}`,
// levels 30/40/50), so tools reading tkube's logs keep working; the writer is our own because
// pino's 25 modules were the largest package on every process's path to ready (see
// docs/architecture.md). Lines of one event-loop turn are written together, synchronously, so
// nothing is lost at exit and no timer has to wait for a drain.
import { writeSync } from 'node:fs';

export type Fields = Record<string, unknown>;

export interface Logger {
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
  /** Verbose logging: `log.v(4)?.info(...)` writes only when verbosity >= 4. */
  v(level: number): Logger | undefined;
  child(fields: Fields): Logger;
}

const LEVEL = { info: 30, warn: 40, error: 50 } as const;
const STDERR = 2;

let verbosity = 0;
let silent = false;
const pidPart = `,"pid":${process.pid}`;

/** Sets klog's -v level for all loggers (existing and future). */
export function setVerbosity(level: number): void {
  verbosity = Math.max(0, Math.floor(level));
}

export function getVerbosity(): number {
  return verbosity;
}

/** Silences all logging (tests that start in-process servers use it). */
export function setSilent(on: boolean): void {
  silent = on;
}

export function isSilent(): boolean {
  return silent;
}

// Lines waiting for the end of the current turn, and what a full pipe did not take.
let pending = '';
let unwritten: Buffer | undefined;
let scheduled = false;

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    writePending(false);
  }).unref();
}

/** Writes what is pending; on a full non-blocking pipe keeps the rest (or, at exit, waits). */
function writePending(untilDone: boolean): void {
  for (;;) {
    if (!unwritten) {
      if (!pending) return;
      unwritten = Buffer.from(pending);
      pending = '';
    }
    try {
      const n = writeSync(STDERR, unwritten);
      unwritten = n >= unwritten.length ? undefined : unwritten.subarray(n);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') {
        // stderr is closed (EPIPE, EBADF): there is nowhere to log to.
        unwritten = undefined;
        pending = '';
        return;
      }
      if (!untilDone) {
        setTimeout(() => writePending(false), 10).unref();
        return;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
    }
  }
}

/** Writes buffered log lines now (call before process exit; an exit writes them too). */
export function flushLogs(): void {
  writePending(true);
}

process.on('exit', flushLogs);

function errorValue(e: Error): Fields {
  return { type: e.name, message: e.message, stack: e.stack };
}

/** JSON of fields without its braces ("" for none); never throws. */
function fieldsJson(fields: Fields | undefined): string {
  if (!fields) return '';
  let copy: Fields | undefined;
  for (const k in fields) {
    const v = fields[k];
    if (v instanceof Error) (copy ??= { ...fields })[k] = errorValue(v);
  }
  let s: string;
  try {
    s = JSON.stringify(copy ?? fields);
  } catch {
    s = safeStringify(copy ?? fields);
  }
  return s.length > 2 ? s.slice(1, -1) : '';
}

/** JSON.stringify for values with cycles or BigInts. */
function safeStringify(v: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(v, (_k, x) => {
    if (typeof x === 'bigint') return x.toString();
    if (x instanceof Error) return errorValue(x);
    if (x && typeof x === 'object') {
      if (seen.has(x)) return '[Circular]';
      seen.add(x);
    }
    return x;
  });
}

class JsonLogger implements Logger {
  /** The bound fields as JSON, with a leading comma (or ""). */
  private readonly bound: string;
  constructor(private readonly fields: Fields) {
    const json = fieldsJson(fields);
    this.bound = json ? `,${json}` : '';
  }
  private write(level: number, msg: string, fields?: Fields): void {
    if (silent) return;
    const extra = fieldsJson(fields);
    pending += `{"level":${level},"time":"${new Date().toISOString()}"${pidPart}${this.bound}${
      extra ? `,${extra}` : ''
    },"msg":${JSON.stringify(msg)}}\n`;
    schedule();
  }
  info(msg: string, fields?: Fields): void {
    this.write(LEVEL.info, msg, fields);
  }
  warn(msg: string, fields?: Fields): void {
    this.write(LEVEL.warn, msg, fields);
  }
  error(msg: string, fields?: Fields): void {
    this.write(LEVEL.error, msg, fields);
  }
  v(level: number): Logger | undefined {
    return level <= verbosity ? this : undefined;
  }
  child(fields: Fields): Logger {
    return new JsonLogger({ ...this.fields, ...fields });
  }
}

/** A logger for one component, e.g. `logger('storage/embedded')`. */
export function logger(component: string): Logger {
  return new JsonLogger({ component });
}

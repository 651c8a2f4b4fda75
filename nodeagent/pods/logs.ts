// Container log files in the CRI format the kubelet reads
// ("<RFC3339Nano> <stream> <F|P> <content>" per line), rotated at
// --container-log-max-size keeping --container-log-max-files files (older
// rotated files gzip-compressed, as the kubelet's log manager does), and the
// reader behind /containerLogs: tailLines, sinceSeconds/sinceTime,
// timestamps, limitBytes and follow.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { realClock, type Clock } from '../../shared/client/clock';

export type LogStream = 'stdout' | 'stderr';

/** A CRI log timestamp: RFC 3339 with nine fractional digits. */
export function criTimestamp(ms: number, nanos = 0): string {
  const iso = new Date(ms).toISOString(); // 2025-01-01T00:00:00.123Z
  const frac = `${iso.slice(20, 23)}${String(nanos % 1_000_000).padStart(6, '0')}`;
  return `${iso.slice(0, 19)}.${frac}Z`;
}

/** Go's RFC3339Nano (trailing zeros of the fraction dropped), what timestamps=true prints. */
export function rfc3339Nano(criTs: string): string {
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(criTs);
  if (!m) return criTs;
  const frac = (m[2] ?? '').replace(/0+$/, '');
  return frac ? `${m[1]}.${frac}Z` : `${m[1]}Z`;
}

/** Parses a CRI timestamp into ms since the epoch (NaN when malformed). */
export function parseTimestamp(ts: string): number {
  return Date.parse(ts.replace(/(\.\d{3})\d*Z$/, '$1Z'));
}

export interface LogRotation {
  maxSizeBytes: number;
  maxFiles: number;
}

/** The suffix of rotated files (the kubelet's 20060102-150405). */
function rotationStamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}`;
}

/** Rotated files of a log, oldest first. */
export function rotatedFiles(path: string): string[] {
  const dir = dirname(path);
  const base = basename(path);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith(`${base}.`))
    .sort()
    .map((f) => join(dir, f));
}

/** One line of a CRI log file: "<timestamp> <stream> F <text>\n". */
export function criLogLine(ms: number, seq: number, stream: LogStream, line: string): string {
  return `${criTimestamp(ms, seq)} ${stream} F ${line}\n`;
}

/** Appends CRI-formatted lines to one container log file, rotating it. */
export class ContainerLogWriter {
  private seq = 0;

  constructor(
    readonly path: string,
    private readonly rotation: LogRotation,
    private readonly clock: Clock = realClock,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    if (!existsSync(path)) writeFileSync(path, '');
  }

  write(stream: LogStream, text: string): void {
    const now = this.clock.now();
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    let out = '';
    for (const line of lines) out += criLogLine(now, this.seq++, stream, line);
    let size: number;
    try {
      size = statSync(this.path).size;
    } catch {
      size = 0;
    }
    if (size > 0 && size + Buffer.byteLength(out) > this.rotation.maxSizeBytes) this.rotate(now);
    appendFileSync(this.path, out);
  }

  /** Moves the current file aside and keeps at most maxFiles files in all. */
  rotate(now = this.clock.now()): void {
    if (!moveLogAside(this.path, now)) return;
    writeFileSync(this.path, '');
    compressAndPrune(this.path, this.rotation);
  }
}

/** Renames a log file to <path>.<stamp> (the kubelet's rotation step); false when there is none. */
export function moveLogAside(path: string, now: number): string | undefined {
  if (!existsSync(path)) return undefined;
  let target = `${path}.${rotationStamp(now)}`;
  for (let i = 1; existsSync(target) || existsSync(`${target}.gz`); i++)
    target = `${path}.${rotationStamp(now)}-${i}`;
  renameSync(path, target);
  return target;
}

/** After a rotation: gzip all rotated files but the newest, and keep at most maxFiles files in all. */
export function compressAndPrune(path: string, rotation: LogRotation): void {
  const rotated = rotatedFiles(path);
  for (const f of rotated.slice(0, -1)) {
    if (f.endsWith('.gz')) continue;
    writeFileSync(`${f}.gz`, gzipSync(readFileSync(f)));
    rmSync(f, { force: true });
  }
  const all = rotatedFiles(path);
  const excess = all.length + 1 - rotation.maxFiles;
  for (const f of all.slice(0, Math.max(0, excess))) rmSync(f, { force: true });
}

export interface LogOptions {
  follow?: boolean;
  tailLines?: number;
  limitBytes?: number;
  timestamps?: boolean;
  /** ms since the epoch: only lines at or after it. */
  since?: number;
}

interface Entry {
  ts: string;
  stream: string;
  content: string;
  partial: boolean;
}

function parseLine(line: string): Entry | undefined {
  const a = line.indexOf(' ');
  const b = line.indexOf(' ', a + 1);
  if (a < 0 || b < 0) return undefined;
  const ts = line.slice(0, a);
  const stream = line.slice(a + 1, b);
  let rest = line.slice(b + 1);
  let partial = false;
  // The tag field (F or P); old files may lack it.
  if (rest.startsWith('F ') || rest === 'F') rest = rest.slice(2);
  else if (rest.startsWith('P ') || rest === 'P') {
    partial = true;
    rest = rest.slice(2);
  }
  return { ts, stream, content: rest, partial };
}

/** Formats complete lines of a log file for the client. */
function formatEntries(lines: string[], o: LogOptions): string {
  let out = '';
  for (const line of lines) {
    if (!line) continue;
    const e = parseLine(line);
    if (!e) continue;
    if (o.since !== undefined && parseTimestamp(e.ts) < o.since) continue;
    const body = e.partial ? e.content : `${e.content}\n`;
    out += o.timestamps ? `${rfc3339Nano(e.ts)} ${body}` : body;
  }
  return out;
}

/** The complete lines of a log file's text (a trailing unterminated one is still being written), the last tailLines when set. */
function completeLines(text: string, tailLines?: number): { lines: string[]; carry: string } {
  const i = text.lastIndexOf('\n');
  const carry = text.slice(i + 1);
  let lines = i < 0 ? [] : text.slice(0, i).split('\n');
  if (tailLines !== undefined && tailLines >= 0) lines = tailLines === 0 ? [] : lines.slice(-tailLines);
  return { lines, carry };
}

/**
 * The end of a log as the client reads it: its last tailLines lines, at most maxBytes of their end
 * (kubelet's readLastStringFromContainerLogs, the termination message of FallbackToLogsOnError).
 */
export function readLogTail(path: string, tailLines: number, maxBytes: number): string {
  const { lines } = completeLines(readFileSync(path, 'utf8'), tailLines);
  const out = Buffer.from(formatEntries(lines, {}), 'utf8');
  return out.subarray(Math.max(0, out.length - maxBytes)).toString('utf8');
}

/** Writes bytes to the sink respecting limitBytes; returns false once the limit is reached. */
class Limiter {
  private left: number;
  constructor(limit: number | undefined) {
    this.left = limit && limit > 0 ? limit : Infinity;
  }
  take(text: string): { chunk: Buffer; more: boolean } {
    const buf = Buffer.from(text);
    if (buf.length <= this.left) {
      this.left -= buf.length;
      return { chunk: buf, more: this.left > 0 };
    }
    const chunk = buf.subarray(0, this.left);
    this.left = 0;
    return { chunk, more: false };
  }
}

export interface FollowControl {
  /** Still writing: keep following while true. */
  running(): boolean;
  signal?: AbortSignal;
  /** Poll interval for new data (ms). */
  pollMs?: number;
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/** Every line of a whole log's text (the last one too, ended or not) that tailLines and since select, formatted. */
function selectLines(text: string, o: LogOptions): string {
  return formatEntries(
    completeLines(text && !text.endsWith('\n') ? text + '\n' : text, o.tailLines).lines,
    o,
  );
}

/**
 * A log held in memory (a simulated container's, CRI-formatted), read as
 * readContainerLog reads a file; it does not grow, so a follow only waits for
 * the container to end (or the client to leave).
 */
export async function* readLogText(
  text: string,
  o: LogOptions,
  follow?: FollowControl,
): AsyncGenerator<Buffer> {
  const first = selectLines(text, o);
  if (first) {
    const { chunk, more } = new Limiter(o.limitBytes).take(first);
    yield chunk;
    if (!more) return;
  }
  if (!o.follow || !follow) return;
  const sleep = follow.sleep ?? ((ms: number, signal?: AbortSignal) => realClock.sleep(ms, signal));
  while (!follow.signal?.aborted && follow.running()) await sleep(follow.pollMs ?? 1000, follow.signal);
}

/** Reads a container log; with follow, keeps streaming new lines until the container stops. */
export async function* readContainerLog(
  path: string,
  o: LogOptions,
  follow?: FollowControl,
): AsyncGenerator<Buffer> {
  const limit = new Limiter(o.limitBytes);
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  let offset = Buffer.byteLength(text);
  let ino = inodeOf(path);
  const start = completeLines(text, o.tailLines);
  let carry = start.carry;
  const first = formatEntries(start.lines, o);
  if (first) {
    const { chunk, more } = limit.take(first);
    yield chunk;
    if (!more) return;
  }
  if (!o.follow || !follow) return;
  const sleep = follow.sleep ?? ((ms: number, signal?: AbortSignal) => realClock.sleep(ms, signal));
  const pollMs = follow.pollMs ?? 200;
  for (;;) {
    if (follow.signal?.aborted) return;
    // Read "still running" before the size, so the last lines of a stopping container are not lost.
    const alive = follow.running();
    let size: number;
    let nowIno: number | undefined;
    try {
      const st = statSync(path);
      size = st.size;
      nowIno = st.ino;
    } catch {
      size = 0;
      nowIno = undefined;
    }
    if (nowIno !== ino || size < offset) {
      // Rotated (or truncated): finish the old file if it is still there, then start the new one.
      const old =
        nowIno !== ino
          ? rotatedFiles(path)
              .filter((f) => !f.endsWith('.gz'))
              .pop()
          : undefined;
      if (old && inodeOf(old) === ino) {
        const rest = readFileSync(old).subarray(offset).toString('utf8');
        const lastNL = (carry + rest).lastIndexOf('\n');
        const complete = lastNL < 0 ? '' : (carry + rest).slice(0, lastNL + 1);
        const out = formatEntries(complete.split('\n'), o);
        if (out) {
          const r = limit.take(out);
          yield r.chunk;
          if (!r.more) return;
        }
      }
      ino = nowIno;
      offset = 0;
      carry = '';
    }
    if (size > offset) {
      const fh = await open(path, 'r');
      try {
        const buf = Buffer.alloc(size - offset);
        await fh.read(buf, 0, buf.length, offset);
        offset = size;
        const chunk = carry + buf.toString('utf8');
        const i = chunk.lastIndexOf('\n');
        carry = i < 0 ? chunk : chunk.slice(i + 1);
        const complete = i < 0 ? '' : chunk.slice(0, i + 1);
        const out = formatEntries(complete.split('\n'), o);
        if (out) {
          const r = limit.take(out);
          yield r.chunk;
          if (!r.more) return;
        }
      } finally {
        await fh.close();
      }
      continue;
    }
    if (!alive) return;
    await sleep(pollMs, follow.signal);
  }
}

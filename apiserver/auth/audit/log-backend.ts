// The log backend: events as json or legacy lines, to stdout or to a file
// rotated like lumberjack (--audit-log-maxsize/-maxage/-maxbackup/-compress).
import {
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { AuditEvent } from './event';
import type { Backend } from './backends';

// ---- formats ---------------------------------------------------------------

const q = (s: string) => JSON.stringify(s);

/** The legacy one-line format (audit/format.go EventString). */
export function legacyLine(ev: AuditEvent): string {
  let username = '<none>';
  let groups = '<none>';
  if (ev.user.username) {
    username = ev.user.username;
    if (ev.user.groups?.length) groups = ev.user.groups.map(q).join(',');
  }
  let asuser = '<self>';
  let asgroups = '<lookup>';
  if (ev.impersonatedUser) {
    asuser = ev.impersonatedUser.username;
    if (ev.impersonatedUser.groups) asgroups = ev.impersonatedUser.groups.map(q).join(',');
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code ?? 0) : '<deferred>';
  const ip = ev.sourceIPs[0] ?? '<unknown>';
  return `${ev.requestReceivedTimestamp} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)} user=${q(username)} groups=${q(groups)} as=${q(asuser)} asgroups=${q(asgroups)} user-agent=${q(ev.userAgent ?? '')} namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"`;
}

// ---- rotating file -----------------------------------------------------------

export interface RotationOptions {
  maxSizeMB: number;
  maxAgeDays: number;
  maxBackups: number;
  compress: boolean;
  now?: () => Date;
}

/** Appends lines to a file, rotating like lumberjack: name-<UTC time>.ext backups, gzip, count and age limits. */
export class RotatingFile {
  private fd = -1;
  private size = 0;

  constructor(
    readonly path: string,
    private readonly o: RotationOptions,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.open();
  }

  private open(): void {
    this.fd = openSync(this.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  write(data: string): void {
    const buf = Buffer.from(data);
    const max = this.o.maxSizeMB * 1024 * 1024;
    if (max > 0 && this.size + buf.length > max && this.size > 0) this.rotate();
    writeSync(this.fd, buf);
    this.size += buf.length;
  }

  private backupName(): string {
    const ext = extname(this.path);
    const base = basename(this.path, ext);
    const t = (this.o.now?.() ?? new Date()).toISOString().replace(/:/g, '-').replace('Z', '');
    return join(dirname(this.path), `${base}-${t}${ext}`);
  }

  rotate(): void {
    closeSync(this.fd);
    let backup = this.backupName();
    for (let i = 1; existsSync(backup) || existsSync(`${backup}.gz`); i++)
      backup = this.backupName() + `.${i}`;
    renameSync(this.path, backup);
    if (this.o.compress) {
      writeFileSync(`${backup}.gz`, gzipSync(readFileSync(backup)), { mode: 0o600 });
      unlinkSync(backup);
    }
    this.open();
    this.prune();
  }

  /** Backups of this file, newest first. */
  backups(): string[] {
    const ext = extname(this.path);
    const base = basename(this.path, ext);
    const dir = dirname(this.path);
    const re = new RegExp(
      `^${escape(base)}-(\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3})${escape(ext)}(\\.\\d+)?(\\.gz)?$`,
    );
    return readdirSync(dir)
      .filter((f) => re.test(f))
      .sort()
      .reverse()
      .map((f) => join(dir, f));
  }

  private prune(): void {
    const all = this.backups();
    const drop = new Set<string>();
    if (this.o.maxBackups > 0) for (const f of all.slice(this.o.maxBackups)) drop.add(f);
    if (this.o.maxAgeDays > 0) {
      const cutoff = (this.o.now?.() ?? new Date()).getTime() - this.o.maxAgeDays * 86_400_000;
      for (const f of all) if (statSync(f).mtimeMs < cutoff) drop.add(f);
    }
    for (const f of drop) {
      try {
        unlinkSync(f);
      } catch {
        /* already gone */
      }
    }
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---- log backend -------------------------------------------------------------

export class LogBackend implements Backend {
  private readonly file: RotatingFile | null;

  constructor(
    path: string,
    private readonly format: 'json' | 'legacy',
    rotation: RotationOptions,
  ) {
    this.file = path === '-' ? null : new RotatingFile(path, rotation);
  }

  process(events: AuditEvent[]): void {
    let out = '';
    for (const ev of events) out += (this.format === 'legacy' ? legacyLine(ev) : JSON.stringify(ev)) + '\n';
    if (this.file) this.file.write(out);
    else process.stdout.write(out);
  }

  async shutdown(): Promise<void> {
    this.file?.close();
  }
}

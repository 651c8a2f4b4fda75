// Audit backends: the log (a file with lumberjack-style rotation, or stdout,
// json or legacy lines) and the webhook (EventList batches POSTed with the
// kubeconfig's credentials, retried with backoff), each behind the
// batch / blocking / blocking-strict modes and optional truncation.
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
import https from 'node:https';
import http from 'node:http';
import { parseConfigYAML } from '../../../shared/codec/yaml';
import { logger } from '../../../shared/log';
import type { AuditEvent } from './event';
import { webhookAgent } from '../webhook-client';

const log = logger('audit');

export interface Backend {
  /** Takes events; blocking backends have written them when it returns. Throws in blocking-strict on failure. */
  process(events: AuditEvent[]): void;
  shutdown(): Promise<void>;
  /** Resolves when events handed over so far are delivered (asynchronous backends). */
  flushed?(): Promise<void>;
}

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

// ---- webhook backend ---------------------------------------------------------

interface WebhookTarget {
  url: URL;
  agent: https.Agent | http.Agent;
  headers: Record<string, string>;
}

/** Reads the kubeconfig of --audit-webhook-config-file: server, CA, client credentials. */
export function loadWebhookKubeconfig(file: string): WebhookTarget {
  const cfg: any = parseConfigYAML(readFileSync(file, 'utf8'));
  const ctxName = cfg?.['current-context'];
  const ctx =
    (cfg?.contexts ?? []).find((c: any) => c.name === ctxName)?.context ?? cfg?.contexts?.[0]?.context;
  const cluster =
    (cfg?.clusters ?? []).find((c: any) => c.name === ctx?.cluster)?.cluster ?? cfg?.clusters?.[0]?.cluster;
  const user = (cfg?.users ?? []).find((u: any) => u.name === ctx?.user)?.user ?? cfg?.users?.[0]?.user ?? {};
  if (!cluster?.server) throw new Error(`invalid audit webhook config file "${file}": no cluster server`);
  const base = dirname(file);
  const readRef = (data: string | undefined, path: string | undefined) =>
    data
      ? Buffer.from(data, 'base64').toString('utf8')
      : path
        ? readFileSync(path.startsWith('/') ? path : join(base, path), 'utf8')
        : undefined;
  const url = new URL(cluster.server);
  const headers: Record<string, string> = {};
  if (user.token) headers.authorization = `Bearer ${user.token}`;
  else if (user.username)
    headers.authorization = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
  const agent = webhookAgent(url, {
    caPem: readRef(cluster['certificate-authority-data'], cluster['certificate-authority']),
    certPem: readRef(user['client-certificate-data'], user['client-certificate']),
    keyPem: readRef(user['client-key-data'], user['client-key']),
    insecure: !!cluster['insecure-skip-tls-verify'],
    serverName: cluster['tls-server-name'],
  });
  return { url, agent, headers };
}

export class WebhookBackend implements Backend {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly target: WebhookTarget,
    private readonly initialBackoffMs: number,
    private readonly version: string,
  ) {}

  private send(events: AuditEvent[]): Promise<void> {
    const body = Buffer.from(
      JSON.stringify({ kind: 'EventList', apiVersion: this.version, metadata: {}, items: events }),
    );
    const { url, agent, headers } = this.target;
    const lib = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = lib.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
          timeout: 30_000,
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300
              ? resolve()
              : reject(new Error(`the server responded with the status code ${res.statusCode}`)),
          );
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Retries with exponential backoff (factor 1.5, 5 steps) from --audit-webhook-initial-backoff. */
  async deliver(events: AuditEvent[]): Promise<void> {
    let delay = this.initialBackoffMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.send(events);
        return;
      } catch (err) {
        if (attempt >= 4) {
          log.error('audit webhook: dropping events', { count: events.length, err: String(err) });
          throw err;
        }
        await new Promise((r) => setTimeout(r, delay));
        delay *= 1.5;
      }
    }
  }

  process(events: AuditEvent[]): void {
    const batch = events.slice();
    this.chain = this.chain.then(() => this.deliver(batch)).catch(() => {});
  }

  /** Resolves when everything handed over so far was delivered or dropped. */
  flushed(): Promise<void> {
    return this.chain;
  }

  async shutdown(): Promise<void> {
    await this.chain;
  }
}

// ---- modes ---------------------------------------------------------------------

export interface BatchOptions {
  bufferSize: number;
  maxBatchSize: number;
  maxWaitMs: number;
  throttleEnable: boolean;
  throttleQPS: number;
  throttleBurst: number;
}

/** Buffers events and hands them over in batches (size, wait, token-bucket throttle); drops on overflow. */
export class BatchBackend implements Backend {
  private buffer: AuditEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private tokens: number;
  private lastRefill = Date.now();
  private draining: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly inner: Backend,
    private readonly o: BatchOptions,
  ) {
    this.tokens = Math.max(1, o.throttleBurst);
  }

  process(events: AuditEvent[]): void {
    if (this.stopped) return;
    for (const ev of events) {
      if (this.buffer.length >= this.o.bufferSize) {
        log.warn('audit event buffer full, dropping an event', { auditID: ev.auditID });
        continue;
      }
      this.buffer.push(ev);
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.draining || !this.buffer.length) return;
    if (this.buffer.length >= this.o.maxBatchSize || this.o.maxWaitMs <= 0) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.draining = this.drain().finally(() => {
        this.draining = null;
        this.schedule();
      });
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.draining = this.drain(true).finally(() => {
          this.draining = null;
          this.schedule();
        });
      }, this.o.maxWaitMs);
    }
  }

  private async takeToken(): Promise<void> {
    if (!this.o.throttleEnable || this.o.throttleQPS <= 0) return;
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(
        Math.max(1, this.o.throttleBurst),
        this.tokens + ((now - this.lastRefill) / 1000) * this.o.throttleQPS,
      );
      this.lastRefill = now;
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.tokens) / this.o.throttleQPS) * 1000)));
    }
  }

  private async drain(all = false): Promise<void> {
    while (
      this.buffer.length &&
      (all || this.buffer.length >= this.o.maxBatchSize || this.o.maxWaitMs <= 0)
    ) {
      await this.takeToken();
      const batch = this.buffer.splice(0, Math.max(1, this.o.maxBatchSize));
      try {
        this.inner.process(batch);
        await this.inner.flushed?.();
      } catch (err) {
        log.error('audit backend failed', { err: String(err) });
      }
    }
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.draining) await this.draining;
    while (this.buffer.length) {
      const batch = this.buffer.splice(0, Math.max(1, this.o.maxBatchSize));
      try {
        this.inner.process(batch);
      } catch {
        /* shutting down */
      }
    }
    await this.inner.shutdown();
  }
}

/** blocking: errors are logged; blocking-strict: errors fail the request (at RequestReceived). */
export class BlockingBackend implements Backend {
  constructor(
    private readonly inner: Backend,
    readonly strict: boolean,
  ) {}
  process(events: AuditEvent[]): void {
    try {
      this.inner.process(events);
    } catch (err) {
      log.error('audit backend failed', { err: String(err) });
      if (this.strict) throw err;
    }
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export interface TruncateOptions {
  maxEventSize: number;
  maxBatchSize: number;
}

/** Drops request/response objects of events over maxEventSize (annotating them), then events still too big; splits batches. */
export class TruncatingBackend implements Backend {
  constructor(
    private readonly inner: Backend,
    private readonly o: TruncateOptions,
  ) {}

  process(events: AuditEvent[]): void {
    const kept: { ev: AuditEvent; size: number }[] = [];
    for (let ev of events) {
      let size = Buffer.byteLength(JSON.stringify(ev));
      if (size > this.o.maxEventSize) {
        const { requestObject: _req, responseObject: _res, ...rest } = ev;
        ev = { ...rest, annotations: { ...(ev.annotations ?? {}), 'audit.k8s.io/truncated': 'true' } };
        size = Buffer.byteLength(JSON.stringify(ev));
        if (size > this.o.maxEventSize) {
          log.warn('audit event too large, dropping it', { auditID: ev.auditID, size });
          continue;
        }
      }
      kept.push({ ev, size });
    }
    let batch: AuditEvent[] = [];
    let batchSize = 0;
    for (const { ev, size } of kept) {
      if (batch.length && batchSize + size > this.o.maxBatchSize) {
        this.inner.process(batch);
        batch = [];
        batchSize = 0;
      }
      batch.push(ev);
      batchSize += size;
    }
    if (batch.length) this.inner.process(batch);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  flushed(): Promise<void> {
    return this.inner.flushed?.() ?? Promise.resolve();
  }
}

/** Sends every event to each backend. */
export class UnionBackend implements Backend {
  constructor(private readonly backends: Backend[]) {}
  process(events: AuditEvent[]): void {
    let failure: unknown;
    for (const b of this.backends) {
      try {
        b.process(events);
      } catch (err) {
        failure = err;
      }
    }
    if (failure) throw failure;
  }
  async shutdown(): Promise<void> {
    await Promise.all(this.backends.map((b) => b.shutdown()));
  }
}

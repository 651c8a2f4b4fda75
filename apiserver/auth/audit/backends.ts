// The Backend interface, and the modes every backend (log-backend.ts,
// webhook-backend.ts) runs behind: batch, blocking or blocking-strict, with
// optional truncation; a union sends to all of them.
import { logger } from '../../../shared/log';
import type { AuditEvent } from './event';

const log = logger('audit');

export interface Backend {
  /** Takes events; blocking backends have written them when it returns. Throws in blocking-strict on failure. */
  process(events: AuditEvent[]): void;
  shutdown(): Promise<void>;
  /** Resolves when events handed over so far are delivered (asynchronous backends). */
  flushed?(): Promise<void>;
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

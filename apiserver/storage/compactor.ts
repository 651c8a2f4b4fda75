// Periodic compaction, like kube-apiserver's: at every tick, compact to the
// revision seen at the previous tick, so at least one interval of history is
// always kept for watches, Exact reads and continue tokens.
import type { Storage } from './interface';
import { logger } from '../../shared/log';

const log = logger('storage/compactor');

export class Compactor {
  private timer: NodeJS.Timeout | null = null;
  private lastSeen = 0;

  constructor(
    private readonly storage: Pick<Storage, 'compact' | 'currentRevision'>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One compaction step; exposed for tests. */
  async tick(): Promise<void> {
    try {
      const target = this.lastSeen;
      this.lastSeen = await this.storage.currentRevision();
      if (target > 0) {
        await this.storage.compact(target);
        log.v(2)?.info('compacted', { revision: target });
      }
    } catch (err) {
      log.warn('compaction failed', { err: String(err) });
    }
  }
}

// Periodic compaction coordinated between every apiserver sharing one etcd, the
// way kube-apiserver does it, so that each interval only one of them compacts:
//
// The key `compact_rev_key` is a shared clock: its etcd *version* counts the
// compactions claimed so far, its value the revision compacted. Every interval
// each client tries a Txn "if version(compact_rev_key) == the version I last
// saw then put it (version+1) else read it". The winner compacts to the
// revision it saw at its previous tick, keeping one interval of history; the
// losers just adopt the new version and the current revision and try again
// next interval (so if the winner dies, another takes over within two).
// The key is outside --etcd-prefix, as in kube, so mixed clusters coordinate too.
import { logger } from '../../../shared/log';
import { StorageError } from '../errors';
import type { Connection } from './connection';
import { isCompactedError, toStorageError } from './etcd-errors';
import { CmpResult, METHOD, Target, compactionFields, compare, opPut, opRange, txnFields } from './proto';
import { decodeHeaderOnly, decodeTxn } from './responses';
import { encode } from '../../../shared/etcd/wire';

const log = logger('storage/etcd3/compactor');

export const COMPACT_REV_KEY = 'compact_rev_key';

/** Compacts etcd history below revision; an already compacted revision is not an error. */
export async function compactTo(conn: Connection, revision: number): Promise<void> {
  try {
    await conn.call(METHOD.compact, encode(compactionFields(revision)), decodeHeaderOnly, {
      idempotent: true,
    });
  } catch (err) {
    if (isCompactedError(err)) return;
    throw err;
  }
}

export interface CompactionStep {
  /** True when this client won the interval. */
  claimed: boolean;
  /** The revision compacted in this step, if any. */
  compacted?: number;
}

export class EtcdCompactor {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  /** Version of compact_rev_key last seen: the shared compaction clock. */
  private compactTime = 0;
  /** The revision seen at the previous step: what the next winning step compacts to. */
  private lastRev = 0;

  constructor(
    private readonly conn: Connection,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.step()
        .catch((err) => log.warn('compaction failed', { err: String(err), endpoint: this.conn.endpoint }))
        .finally(() => (this.running = null));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One coordination step; exposed so tests need not wait for the timer. */
  async step(): Promise<CompactionStep> {
    const req = txnFields(
      [compare(COMPACT_REV_KEY, Target.Version, CmpResult.Equal, this.compactTime)],
      [opPut({ key: COMPACT_REV_KEY, value: String(this.lastRev) })],
      [opRange({ key: COMPACT_REV_KEY })],
    );
    let res;
    try {
      res = await this.conn.call(METHOD.txn, encode(req), decodeTxn, { idempotent: false });
    } catch (err) {
      throw toStorageError(err);
    }
    const target = this.lastRev;
    this.lastRev = res.revision;
    if (!res.succeeded) {
      const r = res.responses[0];
      this.compactTime = r?.kind === 'range' ? (r.range.kvs[0]?.version ?? 0) : 0;
      return { claimed: false };
    }
    this.compactTime++;
    // Nothing to compact at our first claim: we have not yet seen an interval pass.
    if (target === 0) return { claimed: true };
    try {
      await compactTo(this.conn, target);
    } catch (err) {
      const mapped = toStorageError(err);
      throw mapped instanceof StorageError
        ? mapped
        : new Error(`compaction to ${target} failed: ${String(err)}`);
    }
    log.v(4)?.info('compacted', { revision: target });
    return { claimed: true, compacted: target };
  }
}

// The stand-in's KV service: Range, Put, DeleteRange, Txn and Compact on the key space
// (mvcc.ts) with etcd's rules, made durable by the journal before they are answered or
// watched. A write is applied in memory at once (so the next write's compares see it) and
// published — answered, watchers told, reads allowed to see it — once its commit is synced;
// commits finish in order, so reads at the published revision never see an unsynced write.
import { randomBytes } from 'node:crypto';
import { CmpResult, Target } from '../shared/etcd/rpc';
import type { Fields } from '../shared/etcd/wire';
import { Journal } from './journal';
import {
  type Compare,
  type DeleteRequest,
  type HeaderInfo,
  type PutRequest,
  type RangeRequest,
  type RequestOp,
  type TxnRequest,
  header,
  keyValue,
} from './messages';
import { EtcdError, Mvcc, type MvccEvent, type Rev } from './mvcc';

/** etcd's --max-txn-ops default. */
export const MAX_TXN_OPS = 128;

export interface StoreOptions {
  dataDir: string;
  fsync: boolean;
  maxTxnOps?: number;
}

/** What a lease-holding component must hear about keys (leases.ts). */
export interface LeaseHooks {
  exists(id: bigint): boolean;
  attach(key: string, id: bigint): void;
  detach(key: string, id: bigint): void;
}

/** One write's changes, in order, and its revision. */
export type Publish = (events: MvccEvent[], rev: number) => void;

export class EtcdStore {
  readonly mvcc = new Mvcc();
  readonly journal: Journal;
  readonly ids: HeaderInfo;
  /** The revision readers see: the last write whose commit is synced. */
  published: number;
  /** Told of every published write (the watch hub). */
  onPublish: Publish = () => {};
  leases: LeaseHooks = { exists: () => false, attach: () => {}, detach: () => {} };
  private readonly maxTxnOps: number;

  constructor(opts: StoreOptions) {
    this.journal = new Journal(opts.dataDir, opts.fsync);
    this.maxTxnOps = opts.maxTxnOps ?? MAX_TXN_OPS;
    let ids = this.journal.getMeta<{ cluster: string; member: string }>('ids');
    if (!ids) {
      const id = () => (randomBytes(8).readBigUInt64BE() >> 1n || 1n).toString();
      ids = { cluster: id(), member: id() };
      void this.journal.write({ meta: { ids } });
    }
    this.ids = { clusterId: BigInt(ids.cluster), memberId: BigInt(ids.member) };
    this.mvcc.load(this.journal.versions(), this.journal.getMeta<number>('compacted') ?? 0, 1);
    this.published = this.mvcc.rev;
  }

  header(rev = this.published): Fields {
    return header(this.ids, rev);
  }

  // ---- reads ----

  /** A RangeResponse's fields (but the header) at a revision already checked. */
  private rangeAt(q: RangeRequest, rev: number): Fields {
    let kvs = this.mvcc.range(q.key, q.end, rev);
    if (q.minMod || q.maxMod || q.minCreate || q.maxCreate)
      kvs = kvs.filter(
        (kv) =>
          (!q.minMod || kv.mod >= q.minMod) &&
          (!q.maxMod || kv.mod <= q.maxMod) &&
          (!q.minCreate || kv.create >= q.minCreate) &&
          (!q.maxCreate || kv.create <= q.maxCreate),
      );
    if (q.sortOrder) sortKvs(kvs, q.sortTarget, q.sortOrder === 2);
    const f: [number, number | boolean | Fields][] = [];
    if (!q.countOnly) {
      const n = q.limit > 0 ? Math.min(q.limit, kvs.length) : kvs.length;
      for (let i = 0; i < n; i++) f.push([2, keyValue(kvs[i], q.keysOnly)]);
      if (n < kvs.length) f.push([3, true]);
    }
    if (kvs.length) f.push([4, kvs.length]);
    return f;
  }

  range(q: RangeRequest): Fields {
    const rev = this.mvcc.readRevision(q.revision, this.published);
    return [[1, this.header()], ...this.rangeAt(q, rev)];
  }

  // ---- writes ----

  async put(q: PutRequest): Promise<Fields> {
    const res = await this.txn({ compare: [], success: [{ kind: 'put', put: q }], failure: [] });
    return [[1, res.header], ...res.ops[0]];
  }

  async deleteRange(q: DeleteRequest): Promise<Fields> {
    const res = await this.txn({ compare: [], success: [{ kind: 'delete', del: q }], failure: [] });
    return [[1, res.header], ...res.ops[0]];
  }

  /** A TxnResponse: header, succeeded, one ResponseOp per op of the branch taken. */
  async txnResponse(q: TxnRequest): Promise<Fields> {
    const res = await this.txn(q);
    const f: [number, boolean | Fields][] = [[1, res.header]];
    if (res.succeeded) f.push([2, true]);
    for (const op of res.responses) f.push([3, op]);
    return f;
  }

  /**
   * Runs a transaction at the next revision: checks the branch taken, then applies it
   * atomically; resolves once it is durable and published.
   */
  async txn(
    q: TxnRequest,
  ): Promise<{ header: Fields; succeeded: boolean; ops: Fields[]; responses: Fields[] }> {
    const rev = this.mvcc.rev + 1;
    const events: MvccEvent[] = [];
    const checked = this.check(q);
    const result = this.apply(q, checked, rev, events);
    const at = events.length ? rev : this.mvcc.rev;
    if (events.length) {
      await this.persist(events, rev);
    } else await this.journal.last;
    return { header: this.header(at), ...result };
  }

  /** Chooses each (nested) txn's branch, and rejects what etcd rejects before anything is applied. */
  private check(q: TxnRequest): boolean[] {
    const choices: boolean[] = [];
    let ops = 0;
    const puts = new Set<string>();
    const deletes: DeleteRequest[] = [];
    const visit = (t: TxnRequest) => {
      const ok = t.compare.every((c) => this.compare(c));
      choices.push(ok);
      for (const op of ok ? t.success : t.failure) {
        if (++ops > this.maxTxnOps) throw new EtcdError('tooManyOps');
        if (op.kind === 'put') {
          const p = op.put;
          if (p.key === '') throw new EtcdError('emptyKey');
          if (puts.has(p.key)) throw new EtcdError('duplicateKey');
          puts.add(p.key);
          const live = this.mvcc.get(p.key);
          if ((p.ignoreValue || p.ignoreLease) && !live) throw new EtcdError('keyNotFound');
          if (p.ignoreValue && p.value.length) throw new EtcdError('valueProvided');
          if (p.ignoreLease && p.lease) throw new EtcdError('leaseProvided');
          if (p.lease && !p.ignoreLease && !this.leases.exists(p.lease)) throw new EtcdError('leaseNotFound');
        } else if (op.kind === 'delete') {
          if (op.del.key === '') throw new EtcdError('emptyKey');
          deletes.push(op.del);
        } else if (op.kind === 'range') {
          if (op.range.key === '') throw new EtcdError('emptyKey');
          this.mvcc.readRevision(op.range.revision);
        } else visit(op.txn);
      }
    };
    visit(q);
    for (const d of deletes)
      for (const k of puts) if (inRange(k, d.key, d.end)) throw new EtcdError('duplicateKey');
    return choices;
  }

  private compare(c: Compare): boolean {
    const kvs =
      c.end === ''
        ? [this.mvcc.get(c.key)].filter((x) => x !== undefined)
        : this.mvcc.range(c.key, c.end, this.mvcc.rev);
    // A missing key compares as a zero KeyValue; but a value compare on it fails.
    if (kvs.length === 0) return c.target === Target.Value ? false : compareKv(c, undefined);
    return kvs.every((kv) => compareKv(c, kv));
  }

  private apply(
    q: TxnRequest,
    choices: boolean[],
    rev: number,
    events: MvccEvent[],
  ): { succeeded: boolean; ops: Fields[]; responses: Fields[] } {
    const succeeded = choices.shift()!;
    const ops: Fields[] = [];
    const responses: Fields[] = [];
    for (const op of succeeded ? q.success : q.failure) {
      const f = this.applyOp(op, choices, rev, events);
      ops.push(f);
      responses.push([[opField[op.kind], [[1, this.header(rev)], ...f]]]);
    }
    return { succeeded, ops, responses };
  }

  /** One op's response fields, but the header. */
  private applyOp(op: RequestOp, choices: boolean[], rev: number, events: MvccEvent[]): Fields {
    switch (op.kind) {
      case 'range':
        return this.rangeAt(op.range, this.mvcc.readRevision(op.range.revision));
      case 'put': {
        const p = op.put;
        const live = this.mvcc.get(p.key);
        const value = p.ignoreValue ? live!.value : p.value;
        const lease = p.ignoreLease ? live!.lease : p.lease;
        if (live?.lease && live.lease !== lease) this.leases.detach(p.key, live.lease);
        const ev = this.mvcc.put(p.key, value, lease, rev);
        if (lease) this.leases.attach(p.key, lease);
        events.push(ev);
        return p.prevKv && ev.prev ? [[2, keyValue(ev.prev)]] : [];
      }
      case 'delete': {
        const d = op.del;
        const f: [number, number | Fields][] = [];
        const gone = this.mvcc.range(d.key, d.end, this.mvcc.rev);
        for (const kv of gone) {
          if (kv.lease) this.leases.detach(kv.key, kv.lease);
          events.push(this.mvcc.delete(kv.key, rev));
        }
        if (gone.length) f.push([2, gone.length]);
        if (d.prevKv) for (const kv of gone) f.push([3, keyValue(kv)]);
        return f;
      }
      case 'txn': {
        const r = this.apply(op.txn, choices, rev, events);
        const f: [number, boolean | Fields][] = [];
        if (r.succeeded) f.push([2, true]);
        for (const x of r.responses) f.push([3, x]);
        return f;
      }
    }
  }

  /** Deletes keys (a revoked lease's) in one revision. */
  async deleteKeys(keys: readonly string[]): Promise<void> {
    const events: MvccEvent[] = [];
    const rev = this.mvcc.rev + 1;
    for (const k of keys) if (this.mvcc.get(k)) events.push(this.mvcc.delete(k, rev));
    if (events.length) await this.persist(events, rev);
  }

  private async persist(events: MvccEvent[], rev: number): Promise<void> {
    await this.journal.write({ add: events.map((e) => e.kv) });
    this.published = rev;
    this.onPublish(events, rev);
  }

  async compact(revision: number): Promise<Fields> {
    if (revision > this.mvcc.rev) throw new EtcdError('futureRev');
    if (revision <= this.mvcc.compacted) throw new EtcdError('compacted');
    const drop: Rev[] = this.mvcc.compact(revision);
    await this.journal.write({ drop, meta: { compacted: revision } });
    return [[1, this.header()]];
  }

  close(): Promise<void> {
    return this.journal.close();
  }
}

const opField = { range: 1, put: 2, delete: 3, txn: 4 } as const;

function inRange(k: string, key: string, end: string): boolean {
  if (end === '') return k === key;
  return k >= key && (end === '\0' || k < end);
}

function compareKv(c: Compare, kv: Rev | undefined): boolean {
  let d: number;
  switch (c.target) {
    case Target.Version:
      d = (kv?.version ?? 0) - c.number;
      break;
    case Target.Create:
      d = (kv?.create ?? 0) - c.number;
      break;
    case Target.Mod:
      d = (kv?.mod ?? 0) - c.number;
      break;
    case Target.Value:
      d = Buffer.compare(kv!.value, c.value);
      break;
    case Target.Lease: {
      const l = kv?.lease ?? 0n;
      d = l === c.lease ? 0 : l < c.lease ? -1 : 1;
      break;
    }
    default:
      return false;
  }
  switch (c.result) {
    case CmpResult.Equal:
      return d === 0;
    case CmpResult.Greater:
      return d > 0;
    case CmpResult.Less:
      return d < 0;
    case CmpResult.NotEqual:
      return d !== 0;
    default:
      return false;
  }
}

/** RangeRequest.SortTarget: KEY, VERSION, CREATE, MOD, VALUE. */
function sortKvs(kvs: Rev[], target: number, descend: boolean): void {
  const by: ((a: Rev, b: Rev) => number)[] = [
    (a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    (a, b) => a.version - b.version,
    (a, b) => a.create - b.create,
    (a, b) => a.mod - b.mod,
    (a, b) => Buffer.compare(a.value, b.value),
  ];
  const cmp = by[target] ?? by[0];
  kvs.sort(descend ? (a, b) => cmp(b, a) : cmp);
}

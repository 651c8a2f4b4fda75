// The server's side of etcd's v3 messages (etcdserverpb rpc.proto, mvccpb kv.proto):
// requests decoded, responses encoded with the wire codec the apiserver's etcd3 client
// uses too (shared/etcd/wire.ts). Keys are latin1 strings (mvcc.ts).
import { CmpResult, Target } from '../shared/etcd/rpc';
import { type Fields, Reader, lenTag, varintTag } from '../shared/etcd/wire';
import type { MvccEvent, Rev } from './mvcc';

const latin1 = (b: Buffer): string => b.toString('latin1');
export const keyBytes = (k: string): Buffer => Buffer.from(k, 'latin1');

export interface RangeRequest {
  key: string;
  end: string;
  limit: number;
  revision: number;
  sortOrder: number;
  sortTarget: number;
  keysOnly: boolean;
  countOnly: boolean;
  minMod: number;
  maxMod: number;
  minCreate: number;
  maxCreate: number;
}

export function decodeRangeRequest(r: Reader): RangeRequest {
  const q: RangeRequest = {
    key: '',
    end: '',
    limit: 0,
    revision: 0,
    sortOrder: 0,
    sortTarget: 0,
    keysOnly: false,
    countOnly: false,
    minMod: 0,
    maxMod: 0,
    minCreate: 0,
    maxCreate: 0,
  };
  while (r.more) {
    const t = r.tag();
    switch (t) {
      case lenTag(1):
        q.key = latin1(r.bytes());
        break;
      case lenTag(2):
        q.end = latin1(r.bytes());
        break;
      case varintTag(3):
        q.limit = Number(r.bigVarint());
        break;
      case varintTag(4):
        q.revision = Number(r.bigVarint());
        break;
      case varintTag(5):
        q.sortOrder = r.varint();
        break;
      case varintTag(6):
        q.sortTarget = r.varint();
        break;
      case varintTag(8):
        q.keysOnly = r.bool();
        break;
      case varintTag(9):
        q.countOnly = r.bool();
        break;
      case varintTag(10):
        q.minMod = r.varint();
        break;
      case varintTag(11):
        q.maxMod = r.varint();
        break;
      case varintTag(12):
        q.minCreate = r.varint();
        break;
      case varintTag(13):
        q.maxCreate = r.varint();
        break;
      default:
        r.skip(t); // serializable (7): every read here is both
    }
  }
  return q;
}

export interface PutRequest {
  key: string;
  value: Buffer;
  lease: bigint;
  prevKv: boolean;
  ignoreValue: boolean;
  ignoreLease: boolean;
}

export function decodePutRequest(r: Reader): PutRequest {
  const q: PutRequest = {
    key: '',
    value: Buffer.alloc(0),
    lease: 0n,
    prevKv: false,
    ignoreValue: false,
    ignoreLease: false,
  };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) q.key = latin1(r.bytes());
    // Its own copy: the value outlives the request's buffer in the store.
    else if (t === lenTag(2)) q.value = Buffer.from(r.bytes());
    else if (t === varintTag(3)) q.lease = r.bigVarint();
    else if (t === varintTag(4)) q.prevKv = r.bool();
    else if (t === varintTag(5)) q.ignoreValue = r.bool();
    else if (t === varintTag(6)) q.ignoreLease = r.bool();
    else r.skip(t);
  }
  return q;
}

export interface DeleteRequest {
  key: string;
  end: string;
  prevKv: boolean;
}

export function decodeDeleteRequest(r: Reader): DeleteRequest {
  const q: DeleteRequest = { key: '', end: '', prevKv: false };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) q.key = latin1(r.bytes());
    else if (t === lenTag(2)) q.end = latin1(r.bytes());
    else if (t === varintTag(3)) q.prevKv = r.bool();
    else r.skip(t);
  }
  return q;
}

export interface Compare {
  result: CmpResult;
  target: Target;
  key: string;
  end: string;
  /** The operand of a numeric target (version, create, mod). */
  number: number;
  value: Buffer;
  lease: bigint;
}

function decodeCompare(r: Reader): Compare {
  const c: Compare = {
    result: CmpResult.Equal,
    target: Target.Version,
    key: '',
    end: '',
    number: 0,
    value: Buffer.alloc(0),
    lease: 0n,
  };
  while (r.more) {
    const t = r.tag();
    if (t === varintTag(1)) c.result = r.varint();
    else if (t === varintTag(2)) c.target = r.varint();
    else if (t === lenTag(3)) c.key = latin1(r.bytes());
    else if (t === varintTag(4) || t === varintTag(5) || t === varintTag(6)) c.number = Number(r.bigVarint());
    else if (t === lenTag(7)) c.value = r.bytes();
    else if (t === varintTag(8)) c.lease = r.bigVarint();
    else if (t === lenTag(64)) c.end = latin1(r.bytes());
    else r.skip(t);
  }
  return c;
}

export type RequestOp =
  | { kind: 'range'; range: RangeRequest }
  | { kind: 'put'; put: PutRequest }
  | { kind: 'delete'; del: DeleteRequest }
  | { kind: 'txn'; txn: TxnRequest };

function decodeRequestOp(r: Reader): RequestOp | null {
  let op: RequestOp | null = null;
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) op = { kind: 'range', range: decodeRangeRequest(r.sub()) };
    else if (t === lenTag(2)) op = { kind: 'put', put: decodePutRequest(r.sub()) };
    else if (t === lenTag(3)) op = { kind: 'delete', del: decodeDeleteRequest(r.sub()) };
    else if (t === lenTag(4)) op = { kind: 'txn', txn: decodeTxnRequest(r.sub()) };
    else r.skip(t);
  }
  return op;
}

export interface TxnRequest {
  compare: Compare[];
  success: RequestOp[];
  failure: RequestOp[];
}

export function decodeTxnRequest(r: Reader): TxnRequest {
  const q: TxnRequest = { compare: [], success: [], failure: [] };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) q.compare.push(decodeCompare(r.sub()));
    else if (t === lenTag(2) || t === lenTag(3)) {
      const op = decodeRequestOp(r.sub());
      if (op) (t === lenTag(2) ? q.success : q.failure).push(op);
    } else r.skip(t);
  }
  return q;
}

/** The first varint field of a message, as etcd's single-field requests (Compaction, Lease*) carry. */
export function decodeFirstInt(b: Buffer, field: number): bigint {
  const r = new Reader(b);
  let v = 0n;
  while (r.more) {
    const t = r.tag();
    if (t === varintTag(field)) v = r.bigVarint();
    else r.skip(t);
  }
  return v;
}

/** A field's value from a message of varint fields: field number → value. */
export function decodeInts(b: Buffer): Map<number, bigint> {
  const r = new Reader(b);
  const out = new Map<number, bigint>();
  while (r.more) {
    const t = r.tag();
    if ((t & 7) === 0) out.set(t >>> 3, r.bigVarint());
    else r.skip(t);
  }
  return out;
}

export interface WatchCreate {
  key: string;
  end: string;
  startRevision: number;
  progressNotify: boolean;
  noPut: boolean;
  noDelete: boolean;
  prevKv: boolean;
  watchId: number;
}

export type WatchRequest =
  | { kind: 'create'; create: WatchCreate }
  | { kind: 'cancel'; watchId: number }
  | { kind: 'progress' }
  | { kind: 'none' };

function decodeWatchCreate(r: Reader): WatchCreate {
  const c: WatchCreate = {
    key: '',
    end: '',
    startRevision: 0,
    progressNotify: false,
    noPut: false,
    noDelete: false,
    prevKv: false,
    watchId: 0,
  };
  const filter = (f: number) => {
    if (f === 0) c.noPut = true;
    else if (f === 1) c.noDelete = true;
  };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) c.key = latin1(r.bytes());
    else if (t === lenTag(2)) c.end = latin1(r.bytes());
    else if (t === varintTag(3)) c.startRevision = Number(r.bigVarint());
    else if (t === varintTag(4)) c.progressNotify = r.bool();
    else if (t === varintTag(5)) filter(r.varint());
    else if (t === lenTag(5)) {
      const p = r.sub(); // packed
      while (p.more) filter(p.varint());
    } else if (t === varintTag(6)) c.prevKv = r.bool();
    else if (t === varintTag(7)) c.watchId = Number(r.bigVarint());
    else r.skip(t);
  }
  return c;
}

export function decodeWatchRequest(b: Buffer): WatchRequest {
  const r = new Reader(b);
  let q: WatchRequest = { kind: 'none' };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) q = { kind: 'create', create: decodeWatchCreate(r.sub()) };
    else if (t === lenTag(2)) q = { kind: 'cancel', watchId: Number(decodeFirstInt(r.bytes(), 1)) };
    else if (t === lenTag(3)) {
      r.skip(t);
      q = { kind: 'progress' };
    } else r.skip(t);
  }
  return q;
}

// ---- responses ----

/** ResponseHeader: one member, one raft term. */
export interface HeaderInfo {
  clusterId: bigint;
  memberId: bigint;
}

export function header(h: HeaderInfo, revision: number): Fields {
  return [
    [1, h.clusterId],
    [2, h.memberId],
    [3, revision],
    [4, 1],
  ];
}

/** mvccpb.KeyValue; keysOnly leaves the value out. */
export function keyValue(kv: Rev, keysOnly = false): Fields {
  const f: [number, number | bigint | Buffer][] = [
    [1, keyBytes(kv.key)],
    [2, kv.create],
    [3, kv.mod],
    [4, kv.version],
  ];
  if (!keysOnly && kv.value.length) f.push([5, kv.value]);
  if (kv.lease) f.push([6, kv.lease]);
  return f;
}

/** mvccpb.Event. */
export function event(ev: MvccEvent, withPrev: boolean): Fields {
  const f: [number, number | Fields][] = [];
  if (ev.type) f.push([1, ev.type]);
  f.push([
    2,
    ev.type
      ? [
          [1, keyBytes(ev.kv.key)],
          [3, ev.kv.mod],
        ]
      : keyValue(ev.kv),
  ]);
  if (withPrev && ev.prev) f.push([3, keyValue(ev.prev)]);
  return f;
}

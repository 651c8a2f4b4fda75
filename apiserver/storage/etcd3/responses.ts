// The responses of etcd's v3 API we read, and mvccpb.KeyValue / Event. Field
// numbers follow etcd's rpc.proto and kv.proto. Decoders read straight into the
// shapes the storage layer hands out: revisions as numbers, lease IDs as exact
// bigints, values as views of the received message (no copy).
import type { KeyValue } from '../interface';
import { Reader, lenTag, varintTag } from '../../../shared/etcd/wire';

/** mvccpb.KeyValue, plus etcd's per-key version (used by the compactor) and the exact lease ID. */
export class EtcdKeyValue implements KeyValue {
  constructor(
    readonly key: string,
    readonly value: Buffer,
    readonly createRevision: number,
    readonly modRevision: number,
    /** Lease IDs are 63-bit: as a number only "non-zero" is reliable; see leaseId. */
    readonly lease: number,
    readonly version: number,
    readonly leaseId: bigint,
  ) {}
}

const EMPTY: Buffer = Buffer.alloc(0);

export function decodeKeyValue(r: Reader): EtcdKeyValue {
  let key = '';
  let value = EMPTY;
  let create = 0;
  let mod = 0;
  let version = 0;
  let lease = 0n;
  while (r.more) {
    const t = r.tag();
    switch (t) {
      case lenTag(1):
        key = r.string();
        break;
      case varintTag(2):
        create = r.varint();
        break;
      case varintTag(3):
        mod = r.varint();
        break;
      case varintTag(4):
        version = r.varint();
        break;
      case lenTag(5):
        value = r.bytes();
        break;
      case varintTag(6):
        lease = r.bigVarint();
        break;
      default:
        r.skip(t);
    }
  }
  return new EtcdKeyValue(key, value, create, mod, Number(lease), version, lease);
}

/** ResponseHeader.revision; the other header fields are not needed. */
function headerRevision(r: Reader): number {
  let rev = 0;
  while (r.more) {
    const t = r.tag();
    if (t === varintTag(3)) rev = r.varint();
    else r.skip(t);
  }
  return rev;
}

export interface RangeResp {
  revision: number;
  kvs: EtcdKeyValue[];
  more: boolean;
  count: number;
}

function decodeRangeFrom(r: Reader): RangeResp {
  const out: RangeResp = { revision: 0, kvs: [], more: false, count: 0 };
  while (r.more) {
    const t = r.tag();
    switch (t) {
      case lenTag(1):
        out.revision = headerRevision(r.sub());
        break;
      case lenTag(2):
        out.kvs.push(decodeKeyValue(r.sub()));
        break;
      case varintTag(3):
        out.more = r.bool();
        break;
      case varintTag(4):
        out.count = r.varint();
        break;
      default:
        r.skip(t);
    }
  }
  return out;
}

export const decodeRange = (b: Buffer): RangeResp => decodeRangeFrom(new Reader(b));

export interface PutResp {
  revision: number;
  prevKv: EtcdKeyValue | null;
}

function decodePutFrom(r: Reader): PutResp {
  const out: PutResp = { revision: 0, prevKv: null };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) out.revision = headerRevision(r.sub());
    else if (t === lenTag(2)) out.prevKv = decodeKeyValue(r.sub());
    else r.skip(t);
  }
  return out;
}

export const decodePut = (b: Buffer): PutResp => decodePutFrom(new Reader(b));

export interface DeleteResp {
  revision: number;
  deleted: number;
  prevKvs: EtcdKeyValue[];
}

function decodeDeleteFrom(r: Reader): DeleteResp {
  const out: DeleteResp = { revision: 0, deleted: 0, prevKvs: [] };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) out.revision = headerRevision(r.sub());
    else if (t === varintTag(2)) out.deleted = r.varint();
    else if (t === lenTag(3)) out.prevKvs.push(decodeKeyValue(r.sub()));
    else r.skip(t);
  }
  return out;
}

export const decodeDelete = (b: Buffer): DeleteResp => decodeDeleteFrom(new Reader(b));

export type OpResp =
  { kind: 'range'; range: RangeResp } | { kind: 'put'; put: PutResp } | { kind: 'delete'; del: DeleteResp };

export interface TxnResp {
  revision: number;
  succeeded: boolean;
  responses: OpResp[];
}

export function decodeTxn(b: Buffer): TxnResp {
  const r = new Reader(b);
  const out: TxnResp = { revision: 0, succeeded: false, responses: [] };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) out.revision = headerRevision(r.sub());
    else if (t === varintTag(2)) out.succeeded = r.bool();
    else if (t === lenTag(3)) {
      const op = r.sub();
      while (op.more) {
        const ot = op.tag();
        if (ot === lenTag(1)) out.responses.push({ kind: 'range', range: decodeRangeFrom(op.sub()) });
        else if (ot === lenTag(2)) out.responses.push({ kind: 'put', put: decodePutFrom(op.sub()) });
        else if (ot === lenTag(3)) out.responses.push({ kind: 'delete', del: decodeDeleteFrom(op.sub()) });
        else op.skip(ot);
      }
    } else r.skip(t);
  }
  return out;
}

/** Any response whose only interesting field is header (Compaction, LeaseRevoke). */
export function decodeHeaderOnly(b: Buffer): { revision: number } {
  const r = new Reader(b);
  let revision = 0;
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) revision = headerRevision(r.sub());
    else r.skip(t);
  }
  return { revision };
}

export interface LeaseGrantResp {
  id: bigint;
  ttl: number;
  error: string;
}

export function decodeLeaseGrant(b: Buffer): LeaseGrantResp {
  const r = new Reader(b);
  const out: LeaseGrantResp = { id: 0n, ttl: 0, error: '' };
  while (r.more) {
    const t = r.tag();
    if (t === varintTag(2)) out.id = r.bigVarint();
    else if (t === varintTag(3)) out.ttl = r.varint();
    else if (t === lenTag(4)) out.error = r.string();
    else r.skip(t);
  }
  return out;
}

export interface StatusResp {
  version: string;
  dbSize: number;
  dbSizeInUse: number;
  errors: string[];
}

export function decodeStatus(b: Buffer): StatusResp {
  const r = new Reader(b);
  const out: StatusResp = { version: '', dbSize: 0, dbSizeInUse: 0, errors: [] };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(2)) out.version = r.string();
    else if (t === varintTag(3)) out.dbSize = r.varint();
    else if (t === lenTag(8)) out.errors.push(r.string());
    else if (t === varintTag(9)) out.dbSizeInUse = r.varint();
    else r.skip(t);
  }
  return out;
}

/** mvccpb.Event as received: type 0 = PUT, 1 = DELETE. */
export interface RawEvent {
  type: number;
  kv: EtcdKeyValue | null;
  prevKv: EtcdKeyValue | null;
}

export interface WatchResp {
  revision: number;
  watchId: number;
  created: boolean;
  canceled: boolean;
  compactRevision: number;
  cancelReason: string;
  fragment: boolean;
  events: RawEvent[];
}

function decodeEvent(r: Reader): RawEvent {
  const ev: RawEvent = { type: 0, kv: null, prevKv: null };
  while (r.more) {
    const t = r.tag();
    if (t === varintTag(1)) ev.type = r.varint();
    else if (t === lenTag(2)) ev.kv = decodeKeyValue(r.sub());
    else if (t === lenTag(3)) ev.prevKv = decodeKeyValue(r.sub());
    else r.skip(t);
  }
  return ev;
}

export function decodeWatch(b: Buffer): WatchResp {
  const r = new Reader(b);
  const out: WatchResp = {
    revision: 0,
    watchId: 0,
    created: false,
    canceled: false,
    compactRevision: 0,
    cancelReason: '',
    fragment: false,
    events: [],
  };
  while (r.more) {
    const t = r.tag();
    switch (t) {
      case lenTag(1):
        out.revision = headerRevision(r.sub());
        break;
      case varintTag(2):
        // -1 (a failed create) is a 10-byte varint; read it signed.
        out.watchId = Number(r.bigVarint());
        break;
      case varintTag(3):
        out.created = r.bool();
        break;
      case varintTag(4):
        out.canceled = r.bool();
        break;
      case varintTag(5):
        out.compactRevision = r.varint();
        break;
      case lenTag(6):
        out.cancelReason = r.string();
        break;
      case varintTag(7):
        out.fragment = r.bool();
        break;
      case lenTag(11):
        out.events.push(decodeEvent(r.sub()));
        break;
      default:
        r.skip(t);
    }
  }
  return out;
}

// The requests of etcd's v3 API we send (etcdserverpb.KV, Watch, Lease,
// Maintenance). Field numbers follow etcd's rpc.proto; the encoders build wire
// Fields (wire.ts). The responses are decoded in responses.ts.
import { type Fields, encode } from '../../../shared/etcd/wire';
import { type CmpResult, TARGET_FIELD, type Target } from '../../../shared/etcd/rpc';

export { METHOD, CmpResult, Target } from '../../../shared/etcd/rpc';

export interface RangeReq {
  key: string | Buffer;
  rangeEnd?: Buffer;
  limit?: number;
  revision?: number;
  serializable?: boolean;
  keysOnly?: boolean;
  countOnly?: boolean;
}

export function rangeFields(r: RangeReq): Fields {
  const f: [number, number | boolean | string | Buffer][] = [[1, r.key]];
  if (r.rangeEnd) f.push([2, r.rangeEnd]);
  if (r.limit) f.push([3, r.limit]);
  if (r.revision) f.push([4, r.revision]);
  if (r.serializable) f.push([7, true]);
  if (r.keysOnly) f.push([8, true]);
  if (r.countOnly) f.push([9, true]);
  return f;
}

export interface PutReq {
  key: string;
  value: Buffer | string;
  lease?: bigint;
  prevKv?: boolean;
}

export function putFields(r: PutReq): Fields {
  const f: [number, bigint | boolean | string | Buffer][] = [
    [1, r.key],
    [2, r.value],
  ];
  if (r.lease) f.push([3, r.lease]);
  if (r.prevKv) f.push([4, true]);
  return f;
}

export function deleteRangeFields(key: string, rangeEnd?: Buffer, prevKv = true): Fields {
  const f: [number, boolean | string | Buffer][] = [[1, key]];
  if (rangeEnd) f.push([2, rangeEnd]);
  if (prevKv) f.push([3, true]);
  return f;
}

/** A Compare on one key. The operand is always written, even when 0, because it sits in a oneof. */
export function compare(key: string, target: Target, result: CmpResult, operand: number): Fields {
  return [
    [1, result],
    [2, target],
    [3, key],
    [TARGET_FIELD[target], operand],
  ];
}

/** RequestOp: exactly one of range (1), put (2), delete_range (3). */
export const opRange = (r: RangeReq): Fields => [[1, rangeFields(r)]];
export const opPut = (r: PutReq): Fields => [[2, putFields(r)]];
export const opDelete = (key: string): Fields => [[3, deleteRangeFields(key)]];

export function txnFields(cmp: Fields[], success: Fields[], failure: Fields[]): Fields {
  const f: [number, Fields][] = [];
  for (const c of cmp) f.push([1, c]);
  for (const s of success) f.push([2, s]);
  for (const s of failure) f.push([3, s]);
  return f;
}

export const compactionFields = (revision: number, physical = false): Fields => [
  [1, revision],
  [2, physical],
];

export interface WatchCreate {
  key: string | Buffer;
  rangeEnd?: Buffer;
  /** Inclusive; 0 = now. */
  startRevision: number;
  watchId: number;
  prevKv: boolean;
  fragment: boolean;
  /** Ask for periodic empty responses naming the revision the watch has caught up to. */
  progressNotify: boolean;
}

/** WatchRequest{create_request}. */
export function watchCreate(w: WatchCreate): Buffer {
  const c: [number, number | boolean | string | Buffer][] = [[1, w.key]];
  if (w.rangeEnd) c.push([2, w.rangeEnd]);
  if (w.startRevision) c.push([3, w.startRevision]);
  c.push([4, w.progressNotify], [6, w.prevKv], [7, w.watchId], [8, w.fragment]);
  return encode([[1, c]]);
}

/** WatchRequest{cancel_request}. */
export const watchCancel = (watchId: number): Buffer => encode([[2, [[1, watchId]]]]);

export const leaseGrantFields = (ttlSeconds: number): Fields => [[1, ttlSeconds]];
export const leaseRevokeFields = (id: bigint): Fields => [[1, id]];

/** The end of the key range holding every key that starts with prefix. */
export function prefixEnd(prefix: string): Buffer {
  const end = Buffer.from(prefix, 'utf8');
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  // Empty prefix or all 0xff: "\0" means every key from the start key on.
  return Buffer.from([0]);
}

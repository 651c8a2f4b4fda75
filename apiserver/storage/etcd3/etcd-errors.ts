// Turns gRPC/etcd failures into StorageErrors. etcd reports its own errors as
// gRPC statuses with fixed "etcdserver: ..." messages, so they are told apart by text.
import { StorageError } from '../errors';
import { grpcStatus } from './connection';
import { GrpcStatus } from './grpc-client';

const COMPACTED = 'required revision has been compacted';
const FUTURE_REV = 'required revision is a future revision';
const LEASE_NOT_FOUND = 'requested lease not found';

const hasDetail = (err: unknown, text: string): boolean => grpcStatus(err)?.details.includes(text) ?? false;

export const isCompactedError = (err: unknown): boolean => hasDetail(err, COMPACTED);
export const isFutureRevisionError = (err: unknown): boolean => hasDetail(err, FUTURE_REV);
export const isLeaseNotFoundError = (err: unknown): boolean => hasDetail(err, LEASE_NOT_FOUND);

/**
 * Maps a failure of an etcd call. Compacted and FutureRevision need a revision
 * the error does not carry; the storage layer handles them before calling this.
 */
export function toStorageError(err: unknown, key?: string): Error {
  if (err instanceof StorageError) return err;
  const st = grpcStatus(err);
  if (!st) return err instanceof Error ? err : new Error(String(err));
  const msg = `etcd: ${st.details}`;
  switch (st.code) {
    case GrpcStatus.DEADLINE_EXCEEDED:
      return new StorageError('Timeout', msg, key);
    case GrpcStatus.UNAVAILABLE:
      // "request timed out": the write may or may not have been applied.
      if (st.details.includes('request timed out')) return new StorageError('Timeout', msg, key);
      return new StorageError('Unavailable', msg, key);
    case GrpcStatus.CANCELLED:
      return new StorageError('Unavailable', msg, key);
    case GrpcStatus.RESOURCE_EXHAUSTED:
      // Too many requests or database space exceeded: the store cannot take writes now.
      return new StorageError('Unavailable', msg, key);
    case GrpcStatus.INVALID_ARGUMENT:
      if (st.details.includes('request is too large')) return new StorageError('InvalidObject', msg, key);
      return new Error(msg);
    default:
      return new Error(msg);
  }
}

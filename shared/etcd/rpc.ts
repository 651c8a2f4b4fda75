// Names and numbers of etcd's v3 API (etcdserverpb rpc.proto) that both ends use:
// the apiserver's etcd3 client and tkube's etcd stand-in (etcd/).
import { GrpcStatus } from './grpc-status';

export const METHOD = {
  range: '/etcdserverpb.KV/Range',
  put: '/etcdserverpb.KV/Put',
  deleteRange: '/etcdserverpb.KV/DeleteRange',
  txn: '/etcdserverpb.KV/Txn',
  compact: '/etcdserverpb.KV/Compact',
  watch: '/etcdserverpb.Watch/Watch',
  leaseGrant: '/etcdserverpb.Lease/LeaseGrant',
  leaseRevoke: '/etcdserverpb.Lease/LeaseRevoke',
  leaseKeepAlive: '/etcdserverpb.Lease/LeaseKeepAlive',
  leaseTimeToLive: '/etcdserverpb.Lease/LeaseTimeToLive',
  leaseLeases: '/etcdserverpb.Lease/LeaseLeases',
  status: '/etcdserverpb.Maintenance/Status',
  memberList: '/etcdserverpb.Cluster/MemberList',
  healthCheck: '/grpc.health.v1.Health/Check',
} as const;

/** Compare.CompareTarget. */
export const enum Target {
  Version = 0,
  Create = 1,
  Mod = 2,
  Value = 3,
  Lease = 4,
}

/** Compare.CompareResult. */
export const enum CmpResult {
  Equal = 0,
  Greater = 1,
  Less = 2,
  NotEqual = 3,
}

/** The oneof field of Compare that carries the operand of each target. */
export const TARGET_FIELD = [4, 5, 6, 7, 8] as const; // version, create_revision, mod_revision, value, lease

/** mvccpb.Event.EventType. */
export const enum EventType {
  Put = 0,
  Delete = 1,
}

/**
 * etcd's errors that clients tell apart (rpctypes): the gRPC code and the message
 * (grpc-message) each is sent with.
 */
export const ETCD_ERROR = {
  compacted: {
    code: GrpcStatus.OUT_OF_RANGE,
    message: 'etcdserver: mvcc: required revision has been compacted',
  },
  futureRev: {
    code: GrpcStatus.OUT_OF_RANGE,
    message: 'etcdserver: mvcc: required revision is a future revision',
  },
  leaseNotFound: { code: GrpcStatus.NOT_FOUND, message: 'etcdserver: requested lease not found' },
  leaseExists: { code: GrpcStatus.FAILED_PRECONDITION, message: 'etcdserver: lease already exists' },
  leaseTtlTooLarge: { code: GrpcStatus.OUT_OF_RANGE, message: 'etcdserver: too large lease TTL' },
  keyNotFound: { code: GrpcStatus.INVALID_ARGUMENT, message: 'etcdserver: key not found' },
  valueProvided: { code: GrpcStatus.INVALID_ARGUMENT, message: 'etcdserver: value is provided' },
  leaseProvided: { code: GrpcStatus.INVALID_ARGUMENT, message: 'etcdserver: lease is provided' },
  emptyKey: { code: GrpcStatus.INVALID_ARGUMENT, message: 'etcdserver: key is not provided' },
  duplicateKey: {
    code: GrpcStatus.INVALID_ARGUMENT,
    message: 'etcdserver: duplicate key given in txn request',
  },
  tooManyOps: {
    code: GrpcStatus.INVALID_ARGUMENT,
    message: 'etcdserver: too many operations in txn request',
  },
  requestTooLarge: { code: GrpcStatus.INVALID_ARGUMENT, message: 'etcdserver: request is too large' },
  noSpace: { code: GrpcStatus.RESOURCE_EXHAUSTED, message: 'etcdserver: mvcc: database space exceeded' },
} as const;

export type EtcdErrorName = keyof typeof ETCD_ERROR;

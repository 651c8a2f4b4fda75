// shared/leaderelection: client-go's leader election on coordination.k8s.io/v1 Leases.
export {
  LeaderElector,
  LeaderHealthzAdaptor,
  defaultIdentity,
  JITTER_FACTOR,
  type LeaderCallbacks,
  type LeaderElectionConfig,
  type LeaderEventRecorder,
} from './leaderelection';
export {
  LeaseLock,
  newResourceLock,
  formatMicroTime,
  parseMicroTime,
  leaseSpecToRecord,
  recordToLeaseSpec,
  LOCK_TYPES,
  type LeaderElectionRecord,
  type LeaseLockConfig,
  type ResourceLock,
} from './resourcelock';
export {
  ThreadedLeaderElector,
  newComponentElector,
  type ComponentElector,
  type ThreadedElectorConfig,
} from './elector-thread';
export {
  newLeaderElector,
  leaderElectionClientTimeoutMs,
  type LeaderElectionFlags,
  type NewLeaderElectorOptions,
} from './options';

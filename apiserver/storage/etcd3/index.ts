// The etcd3 storage backend: Storage over etcd's v3 gRPC API (--etcd-servers).
import { StorageError } from '../errors';
import { logger } from '../../../shared/log';
import { Connection, type TlsFiles, grpcStatus } from './connection';
import { METHOD, rangeFields } from './proto';
import { decodeRange } from './responses';
import { EtcdStorage } from './store';
import { encode } from '../../../shared/etcd/wire';

export { EtcdStorage } from './store';
export type { TlsFiles } from './connection';

const log = logger('storage/etcd3');

export interface EtcdStorageConfig {
  /** --etcd-servers: http:// or https:// URLs (or host:port). The first healthy one is used. */
  servers: string[];
  /** --etcd-healthcheck-timeout; also bounds the initial probe of each endpoint. Default 2 s. */
  healthcheckTimeoutMs?: number;
  /** --etcd-compaction-interval. Default 5 min; 0 turns periodic compaction off. */
  compactionIntervalMs?: number;
  /** --lease-reuse-duration-seconds. Default 60. */
  leaseReuseDurationSeconds?: number;
  /** Deadline of each request to etcd. Default 60 s, like --request-timeout. */
  requestTimeoutMs?: number;
  tls?: TlsFiles;
}

/**
 * Connects to the first endpoint that answers a linearizable read within the
 * health-check timeout. Fails with 'Unavailable' when none does.
 */
export async function openEtcdStorage(opts: EtcdStorageConfig): Promise<EtcdStorage> {
  const healthTimeout = opts.healthcheckTimeoutMs ?? 2_000;
  const conn = new Connection(opts.servers, opts.tls, opts.requestTimeoutMs ?? 60_000);
  const probe = encode(rangeFields({ key: 'health', countOnly: true }));
  const failures: string[] = [];
  for (let i = 0; i < opts.servers.length; i++) {
    try {
      await conn.callOn(i, METHOD.range, probe, decodeRange, healthTimeout);
      conn.select(i);
      log.v(2)?.info('connected to etcd', { endpoint: opts.servers[i] });
      return new EtcdStorage(conn, {
        compactionIntervalMs: opts.compactionIntervalMs ?? 5 * 60_000,
        leaseReuseDurationSeconds: opts.leaseReuseDurationSeconds ?? 60,
      });
    } catch (err) {
      failures.push(`${opts.servers[i]}: ${grpcStatus(err)?.details ?? String(err)}`);
    }
  }
  conn.close();
  throw new StorageError('Unavailable', `no etcd endpoint is healthy (${failures.join('; ')})`);
}

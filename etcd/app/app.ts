// Starts the stand-in from its flag values.
import { logger } from '../../shared/log';
import type { FlagValues } from '../../shared/options/flags';
import { EtcdServer } from '../server';

const log = logger('etcd');

export async function startEtcd(v: FlagValues): Promise<{ stop(): Promise<void> }> {
  const server = new EtcdServer({
    name: v.name,
    dataDir: v.dataDir || `${v.name}.etcd`,
    listenClientUrls: v.listenClientUrls,
    advertiseClientUrls: v.advertiseClientUrls,
    peerUrls: v.initialAdvertisePeerUrls,
    fsync: !v.unsafeNoFsync,
    maxRequestBytes: v.maxRequestBytes,
    maxTxnOps: v.maxTxnOps,
    progressNotifyMs: v.experimentalWatchProgressNotifyInterval,
  });
  await server.listen();
  log.info('serving client traffic', { urls: server.urls, revision: server.store.published });
  return server;
}

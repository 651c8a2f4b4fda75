// The shared storage conformance suite against a real etcd (one per file).
import { describeStorageConformance } from '../conformance';
import type { Storage } from '../interface';
import { type EtcdServer, etcdAvailable, startEtcd } from './etcd-server';
import { openEtcdStorage } from './index';

describe('etcd3 storage', function () {
  let etcd: EtcdServer | undefined;

  before(async function () {
    if (!etcdAvailable()) {
      console.warn(
        '    etcd is not installed (apt-get install etcd-server): skipping the etcd3 conformance suite',
      );
      this.skip();
    }
    this.timeout(60_000);
    etcd = await startEtcd();
  });

  describeStorageConformance('etcd3', {
    open: () => openEtcdStorage({ servers: [etcd!.endpoint], compactionIntervalMs: 0 }),
    release: (s: Storage) => s.close(),
    teardown: async () => {
      await etcd?.stop();
      etcd = undefined;
    },
  });
});

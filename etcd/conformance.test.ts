// The shared storage conformance suite (the one etcd3.test.ts runs against Debian's etcd)
// through tkube's etcd3 backend against tkube's etcd, started as a process.
import { describeStorageConformance } from '../apiserver/storage/conformance';
import { openEtcdStorage } from '../apiserver/storage/etcd3';
import type { Storage } from '../apiserver/storage/interface';
import { type EtcdServer, startStandIn } from './testing';

describe('etcd3 storage on tkube etcd', function () {
  let etcd: EtcdServer | undefined;

  before(async function () {
    this.timeout(30_000);
    etcd = await startStandIn();
  });

  describeStorageConformance('tkube etcd', {
    open: () => openEtcdStorage({ servers: [etcd!.endpoint], compactionIntervalMs: 0 }),
    release: (s: Storage) => s.close(),
    teardown: async () => {
      await etcd?.stop();
      etcd = undefined;
    },
  });
});

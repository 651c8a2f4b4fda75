// Opens the backend the flags ask for: embedded (default) or etcd3.
import type { Storage } from './interface';

export interface StorageConfig {
  backend: 'embedded' | 'etcd3';
  dataDir: string;
  etcdServers: string[];
  etcdCAFile?: string;
  etcdCertFile?: string;
  etcdKeyFile?: string;
  compactionIntervalMs: number;
  healthcheckTimeoutMs: number;
  leaseReuseDurationSeconds: number;
  requestTimeoutMs: number;
}

export async function openStorage(c: StorageConfig): Promise<Storage> {
  if (c.backend === 'etcd3') {
    const { openEtcdStorage } = await import('./etcd3/index.js');
    return openEtcdStorage({
      servers: c.etcdServers,
      healthcheckTimeoutMs: c.healthcheckTimeoutMs,
      compactionIntervalMs: c.compactionIntervalMs,
      leaseReuseDurationSeconds: c.leaseReuseDurationSeconds,
      requestTimeoutMs: c.requestTimeoutMs,
      tls:
        c.etcdCAFile || c.etcdCertFile
          ? { caFile: c.etcdCAFile, certFile: c.etcdCertFile, keyFile: c.etcdKeyFile }
          : undefined,
    });
  }
  const { openEmbeddedStorage } = await import('./embedded/index.js');
  return openEmbeddedStorage({ dataDir: c.dataDir, compactionIntervalMs: c.compactionIntervalMs });
}

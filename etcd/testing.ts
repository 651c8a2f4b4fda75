// Starts tkube's etcd (dist/cmd/etcd.js) as a process for tests, the way the etcd3 tests
// start Debian's etcd: the same command line, free ports, a temp data dir, /health polled,
// stopped by PID (apiserver/storage/etcd3/etcd-server.ts does all of that).
import { join } from 'node:path';
import { type EtcdServer, type StartEtcdOptions, startEtcd } from '../apiserver/storage/etcd3/etcd-server';
import { DIST } from '../shared/cluster/process';

export type { EtcdServer };

/** node dist/cmd/etcd.js: the stand-in's command. */
export const standInCommand = (): string[] => [process.execPath, join(DIST, 'cmd', 'etcd.js')];

export function startStandIn(opts: Omit<StartEtcdOptions, 'command'> = {}): Promise<EtcdServer> {
  return startEtcd({ ...opts, command: standInCommand() });
}

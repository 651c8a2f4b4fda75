// Rotation of the log files the runtime writes (kubelet's container log
// manager): past --container-log-max-size the file is moved aside and the
// runtime told to reopen it (ReopenContainerLog); older rotations are gzipped
// and at most --container-log-max-files kept. A runtime that cannot reopen
// gets its file back.
import { renameSync, statSync } from 'node:fs';
import { logger } from '../../shared/log';
import { compressAndPrune, moveLogAside, type LogRotation } from '../pods/logs';
import type { CriClient } from '../../shared/cri/client';
import type { CriContainer } from './state';

const log = logger('nodeagent/cri');

export async function rotateContainerLogs(
  client: CriClient,
  containers: Iterable<CriContainer>,
  rotation: LogRotation,
  now: number,
): Promise<void> {
  for (const c of containers) {
    if (c.state !== 'running') continue;
    let size: number;
    try {
      size = statSync(c.logPath).size;
    } catch {
      continue;
    }
    if (size < rotation.maxSizeBytes) continue;
    const moved = moveLogAside(c.logPath, now);
    if (!moved) continue;
    try {
      await client.call('ReopenContainerLog', { containerId: c.criID });
    } catch (err) {
      renameSync(moved, c.logPath);
      log.warn('reopening a container log failed', { container: c.name, err: String(err) });
      continue;
    }
    compressAndPrune(c.logPath, rotation);
  }
}

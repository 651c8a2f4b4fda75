// Starting the real tkube executables for end-to-end tests: free ports, temp
// dirs, readiness waits, and cleanup by PID even when a test fails. Process
// handling itself is shared with the tkube launcher (shared/cluster).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  DIST,
  freePort,
  logTail,
  startExecutable,
  waitForHTTP,
  waitUntil,
  type Proc,
} from '../../shared/cluster/process';

export { DIST, freePort, waitForHTTP, type Proc };
export const REPO = resolve(DIST, '..');

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tkube-${prefix}-`));
}

/** Starts `node dist/cmd/<name>.js args`, logging to a file in logDir. */
export function startProcess(name: string, args: string[], logDir: string, env?: NodeJS.ProcessEnv): Proc {
  return startExecutable(name, args, logDir, { logName: `${name}-${Date.now()}`, env });
}

export interface APIServerProc extends Proc {
  port: number;
  kubeconfig: string;
  dir: string;
  /** Stops the process and removes its directory. */
  cleanup(): Promise<void>;
}

export interface APIServerOptions {
  port?: number;
  dir?: string;
  args?: string[];
  /** More environment (NODE_OPTIONS=--require ... to watch the process from inside). */
  env?: NodeJS.ProcessEnv;
}

/** A real apiserver process on a free port with its own data and cert dirs. */
export async function startAPIServerProcess(o: APIServerOptions = {}): Promise<APIServerProc> {
  const dir = o.dir ?? tempDir('apiserver');
  const port = o.port ?? (await freePort());
  const kubeconfig = join(dir, 'kubeconfig');
  const p = startProcess(
    'apiserver',
    [
      '--secure-port',
      String(port),
      '--bind-address',
      '127.0.0.1',
      '--data-dir',
      join(dir, 'data'),
      '--cert-dir',
      join(dir, 'certs'),
      '--write-kubeconfig',
      kubeconfig,
      ...(o.args ?? []),
    ],
    dir,
    o.env,
  );
  try {
    await waitForHTTP(kubeconfig, '/readyz', 30_000, p.exited);
  } catch (err) {
    await p.stop('SIGKILL');
    // The log goes with the test's directory: its end is kept in the error.
    throw new Error(`${(err as Error).message}; see ${p.logFile}:\n${logTail(p.logFile)}`, { cause: err });
  }
  return {
    ...p,
    port,
    kubeconfig,
    dir,
    async cleanup() {
      await p.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface DnsProc extends Proc {
  ports: { dns: number; health: number; ready: number; metrics: number };
}

/**
 * The dns executable on 127.0.0.1, every port free and no upstream (nothing
 * leaves the machine), once /ready answers 200; stopped by PID if it never does.
 */
export async function startDnsProcess(
  kubeconfig: string,
  logDir: string,
  args: string[] = [],
): Promise<DnsProc> {
  const ports = {
    dns: await freePort(),
    health: await freePort(),
    ready: await freePort(),
    metrics: await freePort(),
  };
  const p = startProcess(
    'dns',
    [
      '--kubeconfig',
      kubeconfig,
      '--dns-bind-address',
      '127.0.0.1',
      '--dns-port',
      String(ports.dns),
      '--health-port',
      String(ports.health),
      '--ready-port',
      String(ports.ready),
      '--metrics-bind-address',
      `127.0.0.1:${ports.metrics}`,
      '--upstream',
      'none',
      ...args,
    ],
    logDir,
  );
  try {
    await waitUntil(
      async () => (await fetch(`http://127.0.0.1:${ports.ready}/ready`)).status === 200,
      30_000,
      '/ready',
      p.exited,
    );
  } catch (err) {
    await p.stop('SIGKILL');
    // The log goes with the test's directory: its end is kept in the error.
    throw new Error(`${(err as Error).message}; see ${p.logFile}:\n${logTail(p.logFile)}`, { cause: err });
  }
  return { ...p, ports };
}

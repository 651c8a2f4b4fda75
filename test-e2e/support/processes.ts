// Starting the real tkube executables as processes for end-to-end tests: free
// ports, temp dirs, readiness waits, and cleanup by PID even when a test fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadKubeconfig } from '../../shared/client/kubeconfig';
import { Agent, request } from 'undici';

export const DIST = resolve(__dirname, '../..');
export const REPO = resolve(DIST, '..');

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of running) if (p.exitCode === null) p.kill('SIGKILL');
});

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolvePort(port));
    });
    s.on('error', reject);
  });
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tkube-${prefix}-`));
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  logFile: string;
  /** Sends a signal and waits for the exit (SIGKILL after timeoutMs). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts `node dist/cmd/<name>.js args`, logging to a file in logDir. */
export function startProcess(name: string, args: string[], logDir: string): Proc {
  const logFile = join(logDir, `${name}-${Date.now()}.log`);
  const out = createWriteStream(logFile);
  const child = spawn(process.execPath, [join(DIST, 'cmd', `${name}.js`), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  running.add(child);
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      running.delete(child);
      r(code);
    }),
  );
  return {
    child,
    pid: child.pid!,
    logFile,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** Polls an HTTPS path with the kubeconfig's credentials until it answers 200. */
export async function waitForHTTP(kubeconfig: string, path: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (existsSync(kubeconfig)) {
      const c = loadKubeconfig(kubeconfig);
      const dispatcher = new Agent({ connect: { ca: c.caPem, cert: c.certPem, key: c.keyPem } });
      try {
        const r = await request(c.server + path, { dispatcher, headersTimeout: 2000, bodyTimeout: 2000 });
        const body = await r.body.text();
        if (r.statusCode === 200) return;
        last = `${r.statusCode} ${body.slice(0, 200)}`;
      } catch (err) {
        last = String(err);
      } finally {
        await dispatcher.close();
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${path}: ${last}`);
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
  );
  const ready = waitForHTTP(kubeconfig, '/readyz');
  const exitedEarly = p.exited.then((code) => {
    throw new Error(`apiserver exited with ${code} before it was ready; see ${p.logFile}`);
  });
  await Promise.race([ready, exitedEarly]);
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

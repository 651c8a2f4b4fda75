// Running the real kubectl found on PATH against a tkube server.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

export function kubectlAvailable(): boolean {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with the kubeconfig; never throws on a non-zero exit. */
export function kubectl(
  kubeconfig: string,
  args: string[],
  opts: { input?: string; env?: Record<string, string>; timeoutMs?: number; binary?: string } = {},
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      opts.binary ?? 'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      {
        timeout: opts.timeoutMs ?? 60_000,
        env: { ...process.env, ...(opts.env ?? {}) },
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as any).code === 'number' ? (err as any).code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (opts.input !== undefined) {
      child.stdin!.end(opts.input);
    }
  });
}

/** Runs kubectl and fails the test (with kubectl's stderr) unless it exits 0; returns its stdout. */
export async function kubectlOk(kubeconfig: string, args: string[]): Promise<string> {
  const r = await kubectl(kubeconfig, args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** Starts a long-running kubectl (get -w) and collects its output until stopped. */
export function kubectlStream(
  kubeconfig: string,
  args: string[],
): { output: () => string; stop: () => Promise<void> } {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return {
    output: () => out,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.on('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

/**
 * The kubectl binaries to test with: the one on PATH and every kubectl.1.<minor>
 * from 1.27 to 1.33 found on PATH or beside it (where the SDK keeps them).
 */
export function kubectlVersions(): string[] {
  const found: string[] = [];
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const d of [...dirs]) {
    const k = join(d, 'kubectl');
    if (existsSync(k)) dirs.push(dirname(realpathSync(k)));
  }
  for (let minor = 27; minor <= 33; minor++) {
    const dir = dirs.find((d) => existsSync(join(d, `kubectl.1.${minor}`)));
    if (dir) found.push(join(dir, `kubectl.1.${minor}`));
  }
  return found;
}

/**
 * kubectl on a cluster a `before` hook starts (hence the kubeconfig as a function): `ok` fails
 * the test unless kubectl exits 0 and returns its stdout, `json` parses `-o json`, `apply`
 * applies objects as one List.
 */
export function kubectlOn(kubeconfig: () => string) {
  const ok = async (args: string[], input?: string) => {
    const r = await kubectl(kubeconfig(), args, { input });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const json = async (...args: string[]) => JSON.parse(await ok([...args, '-o', 'json']));
  const apply = (...items: any[]) =>
    ok(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  return { ok, json, apply };
}

// Running the kernel's tools (nft, iptables-restore, conntrack): argv only, no
// shell; a prefix (e.g. `ip netns exec <ns>`) runs them in another network
// namespace — how the tests program a namespace they made.
import { spawn } from 'node:child_process';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type Runner = (cmd: string, args: string[], stdin?: string) => Promise<ExecResult>;

export function commandRunner(prefix: string[] = []): Runner {
  return (cmd, args, stdin) =>
    new Promise((resolve, reject) => {
      const argv = [...prefix, cmd, ...args];
      const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (b: Buffer) => out.push(b));
      child.stderr.on('data', (b: Buffer) => err.push(b));
      child.on('error', reject);
      child.on('close', (code) =>
        resolve({
          code: code ?? 1,
          stdout: Buffer.concat(out).toString(),
          stderr: Buffer.concat(err).toString(),
        }),
      );
      child.stdin.on('error', () => {}); // a tool that exits early closes its stdin
      child.stdin.end(stdin ?? '');
    });
}

/** Runs and throws with the tool's own message when it fails. */
export async function mustRun(run: Runner, cmd: string, args: string[], stdin?: string): Promise<ExecResult> {
  const r = await run(cmd, args, stdin);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.code}): ${r.stderr.trim()}`);
  return r;
}

/** Whether the tool is there at all (spawn fails with ENOENT otherwise). */
export async function haveTool(run: Runner, cmd: string, args: string[]): Promise<boolean> {
  try {
    return (await run(cmd, args)).code === 0;
  } catch {
    return false;
  }
}

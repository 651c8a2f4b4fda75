// The openssl command for the pki tests: the reference a certificate tkube makes must satisfy.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs openssl in dir; its stdout, or an Error carrying its stderr. */
export function openssl(dir: string, ...args: string[]): string {
  try {
    return execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err: any) {
    throw new Error(`openssl ${args.join(' ')}: ${err.stderr || err.message}`, { cause: err });
  }
}

/** A temporary directory for PEM files, removed by the returned function. */
export function pemDir(prefix: string): {
  dir: string;
  write: (name: string, data: string | Buffer) => string;
  remove: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), `tkube-${prefix}-`));
  return {
    dir,
    write: (name, data) => {
      writeFileSync(join(dir, name), data);
      return name;
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

// Writes a volume's files so a reader sees either the old set or the new one,
// never a mix (kubelet's AtomicWriter): the files go into a fresh
// "..<timestamp>" directory, the "..data" symlink is swapped to it by rename,
// and each top-level name is a symlink through "..data".
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, normalize } from 'node:path';

export interface FileProjection {
  data: Buffer;
  /** File mode (e.g. 0o644). */
  mode: number;
}

const DATA_DIR = '..data';
const DATA_TMP = '..data_tmp';

/** A payload path must be relative, without "..", and not start with "..". */
export function validatePayloadPath(p: string): void {
  if (!p) throw new Error('invalid path: must not be empty');
  if (p.startsWith('/')) throw new Error(`invalid path: must be relative path: ${p}`);
  if (p.length > 4096) throw new Error('invalid path: must be less than or equal to 4096 characters');
  if (p.split('/').includes('..')) throw new Error(`invalid path: must not contain '..': ${p}`);
  if (p.startsWith('..')) throw new Error(`invalid path: must not start with '..': ${p}`);
}

const pad = (n: number) => String(n).padStart(2, '0');

function tsDirName(now: Date): string {
  const t = `${now.getUTCFullYear()}_${pad(now.getUTCMonth() + 1)}_${pad(now.getUTCDate())}_${pad(now.getUTCHours())}_${pad(now.getUTCMinutes())}_${pad(now.getUTCSeconds())}`;
  return `..${t}.${randomBytes(5).toString('hex')}`;
}

/** Whether the payload equals what ..data holds now (then nothing is written). */
function unchanged(dir: string, current: string | undefined, payload: Map<string, FileProjection>): boolean {
  if (!current) return false;
  const base = join(dir, current);
  const existing = listFiles(base);
  if (existing.length !== payload.size) return false;
  for (const [p, f] of payload) {
    const file = join(base, p);
    try {
      if (!readFileSync(file).equals(f.data)) return false;
      if ((statSync(file).mode & 0o7777) !== f.mode) return false;
    } catch {
      return false;
    }
  }
  return true;
}

function listFiles(base: string, rel = ''): string[] {
  let out: string[] = [];
  let entries: string[];
  try {
    entries = readdirSync(join(base, rel));
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = rel ? `${rel}/${e}` : e;
    if (lstatSync(join(base, p)).isDirectory()) out = out.concat(listFiles(base, p));
    else out.push(p);
  }
  return out;
}

function currentDataDir(dir: string): string | undefined {
  try {
    return readlinkSync(join(dir, DATA_DIR));
  } catch {
    return undefined;
  }
}

/** Makes `dir` hold exactly the payload (relative path → content and mode); true when it wrote. */
export function writeAtomically(
  dir: string,
  payload: Map<string, FileProjection>,
  now = new Date(),
): boolean {
  for (const p of payload.keys()) validatePayloadPath(p);
  mkdirSync(dir, { recursive: true });
  const old = currentDataDir(dir);
  if (unchanged(dir, old, payload)) return false;
  const ts = tsDirName(now);
  const tsPath = join(dir, ts);
  mkdirSync(tsPath, { mode: 0o755 });
  chmodSync(tsPath, 0o755);
  for (const [p, f] of payload) {
    const file = join(tsPath, normalize(p));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, f.data, { mode: f.mode });
    chmodSync(file, f.mode);
  }
  const tmp = join(dir, DATA_TMP);
  rmSync(tmp, { force: true });
  symlinkSync(ts, tmp);
  renameSync(tmp, join(dir, DATA_DIR));
  // The user-visible names: one symlink per top-level entry, through ..data.
  const top = new Set([...payload.keys()].map((p) => p.split('/')[0]));
  for (const name of top) {
    const link = join(dir, name);
    if (existsSync(link) || isLink(link)) continue;
    symlinkSync(join(DATA_DIR, name), link);
  }
  for (const e of readdirSync(dir)) {
    if (e.startsWith('..') || top.has(e)) continue;
    if (isLink(join(dir, e))) unlinkSync(join(dir, e));
  }
  if (old && old !== ts) rmSync(join(dir, old), { recursive: true, force: true });
  return true;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

// Helpers for this folder's tests (not a test file itself).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openEmbeddedStorage, type EmbeddedOptions, type EmbeddedStorage } from './index';

/** A temporary data directory, removed by the returned cleanup. */
export function tempDir(): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tkube-embedded-'));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export function openAt(dir: string, opts: Partial<EmbeddedOptions> = {}): Promise<EmbeddedStorage> {
  return openEmbeddedStorage({ dataDir: dir, compactionIntervalMs: 0, ...opts });
}

/** A deterministic PRNG (mulberry32) so failures replay. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A clock tests move by hand. */
export class FakeClock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
}

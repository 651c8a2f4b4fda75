// The shared storage conformance suite, run against the embedded backend: a
// fresh store in its own temporary directory for every test.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Storage } from '../interface';
import { describeStorageConformance } from '../conformance';
import { openEmbeddedStorage, type EmbeddedStorage } from './index';

const dirs = new Map<Storage, string>();

describeStorageConformance('embedded', {
  async open() {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tkube-embedded-'));
    const s: EmbeddedStorage = await openEmbeddedStorage({ dataDir, compactionIntervalMs: 0 });
    dirs.set(s, dataDir);
    return s;
  },
  async release(s) {
    await s.close();
    fs.rmSync(dirs.get(s)!, { recursive: true, force: true });
    dirs.delete(s);
  },
});

// For tests that need a real containerd: the offline images (built once per
// machine into a temp folder), and a containerd of the test's own in a temp
// dir, on a private socket, with a pod CIDR of its own (parallel test
// processes must not share a bridge or a subnet), removed afterwards.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  containerdMissing,
  removeContainerdData,
  startContainerd,
  type RunningContainerd,
} from '../../shared/cluster/containerd';
import type { SupervisorOptions } from '../../shared/cluster/supervisor';

const SCRIPT = resolve(__dirname, '../../../scripts/build-images.sh');

/** Why the runtime tests cannot run here; undefined when they can. */
export function runtimeTestsUnavailable(): string | undefined {
  return containerdMissing() ?? (existsSync('/bin/busybox') ? undefined : 'busybox-static is not installed');
}

/** The busybox and pause OCI archives, built once per version of the script. */
export function testImagesDir(): string {
  const hash = createHash('sha256').update(readFileSync(SCRIPT)).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), `tkube-test-images-${hash}`);
  execFileSync('bash', [SCRIPT, dir], { stdio: 'pipe' });
  return dir;
}

/** A pod CIDR no other test process of this run is likely to use (10.200.0.0/13 is the tests' range). */
export function testPodCIDR(): string {
  const a = 200 + (process.pid % 8);
  const b = Math.floor(Math.random() * 256);
  return `10.${a}.${b}.0/24`;
}

export interface TestContainerd extends RunningContainerd {
  podCIDR: string;
  /** Stops containerd after removing every pod, and deletes its data dir. */
  cleanup(): Promise<void>;
}

export async function startTestContainerd(
  o: { registriesFile?: string; supervise?: SupervisorOptions } = {},
): Promise<TestContainerd> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tkube-ctd-'));
  const podCIDR = testPodCIDR();
  const ctd = await startContainerd({
    dataDir,
    podCIDR,
    imagesDir: testImagesDir(),
    registriesFile: o.registriesFile,
    supervise: o.supervise,
  });
  return Object.assign(ctd, {
    podCIDR,
    async cleanup() {
      await ctd.stop();
      removeContainerdData(dataDir);
    },
  });
}

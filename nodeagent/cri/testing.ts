// For tests that need a real containerd: the offline images (built once per
// machine into a temp folder), and a containerd of the test's own in a temp
// dir, on a private socket, with a pod CIDR of its own (parallel test
// processes must not share a bridge or a subnet), removed afterwards.
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  containerdMissing,
  removeContainerdData,
  startContainerd,
  type ClusterMirror,
  type RunningContainerd,
} from '../../shared/cluster/containerd';
import { SKOPEO_BIN } from '../../shared/cluster/registry';
import type { SupervisorOptions } from '../../shared/cluster/supervisor';

const SCRIPT = resolve(__dirname, '../../../scripts/build-images.sh');

/** Why the runtime tests cannot run here; undefined when they can. */
export function runtimeTestsUnavailable(): string | undefined {
  const missing = containerdMissing();
  if (missing) return missing;
  try {
    testImagesDir();
    return undefined;
  } catch (err: any) {
    return `the offline images cannot be built: ${String(err.stderr ?? err).trim()}`;
  }
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

/** A mirror on a closed port, for tests that bring none: a pull of a public name fails on this machine. */
const NO_UPSTREAM: ClusterMirror = { endpoint: 'http://127.0.0.1:1', mirrorOnly: true };

export async function startTestContainerd(
  o: { registriesFile?: string; mirror?: ClusterMirror; supervise?: SupervisorOptions } = {},
): Promise<TestContainerd> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tkube-ctd-'));
  const podCIDR = testPodCIDR();
  const ctd = await startContainerd({
    dataDir,
    podCIDR,
    imagesDir: testImagesDir(),
    registriesFile: o.registriesFile,
    // Never a pull from the internet: registry-1.docker.io and the others are mirrored, mirror-only.
    mirror: o.mirror ?? NO_UPSTREAM,
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

export interface TestDNS {
  close(): Promise<void>;
}

/**
 * A DNS server on ip:53 (an address of the test's own bridge) answering A queries for the
 * given names and NXDOMAIN for the rest: what a pod's `nslookup NAME SERVER` can ask
 * without any lookup leaving the machine.
 */
export async function startTestDNS(ip: string, names: Record<string, string>): Promise<TestDNS> {
  const sock = createSocket('udp4');
  sock.on('message', (q, from) => {
    if (q.length < 17) return;
    let at = 12;
    const labels: string[] = [];
    while (at < q.length && q[at] !== 0) {
      labels.push(q.subarray(at + 1, at + 1 + q[at]).toString('latin1'));
      at += 1 + q[at];
    }
    const qtype = q.readUInt16BE(at + 1);
    const question = q.subarray(12, at + 5);
    const addr = names[labels.join('.').toLowerCase()];
    const header = Buffer.alloc(12);
    q.copy(header, 0, 0, 2);
    // Response, recursion desired + available; NXDOMAIN for names it does not know.
    header.writeUInt16BE(addr ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    const answers: Buffer[] = [];
    if (addr && qtype === 1) {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(4, 10);
      addr.split('.').forEach((o, i) => rr.writeUInt8(Number(o), 12 + i));
      answers.push(rr);
    }
    header.writeUInt16BE(answers.length, 6);
    sock.send(Buffer.concat([header, question, ...answers]), from.port, from.address);
  });
  await new Promise<void>((ok, fail) => {
    sock.once('error', fail);
    sock.bind(53, ip, () => ok());
  });
  return { close: () => new Promise<void>((r) => sock.close(() => r())) };
}

/** The offline busybox written by skopeo under another name (`docker-archive:…`, `oci-archive:…`, `oci:…`). */
export function busyboxAs(to: string): void {
  execFileSync(
    SKOPEO_BIN,
    [
      'copy',
      '--quiet',
      '--insecure-policy',
      `oci-archive:${join(testImagesDir(), 'busybox.oci.tar')}:latest`,
      to,
    ],
    { stdio: 'pipe' },
  );
}

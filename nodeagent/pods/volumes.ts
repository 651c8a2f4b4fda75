// A pod's volumes on the node, in the kubelet's layout
// <root-dir>/pods/<uid>/volumes/kubernetes.io~<plugin>/<name>: emptyDir (a
// tmpfs for medium Memory when the agent is root and the runtime real),
// configMap, secret, downwardAPI and projected (written atomically, rewritten
// when their sources change), hostPath (with its type check), and the PVs of
// persistentVolumeClaim and ephemeral volumes (claim-volumes.ts). setUp runs on
// every sync and reports each volume that failed; mountsFor turns a
// container's volumeMounts (subPath, subPathExpr, readOnly) and its
// termination message file into bind mounts; tearDown unmounts and removes it
// all.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
} from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { parseQuantity, milliValue } from '../../shared/api/validation/quantity';
import { writeAtomically } from './atomic-writer';
import type { DownwardContext } from './downward';
import { ContainerConfigError, expand } from './env';
import { ensureHostsFile } from './etc-hosts';
import type { IssuedToken, PodObjects } from './pod-objects';
import { volumePayload } from './volume-payloads';
import { resolveClaimVolume, VolumeProcessingError } from './claim-volumes';

const run = promisify(execFile);

/** How often API-backed volumes are rewritten from their sources at most (a sync in between reuses them). */
export const VOLUME_REFRESH_MS = 10_000;

export interface VolumeFailure {
  volume: string;
  message: string;
  /** A refresh of a volume already in place failed: it keeps its content and the pod goes on. */
  refresh?: boolean;
  /** The volume could not be resolved yet (its claim unbound ...): kubelet's "failed to process volumes". */
  processing?: boolean;
}

interface MountedVolume {
  path: string;
  /** configMap, secret, downwardAPI and projected are mounted read-only. */
  readOnly: boolean;
  tmpfs?: boolean;
  /** A device-mountable volume's unique name, reported in the node's volumesInUse (local PVs). */
  uniqueName?: string;
}

interface PodVolumeState {
  volumes: Map<string, MountedVolume>;
  refreshedAt: Map<string, number>;
  tokens: Map<string, IssuedToken>;
}

export interface VolumeHostDeps {
  /** --root-dir */
  rootDir: string;
  objects: PodObjects;
  now(): number;
  /** The runtime runs real processes: tmpfs for memory-backed emptyDirs (as root). */
  realRuntime: boolean;
  /** --cluster-domain: the FQDN of a pod with a subdomain in its /etc/hosts. */
  clusterDomain?: string;
}

const PLUGIN_DIRS: Record<string, string> = {
  emptyDir: 'kubernetes.io~empty-dir',
  configMap: 'kubernetes.io~configmap',
  secret: 'kubernetes.io~secret',
  downwardAPI: 'kubernetes.io~downward-api',
  projected: 'kubernetes.io~projected',
};

function pluginOf(vol: any): string | undefined {
  if (vol.persistentVolumeClaim || vol.ephemeral) return 'claim';
  return Object.keys(PLUGIN_DIRS).find((k) => vol[k]) ?? (vol.hostPath ? 'hostPath' : undefined);
}

/** kubelet's hostPath type check (checkTypeInternal), creating what *OrCreate asks for. */
export function checkHostPathType(path: string, type: string | undefined): void {
  const st = (() => {
    try {
      return statSync(path);
    } catch {
      return undefined;
    }
  })();
  const fail = (what: string) => new Error(`hostPath type check failed: ${path} is not ${what}`);
  switch (type ?? '') {
    case '':
      return;
    case 'DirectoryOrCreate':
    case 'Directory':
      if (!st && type === 'DirectoryOrCreate') mkdirSync(path, { recursive: true, mode: 0o755 });
      else if (!st?.isDirectory()) throw fail('a directory');
      return;
    case 'FileOrCreate':
    case 'File':
      if (!st && type === 'FileOrCreate') closeSync(openSync(path, 'a', 0o644));
      else if (!st?.isFile()) throw fail('a file');
      return;
    case 'Socket':
      if (!st?.isSocket()) throw fail('a socket file');
      return;
    case 'CharDevice':
      if (!st?.isCharacterDevice()) throw fail('a character device');
      return;
    case 'BlockDevice':
      if (!st?.isBlockDevice()) throw fail('a block device');
      return;
    default:
      throw new Error(`${type} is an invalid volume type`);
  }
}

/**
 * kubelet's SetVolumeOwnership for a pod's fsGroup: every file and directory (not following links)
 * gets the group, group read (read-only volumes) or read-write, and directories setgid.
 */
export function applyFsGroup(dir: string, gid: number, readOnly: boolean): void {
  const mask = readOnly ? 0o440 : 0o660;
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    lchownSync(p, st.uid, gid);
    if (st.isDirectory()) {
      chmodSync(p, (st.mode & 0o7777) | mask | 0o110 | 0o2000);
      for (const e of readdirSync(p)) walk(join(p, e));
    } else chmodSync(p, (st.mode & 0o7777) | mask);
  };
  walk(dir);
}

/**
 * Mount points below `dir`, deepest first (from /proc/self/mountinfo, read off the event loop: with
 * each pod's rootfs, shm and netns mounts listed it is slow to read, and teardowns read it twice).
 */
async function mountsBelow(dir: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  return text
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p) => p && p.replace(/\\040/g, ' ').startsWith(prefix))
    .map((p) => p.replace(/\\040/g, ' '))
    .sort((a, b) => b.length - a.length);
}

/**
 * A volumeMount's subPath, subPathExpr expanded with the container's env; throws ContainerConfigError
 * with kubelet's makeMounts messages for an unset variable, an absolute path or a '..' element.
 */
export function mountSubPath(vm: any, env: Map<string, string>): string {
  let sub: string = vm.subPath ?? '';
  if (vm.subPathExpr) {
    const missing = new Set<string>();
    sub = expand(vm.subPathExpr, (n) => {
      const v = env.get(n);
      if (!v) missing.add(n);
      return v ?? '';
    });
    if (missing.size) throw new ContainerConfigError(`missing value for ${[...missing].sort().join(', ')}`);
  }
  if (!sub) return sub;
  if (sub.startsWith('/'))
    throw new ContainerConfigError(`error SubPath \`${sub}\` must not be an absolute path`);
  if (sub.split('/').includes('..'))
    throw new ContainerConfigError(`unable to provision SubPath \`${sub}\`: must not contain '..'`);
  return sub;
}

export class PodVolumes {
  private readonly pods = new Map<string, PodVolumeState>();

  constructor(private readonly d: VolumeHostDeps) {}

  /** <root-dir>/pods/<uid> */
  podDir(uid: string): string {
    return join(this.d.rootDir, 'pods', uid);
  }

  private state(uid: string): PodVolumeState {
    let s = this.pods.get(uid);
    if (!s) {
      s = { volumes: new Map(), refreshedAt: new Map(), tokens: new Map() };
      this.pods.set(uid, s);
    }
    return s;
  }

  /** Sets up (or refreshes) every volume of the pod; the failures, one per volume. */
  async setUp(pod: any, ctx: DownwardContext): Promise<VolumeFailure[]> {
    const uid: string = pod.metadata.uid;
    const s = this.state(uid);
    const failures: VolumeFailure[] = [];
    for (const vol of pod.spec?.volumes ?? []) {
      try {
        await this.setUpOne(pod, vol, s, ctx);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        failures.push({
          volume: vol.name,
          message,
          ...(s.volumes.has(vol.name) ? { refresh: true } : {}),
          ...(err instanceof VolumeProcessingError ? { processing: true } : {}),
        });
      }
    }
    return failures;
  }

  private async setUpOne(pod: any, vol: any, s: PodVolumeState, ctx: DownwardContext): Promise<void> {
    const plugin = pluginOf(vol);
    if (!plugin) throw new Error(`volume type not supported by this node`);
    if (plugin === 'hostPath') {
      const path = normalize(vol.hostPath.path);
      checkHostPathType(path, vol.hostPath.type);
      s.volumes.set(vol.name, { path, readOnly: false });
      return;
    }
    const group = pod.spec?.securityContext?.fsGroup;
    const fsGroup = group === undefined || group === null ? undefined : Number(group);
    if (plugin === 'claim') {
      await this.setUpClaim(pod, vol, s, fsGroup);
      return;
    }
    const path = join(this.podDir(pod.metadata.uid), 'volumes', PLUGIN_DIRS[plugin], vol.name);
    if (plugin === 'emptyDir') {
      if (s.volumes.has(vol.name)) return;
      mkdirSync(path, { recursive: true });
      let tmpfs = false;
      if (vol.emptyDir.medium === 'Memory') {
        const opts = vol.emptyDir.sizeLimit
          ? ['-o', `size=${milliValue(parseQuantity(String(vol.emptyDir.sizeLimit))) / 1000n}`]
          : [];
        tmpfs = await this.mountTmpfs(path, opts);
      }
      chmodSync(path, 0o777);
      if (fsGroup !== undefined) applyFsGroup(path, fsGroup, false);
      s.volumes.set(vol.name, { path, readOnly: false, tmpfs });
      return;
    }
    const now = this.d.now();
    const last = s.refreshedAt.get(vol.name);
    if (s.volumes.has(vol.name) && last !== undefined && now - last < VOLUME_REFRESH_MS) return;
    const payload = await volumePayload(pod, vol, {
      ...ctx,
      objects: this.d.objects,
      now: this.d.now,
      tokens: s.tokens,
    });
    // Secrets and tokens stay off the disk: the kubelet backs secret and projected volumes with memory.
    if (!s.volumes.has(vol.name) && (plugin === 'secret' || plugin === 'projected')) {
      mkdirSync(path, { recursive: true });
      await this.mountTmpfs(path, []);
    }
    if (writeAtomically(path, payload) && fsGroup !== undefined) applyFsGroup(path, fsGroup, true);
    s.refreshedAt.set(vol.name, now);
    s.volumes.set(vol.name, { path, readOnly: true });
  }

  /**
   * A claim's PV, mounted from its path on the host (bound once, as the kubelet keeps a mounted
   * volume): hostPath with its type check, local only when the path exists and then with the
   * pod's fsGroup unless read-only (the hostPath plugin manages no ownership).
   */
  private async setUpClaim(
    pod: any,
    vol: any,
    s: PodVolumeState,
    fsGroup: number | undefined,
  ): Promise<void> {
    if (s.volumes.has(vol.name)) return;
    const cv = await resolveClaimVolume(pod, vol, this.d.objects);
    const path = normalize(cv.path);
    if (cv.kind === 'hostPath') checkHostPathType(path, cv.hostPathType);
    else {
      if (!existsSync(path)) throw new Error(`path "${path}" does not exist`);
      if (fsGroup !== undefined && !cv.readOnly) applyFsGroup(path, fsGroup, false);
    }
    s.volumes.set(vol.name, {
      path,
      readOnly: cv.readOnly,
      // The local plugin mounts devices (hostPath does not): kubelet lists it as in use.
      ...(cv.kind === 'local' ? { uniqueName: `kubernetes.io/local-volume/${cv.volumeName}` } : {}),
    });
  }

  /** The unique names of the device-mountable volumes set up for pods, sorted. */
  inUse(): string[] {
    const names = new Set<string>();
    for (const s of this.pods.values())
      for (const v of s.volumes.values()) if (v.uniqueName) names.add(v.uniqueName);
    return [...names].sort();
  }

  /** A tmpfs at path (once) when the agent is root and the runtime real; whether one is there. */
  private async mountTmpfs(path: string, opts: string[]): Promise<boolean> {
    if (!this.d.realRuntime || process.getuid?.() !== 0) return false;
    if (!(await mountsBelow(join(path, '..'))).includes(path))
      await run('mount', ['-t', 'tmpfs', ...opts, 'tmpfs', path]);
    return true;
  }

  /** The mounted volume's directory on the node (undefined before setUp did it). */
  path(uid: string, volume: string): string | undefined {
    return this.pods.get(uid)?.volumes.get(volume)?.path;
  }

  /**
   * The bind mounts of one container: its volumeMounts, the pod's managed /etc/hosts (once the pod
   * has addresses, unless the container mounts its own), then its termination message file.
   * env expands subPathExpr. Throws when a volume is not set up or a subPath escapes it.
   */
  mountsFor(
    pod: any,
    container: any,
    env: { name: string; value: string }[],
    attempt: number,
    podIPs: string[] = [],
  ): { containerPath: string; hostPath: string; readOnly: boolean }[] {
    const uid: string = pod.metadata.uid;
    const vols = this.pods.get(uid)?.volumes ?? new Map<string, MountedVolume>();
    const envMap = new Map(env.map((e) => [e.name, e.value]));
    const out: { containerPath: string; hostPath: string; readOnly: boolean }[] = [];
    for (const vm of container.volumeMounts ?? []) {
      const v = vols.get(vm.name);
      if (!v) throw new Error(`cannot find volume "${vm.name}" to mount into container "${container.name}"`);
      let hostPath = v.path;
      const sub = mountSubPath(vm, envMap);
      if (sub) {
        hostPath = join(v.path, sub);
        // The kubelet creates a missing subPath as a directory.
        if (!existsSync(hostPath)) mkdirSync(hostPath, { recursive: true, mode: 0o750 });
      }
      out.push({ containerPath: vm.mountPath, hostPath, readOnly: !!vm.readOnly || v.readOnly });
    }
    if (podIPs.length && !out.some((m) => m.containerPath === '/etc/hosts')) {
      const hosts = ensureHostsFile(join(this.podDir(uid), 'etc-hosts'), pod, podIPs, this.d.clusterDomain);
      out.push({ containerPath: '/etc/hosts', hostPath: hosts, readOnly: false });
    }
    const tm = this.terminationMessageFile(uid, container.name, attempt);
    if (tm)
      out.push({
        containerPath: container.terminationMessagePath || '/dev/termination-log',
        hostPath: tm,
        readOnly: false,
      });
    return out;
  }

  private readonly messageFiles = new Map<string, string>();

  /** A fresh file per container instance for its termination message (<pod dir>/containers/<name>/<id>). */
  private terminationMessageFile(uid: string, container: string, attempt: number): string {
    const key = `${uid}/${container}/${attempt}`;
    let p = this.messageFiles.get(key);
    if (p && existsSync(p)) return p;
    const dir = join(this.podDir(uid), 'containers', container);
    mkdirSync(dir, { recursive: true });
    p = join(dir, randomBytes(4).toString('hex'));
    closeSync(openSync(p, 'w', 0o666));
    chmodSync(p, 0o666);
    this.messageFiles.set(key, p);
    return p;
  }

  /** What the container instance wrote to its termination message file (at most 4096 bytes). */
  terminationMessage(uid: string, container: string, attempt: number): string | undefined {
    const p = this.messageFiles.get(`${uid}/${container}/${attempt}`);
    if (!p) return undefined;
    try {
      const b = readFileSync(p);
      return b.subarray(0, 4096).toString('utf8');
    } catch {
      return undefined;
    }
  }

  /** Unmounts what the agent mounted under the pod's directory and removes it. */
  async tearDown(uid: string): Promise<void> {
    this.pods.delete(uid);
    for (const k of [...this.messageFiles.keys()]) if (k.startsWith(`${uid}/`)) this.messageFiles.delete(k);
    const dir = this.podDir(uid);
    if (!existsSync(dir)) return;
    const mounts = await mountsBelow(dir);
    for (const m of mounts) await run('umount', [m]);
    // Never remove through a mount point that is still there.
    if (mounts.length && (await mountsBelow(dir)).length)
      throw new Error(`volumes of pod ${uid} are still mounted`);
    await rm(dir, { recursive: true, force: true });
  }
}

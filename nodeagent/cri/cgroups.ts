// Pod cgroups the runtime leaves behind: runc creates a pod's cgroup (the
// sandbox's cgroup parent) in every hierarchy but nobody removes it when the
// pod goes, so the agent does, as kubelet's pod container manager does. With
// the fs calls on libuv's threads: a cgroup rmdir takes the kernel milliseconds,
// and 30 pods torn down at once blocked the agent's event loop for ~2 s while
// the next pods were starting.
import { readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';

let found: Promise<string[]> | undefined;

/** Every hierarchy to look in: the v1 controllers' mounts, or the v2 root (read once: they stay). */
function hierarchies(): Promise<string[]> {
  found ??= readdir(CGROUP_ROOT, { withFileTypes: true }).then(
    (entries) =>
      entries.some((e) => e.name === 'cgroup.controllers')
        ? [CGROUP_ROOT]
        : entries.filter((e) => e.isDirectory()).map((e) => join(CGROUP_ROOT, e.name)),
    () => [],
  );
  return found;
}

/** Removes the pod's (empty) cgroup from every hierarchy; best effort. */
export async function removePodCgroup(parent: string | undefined): Promise<void> {
  if (!parent || !/\/pod[0-9a-f-]+$/.test(parent)) return;
  await Promise.all(
    (await hierarchies()).map(async (h) => {
      const dir = join(h, parent);
      try {
        // Children first (runc may have left the containers' own cgroups).
        for (const e of await readdir(dir, { withFileTypes: true }))
          if (e.isDirectory()) await rmdir(join(dir, e.name));
        await rmdir(dir);
      } catch {
        // absent, or still in use: nothing to do
      }
    }),
  );
}

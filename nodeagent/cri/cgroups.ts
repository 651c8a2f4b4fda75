// Pod cgroups the runtime leaves behind: runc creates a pod's cgroup (the
// sandbox's cgroup parent) in every hierarchy but nobody removes it when the
// pod goes, so the agent does, as kubelet's pod container manager does.
import { readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Every hierarchy to look in: the v1 controllers' mounts, or the v2 root. */
function hierarchies(): string[] {
  try {
    const entries = readdirSync(CGROUP_ROOT, { withFileTypes: true });
    if (entries.some((e) => e.name === 'cgroup.controllers')) return [CGROUP_ROOT];
    return entries.filter((e) => e.isDirectory()).map((e) => join(CGROUP_ROOT, e.name));
  } catch {
    return [];
  }
}

/** Removes the pod's (empty) cgroup from every hierarchy; best effort. */
export function removePodCgroup(parent: string | undefined): void {
  if (!parent || !/\/pod[0-9a-f-]+$/.test(parent)) return;
  for (const h of hierarchies()) {
    const dir = join(h, parent);
    try {
      // Children first (runc may have left the containers' own cgroups).
      for (const e of readdirSync(dir, { withFileTypes: true }))
        if (e.isDirectory()) rmdirSync(join(dir, e.name));
      rmdirSync(dir);
    } catch {
      // absent, or still in use: nothing to do
    }
  }
}

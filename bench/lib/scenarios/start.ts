// Cold starts: start→ready on an empty data dir, each on a fresh one.
import { join } from 'node:path';
import { removeDir, startApiserver } from '../procs';
import type { Ctx } from './context';
import { etcdArgs } from './instance';

export async function coldStarts(ctx: Ctx): Promise<number[]> {
  const runs: number[] = [];
  for (let i = 0; i < ctx.opts.starts; i++) {
    const dataDir = join(ctx.root, `cold-${i}`);
    const s = await startApiserver({
      dir: ctx.root,
      dataDir,
      certDir: ctx.certDir,
      args: etcdArgs(ctx, `/cold-${i}-${Date.now()}`),
      label: `cold-${i}`,
    });
    runs.push(s.readyMs);
    await s.stop();
    removeDir(dataDir);
  }
  ctx.log(`start→ready ${runs.map((r) => r.toFixed(0)).join(', ')} ms`);
  if (ctx.opts.profileDir) {
    const name = `${ctx.backend}-start.cpuprofile`;
    const dataDir = join(ctx.root, 'cold-profile');
    const s = await startApiserver({
      dir: ctx.root,
      dataDir,
      certDir: ctx.certDir,
      args: etcdArgs(ctx, `/cold-profile-${Date.now()}`),
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${ctx.opts.profileDir}`, `--cpu-prof-name=${name}`],
      label: 'cold-profile',
    });
    await s.stop();
    removeDir(dataDir);
    (ctx.result.profiles ??= []).push(join(ctx.opts.profileDir, name));
  }
  return runs;
}

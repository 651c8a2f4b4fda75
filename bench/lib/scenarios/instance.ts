// An apiserver process the scenarios run against, restartable on its data.
import { join } from 'node:path';
import { Api } from '../api';
import { type Apiserver, memDetail, type MemDetail, rssBytes, startApiserver } from '../procs';
import type { Ctx } from './context';

export function etcdArgs(ctx: Ctx, prefix: string): string[] {
  return ctx.etcd ? ['--etcd-servers', ctx.etcd.endpoint, '--etcd-prefix', prefix] : [];
}

const BOOTSTRAP_EXCLUDED = '/readyz?exclude=poststarthook/bootstrap-controller';

/** One apiserver on a data dir (or etcd prefix) that survives restarts. */
export class Instance {
  server!: Apiserver;
  api!: Api;
  readonly dataDir: string;
  /** With --profile: the file the running server's CPU profile is written to when it stops. */
  profileFile?: string;
  private readonly prefix: string;
  private phaseName = '';
  private starts = 0;

  constructor(
    private readonly ctx: Ctx,
    readonly label: string,
  ) {
    this.dataDir = join(ctx.root, `data-${label}`);
    this.prefix = `/bench-${label}-${Date.now()}`;
  }

  /** Starts the apiserver; when profiling, under a CPU profile named after the phase. */
  async start(phase: string): Promise<Apiserver> {
    this.phaseName = phase;
    const dir = this.ctx.opts.profileDir;
    const name = `${this.ctx.backend}-${this.label}-${phase}.cpuprofile`;
    const restart = this.starts++ > 0;
    this.server = await startApiserver({
      dir: this.ctx.root,
      dataDir: this.dataDir,
      certDir: this.ctx.certDir,
      args: etcdArgs(this.ctx, this.prefix),
      nodeArgs: dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`] : [],
      label: `${this.label}-${phase}`,
      // On existing data a post-start hook may fail for good; go on with a server that serves.
      ...(restart ? { alsoProbe: BOOTSTRAP_EXCLUDED, tolerateNotReady: true } : {}),
    });
    if (this.server.notReady) {
      const n = `${this.label}/${phase}: /readyz never passed after a restart on existing data: ${this.server.notReady}`;
      if (!this.ctx.result.notes.some((x) => x.startsWith(`${this.label}/`)))
        this.ctx.result.notes.push(n.slice(0, 1500));
      this.ctx.log(n.slice(0, 600));
    }
    if (dir) {
      this.profileFile = join(dir, name);
      (this.ctx.result.profiles ??= []).push(this.profileFile);
    }
    this.api = new Api(this.server.target);
    return this.server;
  }

  /** With --profile, restarts so that the next scenario gets a profile of its own. */
  async phase(name: string): Promise<void> {
    if (!this.ctx.opts.profileDir || this.phaseName === name) return;
    await this.stop();
    await this.start(name);
  }

  async stop(): Promise<void> {
    await this.api?.close();
    await this.server?.stop();
  }

  rss(): number {
    return rssBytes(this.server.pid);
  }

  mem(): MemDetail {
    return memDetail(this.server.pid);
  }

  /** V8 heap in use, from the apiserver's /metrics (nodejs_heap_used_bytes). */
  async heap(): Promise<number | undefined> {
    const r = await this.api.call('GET', '/metrics', undefined, 'text/plain');
    const m = /^nodejs_heap_used_bytes(?:\{[^}]*\})?\s+([0-9.e+]+)/m.exec(r.body.toString('utf8'));
    return m ? Number(m[1]) : undefined;
  }

  pids(): number[] {
    return [this.server.pid, ...(this.ctx.etcd ? [this.ctx.etcd.pid] : [])];
  }
}

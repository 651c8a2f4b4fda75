// containerd alone, for the pod-start bench: a private containerd (the runtime
// tests' one: the same CNI bridge and host-local config as a node's, the offline
// busybox and pause) driven straight through tkube's CRI client with N pods at
// once — RunPodSandbox, CreateContainer, StartContainer each, with the sandbox
// and container configs the agent builds — each pod timed from its
// RunPodSandbox call to its StartContainer returning. What the agent adds on
// top is the difference from the tkube rows.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { criContainerConfig } from '../../nodeagent/cri/container-config';
import { podSandboxConfig } from '../../nodeagent/cri/pod-config';
import { startTestContainerd, type TestContainerd } from '../../nodeagent/cri/testing';
import { CriClient } from '../../shared/cri/client';
import { tempDir } from './procs';

/** When each call of one pod returned, in ms from its RunPodSandbox call. */
export interface AloneSteps {
  sandbox: number;
  created: number;
  started: number;
}

export class ContainerdAlone {
  private seq = 0;

  private constructor(
    private readonly ctd: TestContainerd,
    private readonly client: CriClient,
    private readonly logs: string,
    private readonly imageID: string,
  ) {}

  static async start(): Promise<ContainerdAlone> {
    const ctd = await startTestContainerd();
    const client = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 120_000 });
    // The agent creates containers by image id (its image list), not by name.
    const img = await client.call('ImageStatus', { image: { image: 'busybox' } });
    if (!img.image?.id) throw new Error('busybox is not in the private containerd');
    return new ContainerdAlone(ctd, client, tempDir('bench-pods-alone-logs'), img.image.id);
  }

  /** n pods at once; each one's steps (its latency is `started`), then every sandbox stopped and removed. */
  async round(n: number, pod: (name: string) => any): Promise<AloneSteps[]> {
    const r = this.seq++;
    const sandboxes: string[] = [];
    const out = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const p = pod(`alone-${r}-${i}`);
        p.metadata = { ...p.metadata, namespace: 'default', uid: randomUUID() };
        const logDir = join(this.logs, p.metadata.uid);
        mkdirSync(logDir, { recursive: true });
        const config = podSandboxConfig(
          p,
          0,
          logDir,
          { cgroupRoot: '' },
          { servers: [], searches: [], options: [] },
        );
        const t0 = performance.now();
        const { podSandboxId } = await this.client.call('RunPodSandbox', { config, runtimeHandler: '' });
        sandboxes.push(podSandboxId);
        const sandbox = performance.now() - t0;
        const c = p.spec.containers[0];
        const { containerId } = await this.client.call('CreateContainer', {
          podSandboxId,
          config: criContainerConfig({
            pod: p,
            container: c,
            kind: 'regular',
            attempt: 0,
            image: this.imageID,
            logPath: `${c.name}/0.log`,
            memoryCapacityBytes: 0,
          }),
          sandboxConfig: config,
        });
        const created = performance.now() - t0;
        await this.client.call('StartContainer', { containerId });
        return { sandbox, created, started: performance.now() - t0 };
      }),
    );
    await Promise.all(
      sandboxes.map(async (id) => {
        await this.client.call('StopPodSandbox', { podSandboxId: id });
        await this.client.call('RemovePodSandbox', { podSandboxId: id });
      }),
    );
    return out;
  }

  /** The private containerd's PID (its CPU time). */
  get pid(): number {
    return this.ctd.pid;
  }

  async stop(): Promise<void> {
    this.client.close();
    await this.ctd.cleanup();
    rmSync(this.logs, { recursive: true, force: true });
  }
}

// Containers' resource use through the CRI (ListContainerStats): CPU time and
// rate, memory working set, usage and RSS, writable layer — what cAdvisor
// gives kubelet — kept from the last reading for the stats endpoints.
import type { Clock } from '../../shared/client/clock';
import type { ContainerUsage } from '../pods/runtime';
import type { CriClient } from '../../shared/cri/client';
import { nsToMs } from './state';

export class ContainerStats {
  /** By container id (containerd://...): the last reading. */
  private readonly usage = new Map<string, ContainerUsage>();

  constructor(
    private readonly client: CriClient,
    private readonly scheme: string,
    private readonly clock: Clock,
  ) {}

  get(id: string): ContainerUsage | undefined {
    return this.usage.get(id);
  }

  async read(): Promise<void> {
    const res = await this.client.call('ListContainerStats', {});
    const seen = new Set<string>();
    const v = (x: any) => Number(x?.value ?? 0);
    for (const st of res.stats) {
      const id = `${this.scheme}://${st.attributes?.id}`;
      seen.add(id);
      const time = nsToMs(st.cpu?.timestamp) ?? this.clock.now();
      const cpu = v(st.cpu?.usageCoreNanoSeconds);
      const prev = this.usage.get(id);
      // containerd 1.6 leaves usage_nano_cores empty on its first readings: the rate since the last one.
      let nanoCores = v(st.cpu?.usageNanoCores);
      if (!nanoCores && prev && time > prev.time)
        nanoCores = ((cpu - prev.cpuCoreNanoSeconds) * 1e6) / (time - prev.time);
      this.usage.set(id, {
        time,
        cpuCoreNanoSeconds: cpu,
        cpuNanoCores: Math.max(0, Math.round(nanoCores)),
        memoryWorkingSetBytes: v(st.memory?.workingSetBytes),
        memoryUsageBytes: v(st.memory?.usageBytes),
        memoryRSSBytes: v(st.memory?.rssBytes),
        rootfsUsedBytes: v(st.writableLayer?.usedBytes),
      });
    }
    for (const id of this.usage.keys()) if (!seen.has(id)) this.usage.delete(id);
  }
}

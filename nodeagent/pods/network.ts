// Pod sandboxes and addresses. With a runtime that has sandboxes (CRI), the
// sandbox is made before the first container and its IP comes from the
// runtime's network (CNI); a failed sandbox is kubelet's
// FailedCreatePodSandBox, retried later. With the fake runtime, host-network
// pods take the node's address and the others get one from the pod CIDR
// (ipam.ts) once the network is ready, keep the one the API already shows
// after an agent restart, and give it back when they finish.
import { logger } from '../../shared/log';
import { podResolverConfig, readHostResolvConf, type ClusterDNSSettings, type ResolverConfig } from './dns';
import { PodIPAllocator } from './ipam';
import type { PodEvents } from './pod-events';
import { isTerminalPhase, type PodRecord } from './records';
import type { ContainerRuntime } from './runtime';

const log = logger('nodeagent/pods');

/** Used when neither --pod-cidr nor the Node's spec.podCIDR gives a range (containerd's default bridge). */
export const FALLBACK_POD_CIDR = '10.88.0.0/16';

export class PodNetwork {
  private ipam?: PodIPAllocator;

  constructor(
    private readonly d: {
      nodeIPs(): string[];
      /** --pod-cidr or the Node's spec.podCIDR. */
      podCIDR(): string | undefined;
      /** False until pods can get addresses (the Node, which may carry the pod CIDR, is known). */
      networkReady?(): boolean;
      runtime: ContainerRuntime;
      events: PodEvents;
      /** --cluster-dns, --cluster-domain, --resolv-conf: the sandboxes' resolv.conf (dns.ts). */
      dns: ClusterDNSSettings;
      /** A Warning event on the Node (MissingClusterDNS). */
      nodeWarning(reason: string, message: string): void;
    },
  ) {}

  /** Made on first use once the network is ready: the pod CIDR may come with the Node. */
  private allocator(): PodIPAllocator | undefined {
    if (this.ipam) return this.ipam;
    if (this.d.networkReady && !this.d.networkReady()) return undefined;
    const cidr = this.d.podCIDR() || FALLBACK_POD_CIDR;
    this.ipam = new PodIPAllocator(cidr);
    log.info('pod addresses from', { cidr, gateway: this.ipam.gateway() });
    return this.ipam;
  }

  /** Pods that already have an address (an agent restart) keep it: reserve those before handing out new ones. */
  reserveKnownAddresses(recs: PodRecord[]): void {
    const ipam = this.allocator();
    if (!ipam) return;
    for (const r of recs) {
      const ip = r.pod.status?.podIP;
      if (!ip || r.pod.spec?.hostNetwork || isTerminalPhase(r.pod.status?.phase)) continue;
      if (ipam.reserve(r.uid, ip)) r.podIPs = [ip];
    }
  }

  /**
   * The pod's sandbox and addresses: ready, waiting (the network is not ready yet), or failed
   * (the runtime could not make the sandbox; the event says why).
   */
  async ensure(rec: PodRecord): Promise<'ready' | 'waiting' | 'failed'> {
    const runtime = this.d.runtime;
    if (runtime.ensureSandbox) {
      if (this.d.networkReady && !this.d.networkReady()) return 'waiting';
      try {
        const sb = await runtime.ensureSandbox(rec.pod, () => this.resolverConfig(rec));
        rec.podIPs = sb.podIPs.length
          ? sb.podIPs
          : rec.pod.spec?.hostNetwork
            ? this.d.nodeIPs().slice(0, 1)
            : [];
        return 'ready';
      } catch (err) {
        this.d.events.emit(
          rec,
          undefined,
          'Warning',
          'FailedCreatePodSandBox',
          'CreatePodSandbox',
          `Failed to create pod sandbox: ${(err as Error).message}`,
        );
        return 'failed';
      }
    }
    if (rec.podIPs.length) return 'ready';
    if (rec.pod.spec?.hostNetwork) {
      rec.podIPs = this.d.nodeIPs().slice(0, 1);
      return 'ready';
    }
    const ipam = this.allocator();
    if (!ipam) return 'waiting';
    const known = rec.pod.status?.podIP;
    if (known && ipam.reserve(rec.uid, known)) rec.podIPs = [known];
    else rec.podIPs = [ipam.allocate(rec.uid)];
    return 'ready';
  }

  /** The pod's resolv.conf as kubelet forms it, its warnings recorded as events; throws when --resolv-conf cannot be read. */
  private resolverConfig(rec: PodRecord): ResolverConfig {
    const { config, warnings } = podResolverConfig(
      rec.pod,
      this.d.dns,
      readHostResolvConf(this.d.dns.resolvConf),
      this.d.nodeIPs(),
    );
    for (const w of warnings)
      if (w.on === 'node') this.d.nodeWarning(w.reason, w.message);
      else this.d.events.emit(rec, undefined, 'Warning', w.reason, 'CreatePodSandbox', w.message);
    return config;
  }

  /** The pod finished: its sandbox stops (its address is given back); exited containers stay. */
  async release(rec: PodRecord): Promise<void> {
    this.ipam?.release(rec.uid);
    await this.d.runtime.stopSandbox?.(rec.uid);
  }

  /** The pod is gone: its sandbox is removed with whatever is left in it. */
  async remove(rec: PodRecord): Promise<void> {
    this.ipam?.release(rec.uid);
    await this.d.runtime.removeSandbox?.(rec.uid);
  }
}

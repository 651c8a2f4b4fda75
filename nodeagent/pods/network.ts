// Pod addresses: host-network pods take the node's address; the others get one
// from the pod CIDR (ipam.ts) once the network is ready, keep the one the API
// already shows after an agent restart, and give it back when they finish.
import { logger } from '../../shared/log';
import { PodIPAllocator } from './ipam';
import { isTerminalPhase, type PodRecord } from './records';

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

  /** The pod's addresses; false while the network is not ready. */
  ensure(rec: PodRecord): boolean {
    if (rec.podIPs.length) return true;
    if (rec.pod.spec?.hostNetwork) {
      rec.podIPs = this.d.nodeIPs().slice(0, 1);
      return true;
    }
    const ipam = this.allocator();
    if (!ipam) return false;
    const known = rec.pod.status?.podIP;
    if (known && ipam.reserve(rec.uid, known)) rec.podIPs = [known];
    else rec.podIPs = [ipam.allocate(rec.uid)];
    return true;
  }

  release(rec: PodRecord): void {
    this.ipam?.release(rec.uid);
  }
}

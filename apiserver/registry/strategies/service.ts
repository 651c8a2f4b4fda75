// Services: ClusterIP allocation from --service-cluster-ip-range (as
// networking.k8s.io/v1 IPAddress objects, created only if absent, so several
// apiservers never hand out one address twice) and NodePort allocation from
// --service-node-port-range (create-if-absent keys in the store).
import { invalid, isStatusError } from '../../../shared/api/status';
import type { FieldError } from '../../../shared/api/field-errors';
import type { Storage } from '../../storage/interface';
import { isStorageError } from '../../storage/errors';
import type { Registry, ResourceBehaviour } from '../registry';
import { systemContext, type RequestContext } from '../context';
import { formatIPv4, parseCIDR, parseIPv4, type CIDR } from '../../server/service-ip';

export interface ServiceAllocatorOptions {
  storage: Storage;
  registry: () => Registry;
  etcdPrefix: string;
  serviceCIDR: string;
  nodePortRange: string;
}

const GR = { group: '', kind: 'Service' };

/** The size of the lower part of a range of `size` addresses that dynamic allocation takes last (calculateRangeOffset). */
function staticBand(size: number): number {
  if (size <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / 16)), 256);
}

export class ServiceAllocator {
  private readonly cidr: CIDR;
  private readonly portBase: number;
  private readonly portSize: number;

  constructor(private readonly o: ServiceAllocatorOptions) {
    this.cidr = parseCIDR(o.serviceCIDR.split(',')[0].trim());
    const m = /^(\d+)[-+](\d+)$/.exec(o.nodePortRange)!;
    this.portBase = Number(m[1]);
    this.portSize = o.nodePortRange.includes('+') ? Number(m[2]) + 1 : Number(m[2]) - Number(m[1]) + 1;
  }

  private get ipAddresses() {
    return this.o.registry().preferred('networking.k8s.io', 'ipaddresses');
  }

  private inRange(ip: string): boolean {
    try {
      const n = parseIPv4(ip);
      return n > this.cidr.base && n < this.cidr.base + this.cidr.size - 1;
    } catch {
      return false;
    }
  }

  /** Reserves ip for the service; false when taken. */
  private async reserveIP(ip: string, svc: any): Promise<boolean> {
    const s = this.ipAddresses;
    if (!s) return true;
    try {
      await s.store.create(systemContext(), {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'IPAddress',
        metadata: {
          name: ip,
          labels: {
            'ipaddress.kubernetes.io/ip-family': 'IPv4',
            'ipaddress.kubernetes.io/managed-by': 'ipallocator.k8s.io',
          },
        },
        spec: {
          parentRef: {
            group: '',
            resource: 'services',
            namespace: svc.metadata.namespace,
            name: svc.metadata.name,
          },
        },
      });
      return true;
    } catch (err) {
      if (isStatusError(err, 'AlreadyExists')) return this.heldBy(s, ip, svc);
      throw err;
    }
  }

  /** An address already reserved for this same service (a retried or interrupted create) is its own. */
  private async heldBy(
    s: NonNullable<ServiceAllocator['ipAddresses']>,
    ip: string,
    svc: any,
  ): Promise<boolean> {
    try {
      const ref = (await s.store.reader.get(systemContext(), ip)).obj.spec?.parentRef;
      return (
        ref?.resource === 'services' &&
        ref.namespace === svc.metadata.namespace &&
        ref.name === svc.metadata.name
      );
    } catch {
      return false;
    }
  }

  private async releaseIP(ip: string | undefined): Promise<void> {
    const s = this.ipAddresses;
    if (!ip || ip === 'None' || !s) return;
    await s.store.delete(systemContext(), ip).catch(() => undefined);
  }

  private portKey(port: number): string {
    return `${this.o.etcdPrefix}/ranges/servicenodeports/${port}`;
  }

  private async reservePort(port: number, svc: any): Promise<boolean> {
    try {
      await this.o.storage.create(
        this.portKey(port),
        Buffer.from(`${svc.metadata.namespace}/${svc.metadata.name}`),
      );
      return true;
    } catch (err) {
      if (isStorageError(err, 'KeyExists')) return false;
      throw err;
    }
  }

  private async releasePort(port: number): Promise<void> {
    await this.o.storage.delete(this.portKey(port)).catch(() => undefined);
  }

  private fail(svc: any, errs: FieldError[]): never {
    throw invalid(GR, svc.metadata?.name ?? '', errs);
  }

  /** Allocates what a new (or changed) service needs; dry-run picks values without reserving them. */
  async allocate(svc: any, old: any | null, ctx: RequestContext): Promise<void> {
    const before = {
      ip: svc.spec?.clusterIP as string | undefined,
      ports: new Set((svc.spec?.ports ?? []).map((p: any) => p.nodePort)),
    };
    try {
      await this.allocateAll(svc, old, ctx);
    } catch (err) {
      // Undo what this call reserved, so a rejected write leaks nothing.
      if (!ctx.dryRun) {
        if (svc.spec?.clusterIP && svc.spec.clusterIP !== old?.spec?.clusterIP && !before.ip)
          await this.releaseIP(svc.spec.clusterIP);
        for (const p of svc.spec?.ports ?? [])
          if (p.nodePort && !before.ports.has(p.nodePort)) await this.releasePort(p.nodePort);
      }
      throw err;
    }
  }

  private async allocateAll(svc: any, old: any | null, ctx: RequestContext): Promise<void> {
    const spec = (svc.spec ??= {});
    const type = spec.type ?? 'ClusterIP';
    if (type === 'ExternalName') {
      if (old?.spec?.clusterIP && old.spec.clusterIP !== 'None') await this.releaseIP(old.spec.clusterIP);
      delete spec.clusterIP;
      delete spec.clusterIPs;
    } else if (!old?.spec?.clusterIP || old.spec.type === 'ExternalName') {
      await this.allocateClusterIP(svc, ctx);
    }
    const wantsNodePorts =
      type === 'NodePort' || (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
    const oldPorts = new Set<number>((old?.spec?.ports ?? []).map((p: any) => p.nodePort).filter(Boolean));
    if (wantsNodePorts) {
      for (let i = 0; i < (spec.ports ?? []).length; i++) {
        const p = spec.ports[i];
        if (p.nodePort && oldPorts.has(p.nodePort)) {
          oldPorts.delete(p.nodePort);
          continue;
        }
        if (p.nodePort) {
          if (p.nodePort < this.portBase || p.nodePort >= this.portBase + this.portSize) {
            this.fail(svc, [
              {
                type: 'FieldValueInvalid',
                field: `spec.ports[${i}].nodePort`,
                badValue: p.nodePort,
                detail: `provided port is not in the valid range. The range of valid ports is ${this.o.nodePortRange}`,
              },
            ]);
          }
          if (!ctx.dryRun && !(await this.reservePort(p.nodePort, svc))) {
            this.fail(svc, [
              {
                type: 'FieldValueInvalid',
                field: `spec.ports[${i}].nodePort`,
                badValue: p.nodePort,
                detail: 'provided port is already allocated',
              },
            ]);
          }
        } else {
          p.nodePort = await this.pickPort(svc, ctx);
        }
      }
    } else {
      for (const p of spec.ports ?? []) delete p.nodePort;
    }
    if (!ctx.dryRun) for (const port of oldPorts) await this.releasePort(port);
  }

  private async allocateClusterIP(svc: any, ctx: RequestContext): Promise<void> {
    const spec = svc.spec;
    const requested = spec.clusterIP ?? spec.clusterIPs?.[0];
    if (requested === 'None') {
      spec.clusterIP = 'None';
      spec.clusterIPs = ['None'];
      return;
    }
    let ip: string;
    if (requested) {
      if (!this.inRange(requested)) {
        this.fail(svc, [
          {
            type: 'FieldValueInvalid',
            field: 'spec.clusterIPs',
            badValue: [requested],
            detail: `failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${this.o.serviceCIDR}`,
          },
        ]);
      }
      if (!ctx.dryRun && !(await this.reserveIP(requested, svc))) {
        this.fail(svc, [
          {
            type: 'FieldValueInvalid',
            field: 'spec.clusterIPs',
            badValue: [requested],
            detail: `failed to allocate IP ${requested}: provided IP is already allocated`,
          },
        ]);
      }
      ip = requested;
    } else {
      ip = await this.pickIP(svc, ctx);
    }
    spec.clusterIP = ip;
    spec.clusterIPs = [ip];
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
  }

  /**
   * A free address, dynamic allocation as kube-apiserver's (KEP-3070): from the upper part of
   * the range first, the lower part (min(max(16, size/16), 256) addresses, for static
   * ClusterIPs such as kube-dns's .10) only once the upper is full; each scanned from a random
   * start. .1 is the kubernetes Service's.
   */
  private async pickIP(svc: any, ctx: RequestContext): Promise<string> {
    const first = this.cidr.base + 1;
    const last = this.cidr.base + this.cidr.size - 2;
    const band = staticBand(this.cidr.size);
    for (const [lo, hi] of [
      [first + band, last],
      [first + 1, first + band - 1],
    ]) {
      const n = hi - lo + 1;
      const start = Math.floor(Math.random() * Math.max(n, 0));
      for (let i = 0; i < n; i++) {
        const ip = formatIPv4(lo + ((start + i) % n));
        if (ctx.dryRun ? !(await this.ipTaken(ip)) : await this.reserveIP(ip, svc)) return ip;
      }
    }
    return this.fail(svc, [
      {
        type: 'FieldValueInvalid',
        field: 'spec.clusterIPs',
        badValue: [],
        detail: 'failed to allocate a serviceIP: range is full',
      },
    ]);
  }

  private async ipTaken(ip: string): Promise<boolean> {
    const s = this.ipAddresses;
    if (!s) return false;
    try {
      await s.store.reader.get(systemContext(), ip);
      return true;
    } catch {
      return false;
    }
  }

  private async pickPort(svc: any, ctx: RequestContext): Promise<number> {
    const start = Math.floor(Math.random() * this.portSize);
    for (let i = 0; i < this.portSize; i++) {
      const port = this.portBase + ((start + i) % this.portSize);
      if (ctx.dryRun) {
        if (!(await this.o.storage.get(this.portKey(port))).kv) return port;
      } else if (await this.reservePort(port, svc)) return port;
    }
    return this.fail(svc, [
      {
        type: 'FieldValueInvalid',
        field: 'spec.ports',
        badValue: [],
        detail: 'failed to allocate a nodePort: range is full',
      },
    ]);
  }

  async release(svc: any): Promise<void> {
    await this.releaseIP(svc.spec?.clusterIP);
    for (const p of svc.spec?.ports ?? []) if (p.nodePort) await this.releasePort(p.nodePort);
  }
}

export function serviceBehaviour(alloc: ServiceAllocator): ResourceBehaviour {
  return {
    strategy: {
      allowCreateOnUpdate: true,
      prepareForCreate(svc) {
        svc.status = { loadBalancer: {} };
      },
      beforeCreate: (svc, ctx) => alloc.allocate(svc, null, ctx),
      afterCreateFailed: (svc) => alloc.release(svc),
      async beforeUpdate(svc, old, ctx) {
        await alloc.allocate(svc, old, ctx);
      },
      prepareForUpdate(svc, old) {
        // The allocated address stays unless the type gives it up.
        if (svc.spec && old.spec?.clusterIP && !svc.spec.clusterIP && svc.spec.type !== 'ExternalName') {
          svc.spec.clusterIP = old.spec.clusterIP;
          svc.spec.clusterIPs = old.spec.clusterIPs;
          svc.spec.ipFamilies ??= old.spec.ipFamilies;
          svc.spec.ipFamilyPolicy ??= old.spec.ipFamilyPolicy;
        }
        // Keep node ports of unchanged ports when the client did not send them.
        for (const p of svc.spec?.ports ?? []) {
          if (p.nodePort) continue;
          const prev = (old.spec?.ports ?? []).find(
            (q: any) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'),
          );
          if (prev?.nodePort && svc.spec.type !== 'ClusterIP') p.nodePort = prev.nodePort;
        }
      },
      validateUpdate(svc, old) {
        const errs: FieldError[] = [];
        const was = old.spec?.clusterIP;
        const now = svc.spec?.clusterIP;
        if (
          was &&
          now &&
          was !== now &&
          old.spec?.type !== 'ExternalName' &&
          svc.spec?.type !== 'ExternalName'
        ) {
          errs.push({
            type: 'FieldValueInvalid',
            field: 'spec.clusterIPs[0]',
            badValue: now,
            detail: 'may not change once set',
          });
        }
        return errs;
      },
      afterDelete: (svc) => alloc.release(svc),
    },
  };
}

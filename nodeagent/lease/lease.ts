// The node heartbeat: a Lease kube-node-lease/<node> (holderIdentity = node,
// leaseDurationSeconds = nodeLeaseDurationSeconds, 40 by default) renewed
// every quarter of its duration (10 s), owned by the Node so it goes when the
// Node does — the kubelet's node lease controller.
import type { Client } from '../../shared/client/client';
import type { ResourceClient } from '../../shared/client/resource';
import { realClock, type Clock } from '../../shared/client/clock';
import { isConflict, isNotFound } from '../../shared/client/errors';
import type { KubeObject } from '../../shared/client/types';
import { formatMicroTime } from '../../shared/leaderelection/resourcelock';
import { logger } from '../../shared/log';
import { NODE_LEASE_NAMESPACE } from '../../shared/api/nodes';

const log = logger('nodeagent/lease');

/** The kubelet renews at this fraction of the lease duration. */
export const RENEW_INTERVAL_FRACTION = 0.25;
const RETRY = { initialMs: 200, maxMs: 7000 };
const MAX_UPDATE_RETRIES = 5;

export interface NodeLeaseOptions {
  client: Client;
  nodeName: string;
  leaseDurationSeconds: number;
  /** The Node's uid once known (the owner reference is added then). */
  nodeUID(): string | undefined;
  clock?: Clock;
}

export class NodeLeaseController {
  private readonly leases: ResourceClient;
  private readonly clock: Clock;
  private latest?: KubeObject;
  /** Renewals written (for tests and metrics). */
  renewals = 0;

  constructor(private readonly o: NodeLeaseOptions) {
    this.clock = o.clock ?? realClock;
    this.leases = o.client.resource('leases.coordination.k8s.io').namespace(NODE_LEASE_NAMESPACE);
  }

  get renewIntervalMs(): number {
    return this.o.leaseDurationSeconds * 1000 * RENEW_INTERVAL_FRACTION;
  }

  private ownerRefs(): any[] | undefined {
    const uid = this.o.nodeUID();
    return uid ? [{ apiVersion: 'v1', kind: 'Node', name: this.o.nodeName, uid }] : undefined;
  }

  private desired(base?: KubeObject): KubeObject {
    const owners = this.ownerRefs();
    const meta = { ...(base?.metadata ?? { name: this.o.nodeName, namespace: NODE_LEASE_NAMESPACE }) };
    if (owners && !(meta.ownerReferences ?? []).some((r: any) => r.uid === owners[0].uid))
      meta.ownerReferences = owners;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: meta,
      spec: {
        ...(base?.spec ?? {}),
        holderIdentity: this.o.nodeName,
        leaseDurationSeconds: this.o.leaseDurationSeconds,
        renewTime: formatMicroTime(this.clock.now()),
      },
    };
  }

  /** One renewal: update the lease we know, or get/create it. */
  async renew(): Promise<KubeObject> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!this.latest) {
          try {
            this.latest = await this.leases.get(this.o.nodeName);
          } catch (err) {
            if (!isNotFound(err)) throw err;
            this.latest = await this.leases.create(this.desired());
            this.renewals++;
            return this.latest;
          }
        }
        this.latest = await this.leases.update(this.desired(this.latest));
        this.renewals++;
        return this.latest;
      } catch (err) {
        // A stale copy (someone else wrote it) or a lease deleted under us: read again.
        if ((isConflict(err) || isNotFound(err)) && attempt < MAX_UPDATE_RETRIES) {
          this.latest = undefined;
          continue;
        }
        throw err;
      }
    }
  }

  private retryMs = RETRY.initialMs;

  /**
   * One turn of the renew loop: renews, and says how long to wait before the next turn —
   * the renew interval, or after a failure a backoff doubling from 200 ms to 7 s.
   */
  async renewTurn(): Promise<number> {
    try {
      await this.renew();
      this.retryMs = RETRY.initialMs;
      return this.renewIntervalMs;
    } catch (err) {
      const delay = this.retryMs;
      log.error('failed to renew the node lease, will retry', {
        node: this.o.nodeName,
        err: String(err),
        retryMs: delay,
      });
      this.latest = undefined;
      this.retryMs = Math.min(delay * 2, RETRY.maxMs);
      return delay;
    }
  }

  /** Renews every renew interval until signal aborts; failures retry with backoff. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) await this.clock.sleep(await this.renewTurn(), signal);
  }
}

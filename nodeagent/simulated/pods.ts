// The fake lifecycle of the pods bound to simulated nodes: one pod informer
// for all of them; a pod bound to one is reported Running and Ready at once
// (an IP from its node's pod CIDR, every container running, init containers
// completed), and a pod being deleted is deleted for good, as a kubelet does
// once its containers stopped (grace period 0, the pod's uid as precondition).
import type { Client } from '../../shared/client/client';
import { isConflict, isNotFound } from '../../shared/client';
import type { KubeObject } from '../../shared/client/types';
import {
  RateLimitingQueue,
  runWorkers,
  unwrapTombstone,
  type SharedIndexInformer,
  type SharedInformerFactory,
} from '../../shared/informers';
import { logger } from '../../shared/log';
import { rfc3339 } from '../status/node';
import type { SimulatedNode } from './nodes';

const log = logger('simulated-nodes');

/** Pod addresses of one node: .2 to .254 of its /24, reused once freed. */
class PodIPs {
  private readonly byPod = new Map<string, string>();
  private readonly used = new Set<number>();
  private next = 2;

  constructor(private readonly prefix: string) {}

  /** The pod's address: the one it reports already (a restarted simulator), else a free one. */
  assign(uid: string, current?: string): string {
    const have = this.byPod.get(uid);
    if (have) return have;
    let host: number | undefined;
    if (current?.startsWith(this.prefix)) host = Number(current.slice(this.prefix.length));
    for (let tries = 0; host === undefined && tries < 253; tries++) {
      const h = this.next;
      this.next = this.next >= 254 ? 2 : this.next + 1;
      if (!this.used.has(h)) host = h;
    }
    if (host === undefined) throw new Error(`no free pod IP in ${this.prefix}0/24`);
    this.used.add(host);
    const ip = `${this.prefix}${host}`;
    this.byPod.set(uid, ip);
    return ip;
  }

  release(uid: string): void {
    const ip = this.byPod.get(uid);
    if (!ip) return;
    this.byPod.delete(uid);
    this.used.delete(Number(ip.slice(this.prefix.length)));
  }
}

const NODE_INDEX = 'simulatedNode';
const UID_INDEX = 'uid';

/** The container ID a simulated pod's container reports: fake://<pod uid>/<container>. */
export const simulatedContainerID = (podUID: string, container: string) => `fake://${podUID}/${container}`;

const key = (pod: KubeObject) => `${pod.metadata.namespace}/${pod.metadata.name}`;

export class SimulatedPods {
  private readonly queue = new RateLimitingQueue<string>({ name: 'simulated_pods' });
  private readonly informer: SharedIndexInformer<KubeObject>;
  private readonly ips = new Map<string, PodIPs>();
  private readonly pods;
  /** Pods reported Running (for tests and the log). */
  started = 0;

  constructor(
    client: Client,
    factory: SharedInformerFactory,
    private readonly nodes: Map<string, SimulatedNode>,
  ) {
    this.pods = client.resource('pods');
    for (const n of nodes.values()) this.ips.set(n.name, new PodIPs(n.config.podCIDR!.replace(/0\/24$/, '')));
    this.informer = factory.forResource<KubeObject>('pods');
    // What the nodes' kubelet APIs look pods up by.
    this.informer.addIndexers({
      [NODE_INDEX]: (pod) => (this.nodes.has(pod.spec?.nodeName) ? [pod.spec.nodeName] : []),
      [UID_INDEX]: (pod) => (this.nodes.has(pod.spec?.nodeName) ? [pod.metadata.uid!] : []),
    });
    this.informer.addEventHandler({
      onAdd: (pod) => this.changed(pod),
      onUpdate: (_old, pod) => this.changed(pod),
      onDelete: (obj) => {
        const pod = unwrapTombstone(obj);
        this.ips.get(pod.spec?.nodeName)?.release(pod.metadata.uid!);
      },
    });
  }

  /** The pods bound to a simulated node. */
  onNode(node: string): KubeObject[] {
    return this.informer.indexer.byIndex(NODE_INDEX, node);
  }

  /** A pod of a simulated node by its uid. */
  byUID(uid: string): KubeObject | undefined {
    return this.informer.indexer.byIndex(UID_INDEX, uid)[0];
  }

  private changed(pod: KubeObject): void {
    if (this.nodes.has(pod.spec?.nodeName)) this.queue.add(key(pod));
  }

  run(signal: AbortSignal, workers = 16): Promise<void> {
    return (async () => {
      if (!(await this.informer.whenSynced(signal))) return;
      await runWorkers(this.queue, (k) => this.sync(k), {
        workers,
        signal,
        onError: (k, err) => log.v(2)?.info('pod sync failed, requeued', { pod: k, err: String(err) }),
      });
    })();
  }

  private async sync(k: string): Promise<void> {
    const pod = this.informer.indexer.getByKey(k);
    if (!pod) return;
    const node = this.nodes.get(pod.spec?.nodeName);
    if (!node) return;
    const ns = this.pods.namespace(pod.metadata.namespace!);
    if (pod.metadata.deletionTimestamp) {
      try {
        await ns.delete(pod.metadata.name!, {
          gracePeriodSeconds: 0,
          preconditions: { uid: pod.metadata.uid },
        });
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) throw err;
      }
      this.ips.get(node.name)?.release(pod.metadata.uid!);
      return;
    }
    if (this.isRunning(pod)) {
      // Running before this process started (a restart): its address stays taken.
      this.ips.get(node.name)!.assign(pod.metadata.uid!, pod.status!.podIP);
      return;
    }
    const status = this.runningStatus(pod, node);
    try {
      await ns.patch(pod.metadata.name!, { status }, 'strategic', { subresource: 'status' });
      this.started++;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private isRunning(pod: KubeObject): boolean {
    const s = pod.status ?? {};
    return (
      s.phase === 'Running' &&
      !!s.podIP &&
      (s.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')
    );
  }

  /** What a kubelet reports for a pod whose containers all started. */
  private runningStatus(pod: KubeObject, node: SimulatedNode): Record<string, unknown> {
    const now = rfc3339(Date.now());
    const ip = this.ips.get(node.name)!.assign(pod.metadata.uid!, pod.status?.podIP);
    const hostIP = node.config.nodeIPs[0] ?? '127.0.0.1';
    const started = pod.status?.startTime ?? now;
    const condition = (type: string) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: now,
    });
    const id = (name: string) => simulatedContainerID(pod.metadata.uid!, name);
    return {
      phase: 'Running',
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP: ip,
      podIPs: [{ ip }],
      startTime: started,
      // As the kubelet's generateAPIPodStatus: PodScheduled too (a pod created with spec.nodeName has none).
      conditions: [
        'PodReadyToStartContainers',
        'Initialized',
        'ContainersReady',
        'Ready',
        'PodScheduled',
      ].map(condition),
      ...(pod.spec?.initContainers?.length
        ? {
            initContainerStatuses: pod.spec.initContainers.map((c: any) => ({
              name: c.name,
              image: c.image,
              imageID: c.image,
              containerID: id(c.name),
              ready: true,
              restartCount: 0,
              state: {
                terminated: {
                  exitCode: 0,
                  reason: 'Completed',
                  startedAt: now,
                  finishedAt: now,
                  containerID: id(c.name),
                },
              },
            })),
          }
        : {}),
      containerStatuses: (pod.spec?.containers ?? []).map((c: any) => ({
        name: c.name,
        image: c.image,
        imageID: c.image,
        containerID: id(c.name),
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: now } },
      })),
    };
  }
}
